// The simulated fabric: per rail a two-tier Clos, leaves of `nodes_per_leaf`
// members, `spines` spines, every leaf linked to every spine. A leaf's
// uplinks carry nodes_per_leaf x NIC rate / (spines x oversubscription), so
// 1.0 is non-blocking.
//
// With pods > 1, three tiers: the leaves split into `pods` pods (consecutive
// leaves), each pod with its own `spines` spines (every leaf of the pod linked
// to each), and `cores` core switches per rail above them, every spine linked
// to every core. A spine's core links carry what its leaves can send it
// (leaves per pod x uplink rate / cores: non-blocking above the leaves). ECMP
// at both levels: the leaf hashes a flow onto a spine of its pod, the spine
// onto a core, the core onto a spine of the far pod.
//
// Element names follow one scheme, so that anyone can write a fault file:
// member n0000, NIC n0000/r3, leaf leaf-r3-07, spine spine-r3-12 (numbered
// across pods: pod p's spines are p x spines ...), core core-r3-02, NIC-leaf
// link n0000/r3~leaf-r3-00, leaf-spine link leaf-r3-07~spine-r3-12,
// spine-core link spine-r3-12~core-r3-02.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "fabric/fabric.h"

namespace fabcheck::sim {

struct ClosOptions {
  int nodes = 128;
  int rails = 8;
  int nodes_per_leaf = 32;
  int spines = 8;
  double oversubscription = 1.0;
  double nic_gbps = 400;
  int mtu = 9000;
  int pods = 1;    // > 1: three tiers, `spines` per pod
  int cores = 0;   // three tiers: core switches per rail
};

// An element named by the scheme above; indexes are -1 where they do not apply.
struct Element {
  enum class Kind { kMember, kNic, kLeaf, kSpine, kCable, kUplink, kCore, kCoreLink };
  Kind kind = Kind::kMember;
  int member = -1, rail = -1, leaf = -1, spine = -1, core = -1;
};

class Clos {
 public:
  static Result<Clos> Make(const ClosOptions& options);

  const ClosOptions& options() const { return o_; }
  int leaves() const { return leaves_; }
  int leaf_of(int member) const { return member / o_.nodes_per_leaf; }
  double uplink_gbps() const;
  bool three_tier() const { return o_.pods > 1; }
  int pod_of_leaf(int leaf) const { return leaf / leaves_per_pod_; }
  int total_spines() const { return o_.spines * o_.pods; }  // per rail, every pod
  double core_link_gbps() const;

  std::string Member(int m) const;
  std::string Nic(int m, int rail) const;
  std::string Leaf(int rail, int leaf) const;
  std::string Spine(int rail, int spine) const;
  std::string Cable(int m, int rail) const;
  std::string Uplink(int rail, int leaf, int spine) const;
  std::string Core(int rail, int core) const;
  std::string CoreLink(int rail, int spine, int core) const;
  // Parses a name; the error says which part is wrong and shows the scheme.
  Result<Element> Parse(std::string_view name) const;

  fabric::Fabric ToFabric() const;

  // ECMP: the spine a flow takes, from its 5-tuple (here: ends, rail, source
  // port): a spine of a's pod (rail-global number).
  int SpineFor(int a, int b, int rail, uint32_t port) const;
  // Three tiers, a flow between pods: the core its spine hashes it onto, and
  // the spine of b's pod the core hashes it onto (rail-global number).
  int CoreFor(int a, int b, int rail, uint32_t port) const;
  int FarSpineFor(int a, int b, int rail, uint32_t port) const;

 private:
  ClosOptions o_;
  int leaves_ = 0;
  int leaves_per_pod_ = 1;
  int width_ = 4;  // digits of member numbers
};

}  // namespace fabcheck::sim
