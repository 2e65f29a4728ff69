// The fabric a sweep runs over: which leaf switch each member's NIC of each
// rail is cabled to, and which spines the leaves of a rail share. Schema
// "fabcheck.fabric/v1", YAML or JSON:
//
//   schema: fabcheck.fabric/v1
//   rails: 2
//   spines:                       # optional, per rail: every leaf of the rail links to each
//     - [spine-r0-00, spine-r0-01]
//     - [{name: spine-r1-00, addresses: [10.1.0.1]}, spine-r1-01]
//   cores:                        # optional, per rail (three tiers): every spine links to each
//     - [core-r0-00, {name: core-r0-01, addresses: [10.0.200.1]}]
//     - [core-r1-00, core-r1-01]
//   members:
//     - name: n0000
//       address: 10.0.0.1         # optional: tells apart two members with one hostname
//       leaves: [leaf-r0-00, leaf-r1-00]
//     - {name: n0001, leaf: leaf-00, rack: r01}   # one leaf for every rail; rack optional
//
// A member with `leaf:` has the same leaf on every rail (a fabric that is not
// rail-optimised). `rack:` is optional; the ladder records it (the report
// groups baselines by rack), and without it a member whose rails share one
// leaf is taken to stand in that leaf's rack (a top-of-rack switch). The sweep plans by leaves and judges uplinks by leaf and
// spine; the file is data, so a user can write it by hand. A spine's
// `addresses` are those it answers TTL-expired probes from (its interface or
// loopback addresses): with them the sweep maps each flow's traced path to
// the spine it crossed; a core's `addresses` likewise map the third hop of a
// flow between pods to its core (and the fourth to the far pod's spine).
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace fabcheck::fabric {

inline constexpr std::string_view kFabricSchema = "fabcheck.fabric/v1";

struct Member {
  std::string name;
  std::string address;              // optional
  std::vector<std::string> leaves;  // one per rail
  std::string rack;                 // optional: the rack it stands in (ladder records it)
};

struct Fabric {
  int rails = 1;
  std::vector<Member> members;
  std::vector<std::vector<std::string>> spines;  // per rail; empty when unknown
  // Per rail, per spine (parallel to spines): the router addresses of each
  // spine; empty when no spine lists any.
  std::vector<std::vector<std::vector<std::string>>> spine_addresses;
  // Per rail: the core (super-spine) switches above the spines of a
  // three-tier Clos, every spine linked to each; empty for two tiers.
  std::vector<std::vector<std::string>> cores;
  // Per rail, per core (parallel to cores): its router addresses; empty when
  // no core lists any.
  std::vector<std::vector<std::vector<std::string>>> core_addresses;
  std::string source;                            // where it came from ("file x.yaml", "ibnetdiscover")
};

// Parses a fabcheck.fabric/v1 document (YAML, so JSON too). Errors name the
// object (members[3].leaves) and say what to write instead.
Result<Fabric> ParseFabric(std::string_view text, std::string_view origin);
Result<Fabric> LoadFabric(const std::string& path);

// The invariants every fabric keeps: at least one member, names non-empty,
// one leaf per rail per member, no member twice (name and address), spines
// per rail when given. Importers end with it too.
Status ValidateFabric(const Fabric& fabric);

nlohmann::json ToJson(const Fabric& fabric);
std::string ToYaml(const Fabric& fabric);

// Dense indexes for planning and judging: leaf ids per rail, members per leaf.
class FabricIndex {
 public:
  explicit FabricIndex(const Fabric& fabric);
  int rails() const { return rails_; }
  int members() const { return static_cast<int>(leaf_of_.size()); }
  int leaf(int member, int rail) const { return leaf_of_[member][rail]; }
  int leaf_count(int rail) const { return static_cast<int>(leaf_names_[rail].size()); }
  const std::string& leaf_name(int rail, int leaf) const { return leaf_names_[rail][leaf]; }
  const std::vector<int>& leaf_members(int rail, int leaf) const { return leaf_members_[rail][leaf]; }
  const std::vector<std::string>& spines(int rail) const { return spines_[rail]; }
  const std::vector<std::string>& cores(int rail) const { return cores_[rail]; }
  // The member with this name (or address); -1 when none or ambiguous.
  int Find(std::string_view name_or_address) const;
  // The spine of `rail` that answers from this router address; -1 when none.
  int SpineOfRouter(int rail, std::string_view address) const;
  // The core of `rail` that answers from this router address; -1 when none.
  int CoreOfRouter(int rail, std::string_view address) const;
  // Whether the file gives router addresses for this rail's spines or cores.
  bool knows_routers(int rail) const {
    return rail >= 0 && rail < rails_ && (!spine_of_router_[rail].empty() || !core_of_router_[rail].empty());
  }
  bool knows_core_routers(int rail) const { return rail >= 0 && rail < rails_ && !core_of_router_[rail].empty(); }
  // What a flow's traced hops (hops[t-1] answered TTL t; "" none) say it
  // crossed: the first spine, then a core, then the spine of the far pod
  // (-1 when not seen; leaf routers are not listed and are passed over). A
  // core whose far spine did not answer leaves the way down unknown: the
  // path is then all -1, so a flow is never blamed on an uplink it may not
  // have crossed.
  struct RouterPath {
    int spine = -1, core = -1, spine_down = -1;
  };
  RouterPath PathOfHops(int rail, const std::vector<std::string>& hops) const;

 private:
  int rails_ = 1;
  std::vector<std::vector<int>> leaf_of_;
  std::vector<std::vector<std::string>> leaf_names_;
  std::vector<std::vector<std::vector<int>>> leaf_members_;
  std::vector<std::vector<std::string>> spines_, cores_;
  std::map<std::string, int, std::less<>> by_key_;
  std::vector<std::map<std::string, int, std::less<>>> spine_of_router_, core_of_router_;
};

}  // namespace fabcheck::fabric
