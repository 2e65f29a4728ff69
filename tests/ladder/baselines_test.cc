// Baseline group formation (ladder/baselines.h) on fixture topologies: one
// rack, two racks, racks unknown, one member, one rail and several rails,
// for L3 (perf) and L4 (NCCL). A scope the cluster cannot form is recorded
// with the reason, never left out.
#include "ladder/baselines.h"

#include <gtest/gtest.h>

namespace fabcheck::ladder {
namespace {

using model::BaselineGroup;

const BaselineGroup& ScopeIn(const std::vector<BaselineGroup>& groups, const std::string& scope) {
  for (const auto& g : groups) {
    if (g.scope == scope) return g;
  }
  static const BaselineGroup kNone;
  ADD_FAILURE() << "no group " << scope;
  return kNone;
}

std::vector<BaselineCandidate> CandidatesIn(const std::vector<std::pair<std::string, std::string>>& id_rack, int rails = 1) {
  std::vector<BaselineCandidate> out;
  for (const auto& [id, rack] : id_rack) {
    BaselineCandidate c{id, rack, rails, {}};
    for (int r = 0; r < rails; ++r) c.hcas.push_back("mlx5_" + std::to_string(r));
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<std::string> ScopeNames(const std::vector<BaselineGroup>& groups) {
  std::vector<std::string> out;
  for (const auto& g : groups) out.push_back(g.scope);
  return out;
}

TEST(BaselineGroups, EveryScopeIsRecordedInTheLaddersOrder) {
  auto perf = FormBaselineGroups(BaselineRung::kPerf, CandidatesIn({{"a", "r1"}, {"b", "r2"}}), "L3");
  EXPECT_EQ(ScopeNames(perf),
            (std::vector<std::string>{"single-node", "two-nodes", "same-rack", "cross-rack", "one-rail", "all-rails"}));
  auto coll = FormBaselineGroups(BaselineRung::kColl, CandidatesIn({{"a", "r1"}, {"b", "r2"}}), "L4");
  EXPECT_EQ(ScopeNames(coll), (std::vector<std::string>{"single-node", "two-nodes", "same-rack", "cross-rack", "one-rail",
                                                    "all-rails", "gdr-on", "gdr-off"}));
  // Nobody passed: every scope is there, not applicable, saying why.
  for (const auto& g : FormBaselineGroups(BaselineRung::kColl, {}, "L4")) {
    EXPECT_FALSE(g.applicable) << g.scope;
    EXPECT_EQ(g.reason, "no member that passed L4") << g.scope;
  }
}

TEST(BaselineGroups, OneRackHasNoCrossRackGroupAndSaysWhy) {
  auto g = FormBaselineGroups(BaselineRung::kPerf, CandidatesIn({{"a", "r1"}, {"b", "r1"}, {"c", "r1"}}), "L3");
  EXPECT_EQ(ScopeIn(g, "single-node").members, (std::vector<std::string>{"a"}));
  EXPECT_EQ(ScopeIn(g, "two-nodes").members, (std::vector<std::string>{"a", "b"}));
  // The first two members are also the same-rack pair: measured once.
  EXPECT_EQ(ScopeIn(g, "same-rack").members, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(ScopeIn(g, "same-rack").same_as, "two-nodes");
  const auto& cross = ScopeIn(g, "cross-rack");
  EXPECT_FALSE(cross.applicable);
  EXPECT_EQ(cross.reason, "every member that passed L3 sits in rack r1");
  EXPECT_TRUE(cross.members.empty());
}

TEST(BaselineGroups, TwoRacksGiveASameRackAndACrossRackPair) {
  auto g = FormBaselineGroups(BaselineRung::kPerf, CandidatesIn({{"a", "r1"}, {"b", "r2"}, {"c", "r1"}, {"d", "r2"}}), "L3");
  EXPECT_EQ(ScopeIn(g, "two-nodes").members, (std::vector<std::string>{"a", "b"}));
  const auto& same = ScopeIn(g, "same-rack");
  EXPECT_TRUE(ToMeasure(same));
  EXPECT_EQ(same.members, (std::vector<std::string>{"a", "c"}));
  const auto& cross = ScopeIn(g, "cross-rack");
  EXPECT_EQ(cross.members, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(cross.same_as, "two-nodes");
  EXPECT_FALSE(ToMeasure(cross));
  // Every rack with one member only: no same-rack pair, and the racks are named.
  auto lone = FormBaselineGroups(BaselineRung::kPerf, CandidatesIn({{"a", "r1"}, {"b", "r2"}}), "L3");
  EXPECT_FALSE(ScopeIn(lone, "same-rack").applicable);
  EXPECT_EQ(ScopeIn(lone, "same-rack").reason, "no rack holds two members that passed L3: r1 (a); r2 (b)");
  EXPECT_EQ(ScopeIn(lone, "cross-rack").members, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(ScopeIn(lone, "cross-rack").same_as, "two-nodes");
}

TEST(BaselineGroups, UnknownRacksAreUnknownNotInapplicable) {
  // No topology given: the rack groups stay applicable, unmeasured, with the fix.
  auto g = FormBaselineGroups(BaselineRung::kPerf, CandidatesIn({{"a", ""}, {"b", ""}}), "L3");
  for (const char* scope : {"same-rack", "cross-rack"}) {
    const auto& group = ScopeIn(g, scope);
    EXPECT_TRUE(group.applicable) << scope;
    EXPECT_FALSE(ToMeasure(group)) << scope;
    EXPECT_NE(group.reason.find("fabcheck ladder --topology FILE"), std::string::npos) << group.reason;
  }
  // Some racks known: the members without one are named.
  auto partly = FormBaselineGroups(BaselineRung::kPerf, CandidatesIn({{"a", "r1"}, {"b", ""}}), "L3");
  EXPECT_TRUE(ScopeIn(partly, "cross-rack").applicable);
  EXPECT_EQ(ScopeIn(partly, "cross-rack").reason,
            "no rack is recorded for b: add them to the --topology file (docs/fabric.md)");
}

TEST(BaselineGroups, OneMemberHasOnlyTheSingleNodeGroup) {
  auto g = FormBaselineGroups(BaselineRung::kColl, CandidatesIn({{"a", "r1"}}, 8), "L4");
  EXPECT_TRUE(ToMeasure(ScopeIn(g, "single-node")));
  for (const char* scope : {"two-nodes", "same-rack", "cross-rack", "one-rail", "all-rails", "gdr-on", "gdr-off"}) {
    EXPECT_FALSE(ScopeIn(g, scope).applicable) << scope;
    EXPECT_NE(ScopeIn(g, scope).reason.find("only a that passed L4: a pair needs two members"), std::string::npos)
        << ScopeIn(g, scope).reason;
  }
}

TEST(BaselineGroups, RailsOfL3) {
  // One rail: the single node measures its NIC to itself; all rails is one rail.
  auto one = FormBaselineGroups(BaselineRung::kPerf, CandidatesIn({{"a", "r1"}, {"b", "r1"}}, 1), "L3");
  EXPECT_EQ(ScopeIn(one, "single-node").rails, (std::vector<int>{0, 0}));
  EXPECT_EQ(ScopeIn(one, "one-rail").rails, (std::vector<int>{0}));
  EXPECT_EQ(ScopeIn(one, "one-rail").same_as, "two-nodes");
  EXPECT_FALSE(ScopeIn(one, "all-rails").applicable);
  EXPECT_EQ(ScopeIn(one, "all-rails").reason, "a and b have one data-plane rail each: one rail is all rails");
  // Four rails: between two NICs of one node, and every rail of the pair at once.
  auto four = FormBaselineGroups(BaselineRung::kPerf, CandidatesIn({{"a", "r1"}, {"b", "r1"}}, 4), "L3");
  EXPECT_EQ(ScopeIn(four, "single-node").rails, (std::vector<int>{0, 1}));
  EXPECT_EQ(ScopeIn(four, "all-rails").rails, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_TRUE(ToMeasure(ScopeIn(four, "all-rails")));
  // The pair has as many rails as its member with fewer.
  auto mixed = CandidatesIn({{"a", "r1"}, {"b", "r1"}}, 4);
  mixed[1].rails = 2;
  EXPECT_EQ(ScopeIn(FormBaselineGroups(BaselineRung::kPerf, mixed, "L3"), "all-rails").rails, (std::vector<int>{0, 1}));
}

TEST(BaselineGroups, RailsAndGpuDirectOfL4) {
  auto g = FormBaselineGroups(BaselineRung::kColl, CandidatesIn({{"a", "r1"}, {"b", "r2"}}, 8), "L4");
  // One rail: each member's ranks see only its rail-0 HCA.
  const auto& one = ScopeIn(g, "one-rail");
  EXPECT_TRUE(ToMeasure(one));
  EXPECT_EQ(one.settings, (std::vector<std::string>{"NCCL_IB_HCA==mlx5_0 on a", "NCCL_IB_HCA==mlx5_0 on b"}));
  // All rails and GPUDirect on are NCCL's default: the two-nodes job itself.
  EXPECT_EQ(ScopeIn(g, "all-rails").same_as, "two-nodes");
  EXPECT_EQ(ScopeIn(g, "gdr-on").same_as, "two-nodes");
  const auto& off = ScopeIn(g, "gdr-off");
  EXPECT_TRUE(ToMeasure(off));
  EXPECT_EQ(off.settings, (std::vector<std::string>{"NCCL_NET_GDR_LEVEL=LOC"}));
  EXPECT_EQ(off.members, (std::vector<std::string>{"a", "b"}));
  // One HCA per member: one rail is the default job, all rails cannot be formed.
  auto single = FormBaselineGroups(BaselineRung::kColl, CandidatesIn({{"a", "r1"}, {"b", "r2"}}, 1), "L4");
  EXPECT_EQ(ScopeIn(single, "one-rail").same_as, "two-nodes");
  EXPECT_FALSE(ScopeIn(single, "all-rails").applicable);
  EXPECT_EQ(ScopeIn(single, "all-rails").reason, "a and b have one RDMA device each: one rail is all rails");
  // HCAs unknown: the one-rail group cannot be told which to use.
  auto unknown = CandidatesIn({{"a", "r1"}, {"b", "r2"}}, 8);
  unknown[1].hcas.clear();
  EXPECT_FALSE(ScopeIn(FormBaselineGroups(BaselineRung::kColl, unknown, "L4"), "one-rail").applicable);
  EXPECT_EQ(OneRailHca(unknown[0]), "=mlx5_0");
  EXPECT_EQ(OneRailHca(unknown[1]), "");
}

}  // namespace
}  // namespace fabcheck::ladder
