// The baseline groups of rungs L3 and L4 (model::BaselineGroup): which
// members represent each of the seeds' scopes, chosen from the members that
// passed the rung, and why a scope cannot be formed on this cluster. Pure:
// members in, groups out (rung_baselines.cc runs them).
//
// Cost is bounded by design: one representative pair (or one member) per
// scope, and a group whose test is another group's (the same members, rails
// and settings) names it in `same_as` instead of running again.
#pragma once

#include <string>
#include <vector>

#include "fabcheck/model/ladder.h"

namespace fabcheck::ladder {

inline constexpr const char* kScopeSingleNode = "single-node";
inline constexpr const char* kScopeTwoNodes = "two-nodes";
inline constexpr const char* kScopeSameRack = "same-rack";
inline constexpr const char* kScopeCrossRack = "cross-rack";
inline constexpr const char* kScopeOneRail = "one-rail";
inline constexpr const char* kScopeAllRails = "all-rails";
inline constexpr const char* kScopeGdrOn = "gdr-on";
inline constexpr const char* kScopeGdrOff = "gdr-off";

// What NCCL is told for the GPUDirect-off side of the A/B: GPUDirect RDMA
// only when GPU and NIC are the same device, i.e. never (NCCL's
// NCCL_NET_GDR_LEVEL); the NIC reads and writes host memory instead.
inline constexpr const char* kGdrOffLevel = "LOC";

// An L4 group's job measures the rung's --coll-ops and --coll-sizes with at
// most this many timed and warm-up iterations per size (a baseline, not a
// soak); each job also stops at --coll-timeout or the groups' time cap.
inline constexpr int kBaselineCollIters = 5;
inline constexpr int kBaselineCollWarmup = 2;

// A member that passed the rung, as the groups need it.
struct BaselineCandidate {
  std::string id;
  std::string rack;               // "" when no topology says
  int rails = 1;                  // L3: its data-plane rails; L4: its RDMA devices
  std::vector<std::string> hcas;  // L4: its RDMA devices in rail order (NCCL_IB_HCA of the one-rail group)
};

enum class BaselineRung { kPerf, kColl };

// The groups of one rung, in a fixed order: single-node, two-nodes,
// same-rack, cross-rack, one-rail, all-rails, and for L4 gdr-on, gdr-off.
// `candidates` in member order (the first ones represent a scope); `rung`
// names the rung in reasons ("L3"). Groups come back with verdict not_run
// and no figures: applicable ones are to be run (unless same_as is set);
// inapplicable ones carry the reason; a rack-dependent group whose racks
// are unknown stays applicable with the reason and the fix (--topology), so
// a report says "unknown", not "not applicable".
std::vector<model::BaselineGroup> FormBaselineGroups(BaselineRung rung, const std::vector<BaselineCandidate>& candidates,
                                                     const std::string& rung_id);

// NCCL_IB_HCA of the one-rail group on member `m`: its rail-0 device, by
// exact name ("=mlx5_0"; "" when its devices are unknown).
std::string OneRailHca(const BaselineCandidate& m);

// True when a group is to be measured: applicable, not another's measurement, no reason set yet.
bool ToMeasure(const model::BaselineGroup& group);

}  // namespace fabcheck::ladder
