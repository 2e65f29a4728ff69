// The simulated fabric: per rail a two-tier Clos, leaves of `nodes_per_leaf`
// members, `spines` spines, every leaf linked to every spine. A leaf's
// uplinks carry nodes_per_leaf x NIC rate / (spines x oversubscription), so
// 1.0 is non-blocking. Element names follow one scheme, so that anyone can
// write a fault file: member n0000, NIC n0000/r3, leaf leaf-r3-07, spine
// spine-r3-12, NIC-leaf link n0000/r3~leaf-r3-00, leaf-spine link
// leaf-r3-07~spine-r3-12.
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
};

// An element named by the scheme above; indexes are -1 where they do not apply.
struct Element {
  enum class Kind { kMember, kNic, kLeaf, kSpine, kCable, kUplink };
  Kind kind = Kind::kMember;
  int member = -1, rail = -1, leaf = -1, spine = -1;
};

class Clos {
 public:
  static Result<Clos> Make(const ClosOptions& options);

  const ClosOptions& options() const { return o_; }
  int leaves() const { return leaves_; }
  int leaf_of(int member) const { return member / o_.nodes_per_leaf; }
  double uplink_gbps() const;

  std::string Member(int m) const;
  std::string Nic(int m, int rail) const;
  std::string Leaf(int rail, int leaf) const;
  std::string Spine(int rail, int spine) const;
  std::string Cable(int m, int rail) const;
  std::string Uplink(int rail, int leaf, int spine) const;
  // Parses a name; the error says which part is wrong and shows the scheme.
  Result<Element> Parse(std::string_view name) const;

  fabric::Fabric ToFabric() const;

  // ECMP: the spine a flow takes, from its 5-tuple (here: ends, rail, source port).
  int SpineFor(int a, int b, int rail, uint32_t port) const;

 private:
  ClosOptions o_;
  int leaves_ = 0;
  int width_ = 4;  // digits of member numbers
};

}  // namespace fabcheck::sim
