// The strategies that need a fabric: topology's two stages, the adaptive
// cheap pass, ring in leaf order, and how many flows cover the spines.
#include "sweep/planner.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>

#include "sweep/agent_transport.h"

namespace fabcheck::sweep {
namespace {

fabric::Fabric Leaves(int n, int per_leaf, int spines) {
  fabric::Fabric f;
  for (int i = 0; i < n; ++i) f.members.push_back({"m" + std::to_string(i), "", {"leaf" + std::to_string(i / per_leaf)}});
  f.spines.emplace_back();
  for (int s = 0; s < spines; ++s) f.spines[0].push_back("spine" + std::to_string(s));
  return f;
}

void ExpectDisjoint(const std::vector<PlannedRound>& rounds) {
  for (size_t r = 0; r < rounds.size(); ++r) {
    std::set<int> seen;
    for (const auto& p : rounds[r].pairs) {
      EXPECT_NE(p.a, p.b);
      EXPECT_TRUE(seen.insert(p.a).second) << "round " << r << " member " << p.a << " twice";
      EXPECT_TRUE(seen.insert(p.b).second) << "round " << r << " member " << p.b << " twice";
    }
  }
}

TEST(Planner, TopologyIsEveryPairInsideEachLeafThenLeafAgainstLeaf) {
  fabric::Fabric f = Leaves(2048, 32, 8);
  fabric::FabricIndex index(f);
  auto rounds = TopologyRounds(index, 17, 0.5);
  ExpectDisjoint(rounds);
  // 31 rounds inside the leaves, 63 leaf-against-leaf rounds: 94, where all pairs take 2,047.
  ASSERT_EQ(rounds.size(), 94u);
  std::set<std::pair<int, int>> inside;
  for (size_t r = 0; r < 31; ++r) {
    EXPECT_EQ(rounds[r].stage, "intra-leaf");
    for (const auto& p : rounds[r].pairs) {
      EXPECT_EQ(p.a / 32, p.b / 32);
      EXPECT_EQ(p.flows, 1);
      inside.insert(std::minmax(p.a, p.b));
    }
  }
  EXPECT_EQ(inside.size(), 64u * 32 * 31 / 2);
  std::set<std::pair<int, int>> leaf_pairs;
  for (size_t r = 31; r < rounds.size(); ++r) {
    // Half of each leaf at a time: 1,024 of the 2,048 members test across leaves.
    EXPECT_EQ(rounds[r].pairs.size(), 512u);
    for (const auto& p : rounds[r].pairs) {
      EXPECT_NE(p.a / 32, p.b / 32);
      EXPECT_EQ(p.flows, 17);
      leaf_pairs.insert(std::minmax(p.a / 32, p.b / 32));
    }
  }
  EXPECT_EQ(leaf_pairs.size(), 64u * 63 / 2);  // every leaf against every other
}

TEST(Planner, RingWithAFabricRunsInLeafOrder) {
  fabric::Fabric f = Leaves(8, 4, 2);
  std::swap(f.members[1].leaves, f.members[4].leaves);  // members 0,2,3,4 on leaf0; 1,5,6,7 on leaf1
  fabric::FabricIndex index(f);
  PlanOptions o;
  o.pattern = Pattern::kRing;
  o.flows = 5;
  auto planner = MakePlanner(o, 8, &index);
  ASSERT_TRUE(planner.ok()) << planner.status().message();
  std::vector<model::SweepMember> members(8);
  int across = 0, pairs = 0;
  while (auto r = (*planner)->Next(nullptr, {}, members)) {
    for (const auto& p : r->pairs) {
      ++pairs;
      bool differ = index.leaf(p.a, 0) != index.leaf(p.b, 0);
      across += differ;
      EXPECT_EQ(p.flows, differ ? 5 : 1);
    }
  }
  EXPECT_EQ(pairs, 8);
  EXPECT_EQ(across, 2);  // the ring crosses between the two leaves twice
}

TEST(Planner, TopologyAndAdaptiveNeedAFabric) {
  for (Pattern p : {Pattern::kTopology, Pattern::kAdaptive}) {
    PlanOptions o;
    o.pattern = p;
    auto planner = MakePlanner(o, 8, nullptr);
    ASSERT_FALSE(planner.ok());
    EXPECT_NE(planner.status().message().find("--topology"), std::string::npos);
  }
}

TEST(Planner, AdaptiveCheapPassThenStopsWhenNothingIsSuspect) {
  fabric::Fabric f = Leaves(64, 16, 4);
  fabric::FabricIndex index(f);
  PlanOptions o;
  o.pattern = Pattern::kAdaptive;
  auto planner = MakePlanner(o, 64, &index);
  ASSERT_TRUE(planner.ok());
  std::vector<model::SweepMember> members(64);
  Evidence evidence(index);
  std::vector<model::SweepPairResult> results;
  std::vector<PlannedRound> rounds;
  while (auto r = (*planner)->Next(&evidence, results, members)) {
    results.clear();
    for (const auto& p : r->pairs) {
      for (int dir = 0; dir < 2; ++dir) {
        model::SweepPairResult t;
        t.a = dir ? p.b : p.a, t.b = dir ? p.a : p.b;
        t.round = static_cast<int>(rounds.size()) + 1;
        t.bw_gbps = 100;
        t.path_mtu = 9000;
        results.push_back(t);
        evidence.Add(t);
      }
    }
    rounds.push_back(*r);
    ASSERT_LT(rounds.size(), 50u);
  }
  ExpectDisjoint(rounds);
  // 4 rounds inside the leaves, then each leaf against its two ring neighbours, half a leaf at a time.
  ASSERT_EQ(rounds.size(), 8u);
  EXPECT_EQ(rounds[0].stage, "intra-leaf");
  EXPECT_EQ(rounds[4].stage, "inter-leaf");
  EXPECT_EQ(rounds[4].pairs[0].flows, FlowsToCoverSpines(4));
}

// The flow count meets the 0.9 coverage exactly: k flows do, k-1 do not (Monte Carlo check).
TEST(Planner, FlowsCoverEverySpineWithProbabilityNinetyPercent) {
  EXPECT_EQ(FlowsToCoverSpines(1), 1);
  std::mt19937_64 rng(5);
  for (int m : {2, 4, 8, 16}) {
    const int k = FlowsToCoverSpines(m);
    auto coverage = [&](int flows) {
      int hit = 0;
      for (int trial = 0; trial < 20000; ++trial) {
        std::set<int> seen;
        for (int f = 0; f < flows; ++f) seen.insert(static_cast<int>(rng() % static_cast<uint64_t>(m)));
        hit += static_cast<int>(seen.size()) == m;
      }
      return hit / 20000.0;
    };
    EXPECT_GE(coverage(k), 0.89) << m;
    EXPECT_LT(coverage(k - 1), 0.905) << m;
  }
  EXPECT_EQ(FlowsToCoverSpines(8), 33);
}

// A spine-core link suspect: a flow from its leaf goes up one of the pod's m
// spines, then to one of the cores; enough flows that every core is reached
// through the suspect's spine with probability 0.9 (and one fewer does not).
TEST(Planner, FlowsReachEveryCoreThroughOneSpineWithProbabilityNinetyPercent) {
  EXPECT_EQ(FlowsToCover(8, 1.0 / 8), FlowsToCoverSpines(8));
  std::mt19937_64 rng(11);
  for (auto [m, cores] : std::vector<std::pair<int, int>>{{4, 4}, {8, 8}, {8, 4}}) {
    const int k = FlowsToCover(cores, 1.0 / (m * cores));
    auto coverage = [&](int flows) {
      int hit = 0;
      for (int trial = 0; trial < 20000; ++trial) {
        std::set<int> seen;
        for (int f = 0; f < flows; ++f) {
          const uint64_t x = rng();
          if (x % static_cast<uint64_t>(m) == 0) seen.insert(static_cast<int>((x / m) % static_cast<uint64_t>(cores)));
        }
        hit += static_cast<int>(seen.size()) == cores;
      }
      return hit / 20000.0;
    };
    EXPECT_GE(coverage(k), 0.89) << m << "x" << cores;
    EXPECT_LT(coverage(k - 1), 0.905) << m << "x" << cores;
  }
  EXPECT_EQ(FlowsToCover(8, 1.0 / 64), 276);
}

// Three tiers: besides the leaf ring, the cheap pass tests each leaf against
// the leaf half the ring away, so every pod sends flows through the cores.
TEST(Planner, AdaptiveWithCoresTestsLeavesHalfTheRingAway) {
  fabric::Fabric f = Leaves(64, 8, 4);
  f.cores = {{"core-0", "core-1"}};
  fabric::FabricIndex index(f);
  PlanOptions o;
  o.pattern = Pattern::kAdaptive;
  o.flows = 7;
  auto planner = MakePlanner(o, 64, &index);
  ASSERT_TRUE(planner.ok());
  std::vector<model::SweepMember> members(64);
  Evidence evidence(index);
  std::vector<PlannedRound> rounds;
  while (auto r = (*planner)->Next(&evidence, {}, members)) {
    rounds.push_back(*r);
    ASSERT_LT(rounds.size(), 50u);
  }
  ExpectDisjoint(rounds);
  ASSERT_EQ(rounds.size(), 10u);  // 4 inside the leaves, 4 around the ring, 2 half the ring away
  std::set<std::pair<int, int>> across;
  for (size_t k = 8; k < 10; ++k) {
    for (const auto& p : rounds[k].pairs) {
      across.insert(std::minmax(index.leaf(p.a, 0), index.leaf(p.b, 0)));
      EXPECT_EQ(p.flows, 7);
    }
  }
  EXPECT_EQ(across, (std::set<std::pair<int, int>>{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
}

TEST(DisplayNames, TwoAgentsWithOneHostnameAreToldApartByAddress) {
  std::vector<model::SweepMember> m(4);
  m[0].name = "node", m[0].control = "10.0.0.1:18521";
  m[1].name = "node", m[1].control = "10.0.0.2:18521";
  m[2].name = "other", m[2].control = "10.0.0.3:18521";
  m[3].name = "ns", m[3].control = "127.0.0.1:4000";
  m.push_back(m[3]);
  m[4].control = "127.0.0.1:4001";
  AssignDisplayNames(&m);
  EXPECT_EQ(m[0].display, "node@10.0.0.1");
  EXPECT_EQ(m[1].display, "node@10.0.0.2");
  EXPECT_EQ(m[2].display, "other");
  // Namespaces behind one address: the port tells them apart.
  EXPECT_EQ(m[3].display, "ns@127.0.0.1:4000");
  EXPECT_EQ(m[4].display, "ns@127.0.0.1:4001");
}

}  // namespace
}  // namespace fabcheck::sweep
