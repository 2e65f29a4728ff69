#include "sweep/schedule.h"

#include <fmt/format.h>

#include <algorithm>
#include <random>
#include <unordered_set>

namespace fabcheck::sweep {
namespace {

uint64_t PairKey(int a, int b) {
  if (a > b) std::swap(a, b);
  return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
}

}  // namespace

std::string_view PatternName(Pattern pattern) {
  switch (pattern) {
    case Pattern::kPairwise: return "pairwise";
    case Pattern::kRing: return "ring";
    case Pattern::kRandom: return "k-random";
    case Pattern::kTopology: return "topology";
    case Pattern::kAdaptive: return "adaptive";
  }
  return "pairwise";
}

Result<Pattern> ParsePattern(std::string_view name) {
  for (Pattern p : {Pattern::kPairwise, Pattern::kRing, Pattern::kRandom, Pattern::kTopology, Pattern::kAdaptive}) {
    if (PatternName(p) == name) return p;
  }
  if (name == "random") return Pattern::kRandom;
  return InvalidArgumentError(
      fmt::format("unknown sweep strategy '{}' (use one of: pairwise, ring, k-random, topology, adaptive)", name));
}

size_t Schedule::pair_count() const {
  size_t count = 0;
  for (const auto& r : rounds) count += r.size();
  return count;
}

Schedule PairwiseSchedule(int nodes) {
  Schedule s{Pattern::kPairwise, nodes, {}};
  if (nodes < 2) return s;
  // Circle method: with m even, node m-1 stays put and the others rotate one
  // step per round. With n odd, a phantom node n makes m even; whoever meets
  // the phantom sits the round out.
  const int m = nodes % 2 == 0 ? nodes : nodes + 1;
  const int ring = m - 1;
  s.rounds.reserve(static_cast<size_t>(ring));
  for (int r = 0; r < ring; ++r) {
    Round round;
    round.reserve(static_cast<size_t>(m / 2));
    if (m - 1 < nodes) round.push_back({r, m - 1});
    for (int k = 1; k < m / 2; ++k) {
      int a = (r + k) % ring;
      int b = (r - k + ring) % ring;
      round.push_back({std::min(a, b), std::max(a, b)});
    }
    s.rounds.push_back(std::move(round));
  }
  return s;
}

Schedule RingSchedule(int nodes) {
  Schedule s{Pattern::kRing, nodes, {}};
  if (nodes < 2) return s;
  if (nodes == 2) {
    s.rounds.push_back({{0, 1}});
    return s;
  }
  // Edges i <-> i+1: even-numbered edges, then odd ones; with n odd the
  // closing edge (n-1 <-> 0) touches node 0 twice, so it gets its own round.
  Round even, odd, closing;
  for (int i = 0; i < nodes; ++i) {
    int j = (i + 1) % nodes;
    Pair p{std::min(i, j), std::max(i, j)};
    if (nodes % 2 == 1 && i == nodes - 1) {
      closing.push_back(p);
    } else if (i % 2 == 0) {
      even.push_back(p);
    } else {
      odd.push_back(p);
    }
  }
  for (Round* r : {&even, &odd, &closing}) {
    if (!r->empty()) s.rounds.push_back(std::move(*r));
  }
  return s;
}

Result<Schedule> RandomSchedule(int nodes, int k, uint64_t seed) {
  if (nodes < 2) return Schedule{Pattern::kRandom, nodes, {}};
  if (k < 1 || k > nodes - 1) {
    return InvalidArgumentError(fmt::format(
        "--peers {} is out of range for {} nodes (use 1..{}; or --pattern pairwise for all pairs)", k, nodes,
        nodes - 1));
  }
  std::mt19937_64 rng(seed);
  std::unordered_set<uint64_t> chosen;
  std::vector<Pair> pairs;
  std::vector<int> degree(static_cast<size_t>(nodes), 0);
  // Each node draws peers until it has k; a peer drawn by someone else counts.
  std::vector<int> candidates;
  for (int i = 0; i < nodes; ++i) {
    if (degree[static_cast<size_t>(i)] >= k) continue;
    candidates.clear();
    for (int j = 0; j < nodes; ++j) {
      if (j != i && !chosen.count(PairKey(i, j))) candidates.push_back(j);
    }
    std::shuffle(candidates.begin(), candidates.end(), rng);
    // Prefer peers that still need partners, so degrees stay near k.
    std::stable_partition(candidates.begin(), candidates.end(),
                          [&](int j) { return degree[static_cast<size_t>(j)] < k; });
    for (int j : candidates) {
      if (degree[static_cast<size_t>(i)] >= k) break;
      chosen.insert(PairKey(i, j));
      pairs.push_back({std::min(i, j), std::max(i, j)});
      ++degree[static_cast<size_t>(i)];
      ++degree[static_cast<size_t>(j)];
    }
  }
  // Greedy edge colouring: put each pair into the first round where both ends
  // are free (at most 2*maxdegree - 1 rounds).
  Schedule s{Pattern::kRandom, nodes, {}};
  std::vector<std::vector<char>> busy;
  for (const Pair& p : pairs) {
    size_t r = 0;
    for (; r < s.rounds.size(); ++r) {
      if (!busy[r][static_cast<size_t>(p.a)] && !busy[r][static_cast<size_t>(p.b)]) break;
    }
    if (r == s.rounds.size()) {
      s.rounds.emplace_back();
      busy.emplace_back(static_cast<size_t>(nodes), 0);
    }
    s.rounds[r].push_back(p);
    busy[r][static_cast<size_t>(p.a)] = busy[r][static_cast<size_t>(p.b)] = 1;
  }
  return s;
}

Result<Schedule> MakeSchedule(Pattern pattern, int nodes, int k, uint64_t seed) {
  if (nodes < 2) {
    return InvalidArgumentError(fmt::format("a sweep needs at least 2 members, got {}", nodes));
  }
  switch (pattern) {
    case Pattern::kPairwise: return PairwiseSchedule(nodes);
    case Pattern::kRing: return RingSchedule(nodes);
    case Pattern::kRandom: return RandomSchedule(nodes, k, seed);
    case Pattern::kTopology:
    case Pattern::kAdaptive:
      return InvalidArgumentError(fmt::format("the {} strategy plans by leaf: give the fabric (--topology FILE)",
                                              PatternName(pattern)));
  }
  return InvalidArgumentError("unknown pattern");
}

Status ValidateSchedule(const Schedule& schedule) {
  // One bit per ordered (min, max) pair: 2 MiB for 4,096 nodes, no hashing.
  const size_t n = static_cast<size_t>(std::max(schedule.nodes, 0));
  std::vector<bool> seen(n * n, false);
  std::vector<int> last_round(static_cast<size_t>(std::max(schedule.nodes, 0)), -1);
  for (size_t r = 0; r < schedule.rounds.size(); ++r) {
    for (const Pair& p : schedule.rounds[r]) {
      if (p.a < 0 || p.b < 0 || p.a >= schedule.nodes || p.b >= schedule.nodes) {
        return InternalError(fmt::format("round {}: pair ({}, {}) is outside 0..{}", r, p.a, p.b, schedule.nodes - 1));
      }
      if (p.a == p.b) return InternalError(fmt::format("round {}: node {} paired with itself", r, p.a));
      for (int node : {p.a, p.b}) {
        if (last_round[static_cast<size_t>(node)] == static_cast<int>(r)) {
          return InternalError(fmt::format("round {}: node {} is in two pairs", r, node));
        }
        last_round[static_cast<size_t>(node)] = static_cast<int>(r);
      }
      const size_t key = static_cast<size_t>(std::min(p.a, p.b)) * n + static_cast<size_t>(std::max(p.a, p.b));
      if (seen[key]) return InternalError(fmt::format("round {}: pair ({}, {}) was already tested", r, p.a, p.b));
      seen[key] = true;
    }
  }
  return Status::Ok();
}

}  // namespace fabcheck::sweep
