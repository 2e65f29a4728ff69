#include "ladder/baselines.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "base/strings.h"

namespace fabcheck::ladder {
namespace {

using model::BaselineGroup;

BaselineGroup NewGroup(const char* scope) {
  BaselineGroup g;
  g.scope = scope;
  return g;
}

BaselineGroup NotApplicable(const char* scope, std::string reason) {
  BaselineGroup g = NewGroup(scope);
  g.applicable = false;
  g.reason = std::move(reason);
  return g;
}

// RacksInOrder in order of first appearance, each with its members.
std::vector<std::pair<std::string, std::vector<const BaselineCandidate*>>> RacksInOrder(
    const std::vector<BaselineCandidate>& c) {
  std::vector<std::pair<std::string, std::vector<const BaselineCandidate*>>> racks;
  for (const auto& m : c) {
    if (m.rack.empty()) continue;
    auto it = std::find_if(racks.begin(), racks.end(), [&](const auto& r) { return r.first == m.rack; });
    if (it == racks.end()) racks.push_back({m.rack, {&m}});
    else it->second.push_back(&m);
  }
  return racks;
}

std::vector<std::string> UnplacedMembers(const std::vector<BaselineCandidate>& c) {
  std::vector<std::string> out;
  for (const auto& m : c) {
    if (m.rack.empty()) out.push_back(m.id);
  }
  return out;
}

// A rack-dependent group that cannot be formed: not applicable when every
// member's rack is known (the cluster's shape rules it out), else unknown.
BaselineGroup RackGroupMissing(const char* scope, const std::vector<BaselineCandidate>& c, std::string shape_reason) {
  auto unplaced = UnplacedMembers(c);
  if (unplaced.empty()) return NotApplicable(scope, std::move(shape_reason));
  BaselineGroup g = NewGroup(scope);
  g.reason = unplaced.size() == c.size()
                 ? "no rack is recorded for the members: give `fabcheck ladder --topology FILE` (docs/fabric.md)"
                 : fmt::format("no rack is recorded for {}: add them to the --topology file (docs/fabric.md)",
                               Join(unplaced, ", "));
  return g;
}

std::string RackList(const std::vector<std::pair<std::string, std::vector<const BaselineCandidate*>>>& racks) {
  std::vector<std::string> parts;
  for (const auto& [rack, members] : racks) {
    std::vector<std::string> ids;
    for (const auto* m : members) ids.push_back(m->id);
    parts.push_back(fmt::format("{} ({})", rack, Join(ids, ", ")));
  }
  return Join(parts, "; ");
}

int MinRails(const BaselineCandidate& a, const BaselineCandidate& b) { return std::max(1, std::min(a.rails, b.rails)); }

std::vector<int> RailList(int n) {
  std::vector<int> out;
  for (int r = 0; r < n; ++r) out.push_back(r);
  return out;
}

// The same test as an earlier group: the same members, rails and settings.
void MarkSameAs(std::vector<BaselineGroup>& groups) {
  for (size_t i = 0; i < groups.size(); ++i) {
    auto& g = groups[i];
    if (!g.applicable || !g.reason.empty() || !g.same_as.empty()) continue;
    for (size_t k = 0; k < i; ++k) {
      const auto& e = groups[k];
      if (!e.applicable || !e.reason.empty() || !e.same_as.empty()) continue;
      if (e.members == g.members && e.rails == g.rails && e.settings == g.settings) {
        g.same_as = e.scope;
        break;
      }
    }
  }
}

}  // namespace

std::string OneRailHca(const BaselineCandidate& m) { return m.hcas.empty() ? "" : "=" + m.hcas.front(); }

bool ToMeasure(const model::BaselineGroup& g) { return g.applicable && g.same_as.empty() && g.reason.empty(); }

std::vector<BaselineGroup> FormBaselineGroups(BaselineRung rung, const std::vector<BaselineCandidate>& c,
                                              const std::string& rung_id) {
  const bool coll = rung == BaselineRung::kColl;
  std::vector<BaselineGroup> groups;
  const std::string passed = fmt::format("that passed {}", rung_id);
  if (c.empty()) {
    for (const char* scope : {kScopeSingleNode, kScopeTwoNodes, kScopeSameRack, kScopeCrossRack, kScopeOneRail,
                              kScopeAllRails}) {
      groups.push_back(NotApplicable(scope, "no member " + passed));
    }
    if (coll) {
      groups.push_back(NotApplicable(kScopeGdrOn, "no member " + passed));
      groups.push_back(NotApplicable(kScopeGdrOff, "no member " + passed));
    }
    return groups;
  }

  // Single node: L3 between two of its NICs (rail 0 -> rail 1), or its one
  // NIC to itself; L4 all of its GPUs (NVLink / PCIe inside the node).
  {
    BaselineGroup g = NewGroup(kScopeSingleNode);
    g.members = {c[0].id};
    if (!coll) g.rails = c[0].rails >= 2 ? std::vector<int>{0, 1} : std::vector<int>{0, 0};
    groups.push_back(std::move(g));
  }
  const std::string one_member = fmt::format("only {} {}: a pair needs two members", c[0].id, passed);
  const bool pair = c.size() >= 2;
  // Two nodes: the first two members.
  if (pair) {
    BaselineGroup g = NewGroup(kScopeTwoNodes);
    g.members = {c[0].id, c[1].id};
    if (!coll) g.rails = {0};
    groups.push_back(std::move(g));
  } else {
    groups.push_back(NotApplicable(kScopeTwoNodes, one_member));
  }
  // Same rack: the first rack with two members; cross rack: the first
  // members of the first two racks.
  const auto racks = RacksInOrder(c);
  if (!pair) {
    groups.push_back(NotApplicable(kScopeSameRack, one_member));
    groups.push_back(NotApplicable(kScopeCrossRack, one_member));
  } else {
    auto two = std::find_if(racks.begin(), racks.end(), [](const auto& r) { return r.second.size() >= 2; });
    if (two != racks.end()) {
      BaselineGroup g = NewGroup(kScopeSameRack);
      g.members = {two->second[0]->id, two->second[1]->id};
      if (!coll) g.rails = {0};
      groups.push_back(std::move(g));
    } else {
      groups.push_back(RackGroupMissing(kScopeSameRack, c,
                                        fmt::format("no rack holds two members {}: {}", passed, RackList(racks))));
    }
    if (racks.size() >= 2) {
      BaselineGroup g = NewGroup(kScopeCrossRack);
      g.members = {racks[0].second[0]->id, racks[1].second[0]->id};
      if (!coll) g.rails = {0};
      groups.push_back(std::move(g));
    } else {
      groups.push_back(RackGroupMissing(
          kScopeCrossRack, c,
          racks.empty() ? "no rack recorded"
                        : fmt::format("every member {} sits in rack {}", passed, racks[0].first)));
    }
  }
  // RailList: the two-nodes pair on rail 0 alone, and on every rail at once.
  if (!pair) {
    groups.push_back(NotApplicable(kScopeOneRail, one_member));
    groups.push_back(NotApplicable(kScopeAllRails, one_member));
  } else {
    const int rails = MinRails(c[0], c[1]);
    BaselineGroup one = NewGroup(kScopeOneRail);
    one.members = {c[0].id, c[1].id};
    if (!coll) {
      one.rails = {0};
    } else if (rails >= 2) {
      // Each member's ranks see only its rail-0 device ('=' : that name exactly).
      if (!c[0].hcas.empty() && !c[1].hcas.empty()) {
        for (const auto* m : {&c[0], &c[1]}) one.settings.push_back(fmt::format("NCCL_IB_HCA={} on {}", OneRailHca(*m), m->id));
      } else {
        one = NotApplicable(kScopeOneRail, "the RDMA devices of the pair are unknown (no inventory)");
      }
    }
    groups.push_back(std::move(one));
    if (rails >= 2) {
      BaselineGroup all = NewGroup(kScopeAllRails);
      all.members = {c[0].id, c[1].id};
      if (!coll) all.rails = RailList(rails);
      groups.push_back(std::move(all));
    } else {
      groups.push_back(NotApplicable(
          kScopeAllRails, coll ? fmt::format("{} and {} have one RDMA device each: one rail is all rails", c[0].id,
                                             c[1].id)
                               : fmt::format("{} and {} have one data-plane rail each: one rail is all rails",
                                             c[0].id, c[1].id)));
    }
  }
  // GPUDirect RDMA on/off (L4): the two-nodes job as NCCL picks, and with
  // NCCL_NET_GDR_LEVEL=LOC. Inside one node NCCL does not use the network.
  if (coll) {
    if (pair) {
      BaselineGroup on = NewGroup(kScopeGdrOn);
      on.members = {c[0].id, c[1].id};
      groups.push_back(std::move(on));
      BaselineGroup off = NewGroup(kScopeGdrOff);
      off.members = {c[0].id, c[1].id};
      off.settings = {std::string("NCCL_NET_GDR_LEVEL=") + kGdrOffLevel};
      groups.push_back(std::move(off));
    } else {
      groups.push_back(NotApplicable(kScopeGdrOn, one_member + " (GPUDirect RDMA is between nodes)"));
      groups.push_back(NotApplicable(kScopeGdrOff, one_member + " (GPUDirect RDMA is between nodes)"));
    }
  }
  MarkSameAs(groups);
  return groups;
}

}  // namespace fabcheck::ladder
