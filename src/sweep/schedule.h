// Which pairs a sweep tests, and in which round.
//
// A round is a set of disjoint pairs: each node is in at most one pair per
// round, so the pairs of a round run at the same time without sharing a NIC.
// Both directions of a pair are measured inside its slot, so a pair is listed
// once, unordered.
//   pairwise: every pair exactly once, by the circle method (round-robin
//             tournament): n - 1 rounds for even n, n rounds for odd n (each
//             node sits out one round).
//   ring:     i <-> i+1 (mod n): 2 rounds for even n, 3 for odd n.
//   k-random: every node gets at least k distinct random peers (seeded, so a
//             sweep can be repeated), packed into rounds greedily.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace fabcheck::sweep {

// kTopology and kAdaptive need a fabric (planner.h plans them).
enum class Pattern { kPairwise, kRing, kRandom, kTopology, kAdaptive };
std::string_view PatternName(Pattern pattern);  // "pairwise", "ring", "k-random", "topology", "adaptive"
Result<Pattern> ParsePattern(std::string_view name);

struct Pair {
  int a = 0;
  int b = 0;
  friend bool operator==(const Pair&, const Pair&) = default;
};
using Round = std::vector<Pair>;

struct Schedule {
  Pattern pattern = Pattern::kPairwise;
  int nodes = 0;
  std::vector<Round> rounds;
  size_t pair_count() const;
};

Schedule PairwiseSchedule(int nodes);
Schedule RingSchedule(int nodes);
// k must be in 1..nodes-1.
Result<Schedule> RandomSchedule(int nodes, int k, uint64_t seed);
Result<Schedule> MakeSchedule(Pattern pattern, int nodes, int k = 3, uint64_t seed = 1);

// Checks the invariants every schedule keeps: indexes in range, no self pair,
// no node twice in a round, no pair twice. The error names the offending round.
Status ValidateSchedule(const Schedule& schedule);

}  // namespace fabcheck::sweep
