// What the coordinator tests next. A planner hands out one round at a time
// and sees the results so far, so a static schedule (pairwise, ring,
// k-random) and an adaptive one share the same loop.
//
// With a fabric:
//   ring      members in leaf order, so most pairs share a leaf
//   topology  stage 1: every pair inside each leaf (circle method, all leaves
//             at once); stage 2: leaf against leaf (circle method over the
//             leaves), member i of one leaf with member i+t of the other, a
//             fraction `uplink_load` of each leaf at a time so ECMP collisions
//             cannot saturate an uplink and pass for a fault
//   adaptive  a cheap pass (intra_leaf_rounds inside each leaf, then each leaf against
//             its two neighbours in the leaf ring; with three tiers also against
//             the leaf half the ring away, in another pod), then only the suspects the
//             localiser returns: a suspect NIC with known-good partners on its
//             leaf, a suspect uplink with multi-flow tests from its leaf's good
//             members to other leaves (a spine-core link: to leaves of other
//             pods, with enough flows to reach every core through its spine
//             with p >= 0.9; a test slow as a whole: its sender with another
//             member of the receiver's leaf, its receiver with another of the
//             sender's, and two others between the leaves); every pair is
//             measured both ways, so the suspect direction is loaded; until
//             nothing is suspect or the budget of rounds is spent
// A test between two leaves uses `flows` flows (distinct source ports, so
// ECMP spreads them over the spines), one inside a leaf.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "fabcheck/model/sweep.h"
#include "fabric/fabric.h"
#include "sweep/localize.h"
#include "sweep/schedule.h"

namespace fabcheck::sweep {

struct PlannedPair {
  int a = 0, b = 0;
  int flows = 1;
};
struct PlannedRound {
  std::vector<PlannedPair> pairs;
  std::string stage;  // "intra-leaf", "inter-leaf", "retest", or the pattern name
  std::vector<model::SweepRetest> retests;  // "retest": each suspect re-measured and why (round left 0)
};

struct PlanOptions {
  Pattern pattern = Pattern::kPairwise;
  int peers = 3;            // k-random
  uint64_t seed = 1;
  int flows = 0;            // flows per inter-leaf test; 0: cover the rail's spines with p >= 0.9
  double uplink_load = 0.5; // topology/adaptive: share of a leaf testing across leaves at once
  int max_rounds = 100;     // adaptive: the budget
  int max_attempts = 6;     // adaptive: retests of one suspect before it is left unnamed
  int intra_leaf_rounds = 4; // adaptive: rounds of the cheap pass inside each leaf
  LocalizeOptions localize;
};

class Planner {
 public:
  virtual ~Planner() = default;
  // The next round given what the results so far add up to (null without a
  // fabric), the results of the last round, and who still answers; nullopt
  // when done.
  virtual std::optional<PlannedRound> Next(const Evidence* so_far,
                                           const std::vector<model::SweepPairResult>& last_round,
                                           const std::vector<model::SweepMember>& members) = 0;
  // Rounds known so far (an adaptive plan grows as suspects appear).
  virtual int planned() const = 0;
};

// `fabric` may be null for pairwise, ring and k-random; it is indexed like the members.
Result<std::unique_ptr<Planner>> MakePlanner(const PlanOptions& options, int members,
                                             const fabric::FabricIndex* fabric);

// The topology strategy's rounds (exposed for tests and the docs' table).
std::vector<PlannedRound> TopologyRounds(const fabric::FabricIndex& fabric, int flows, double uplink_load);

}  // namespace fabcheck::sweep
