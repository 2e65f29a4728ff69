#include "sweep/analysis.h"

#include <gtest/gtest.h>

#include "synthetic.h"

namespace fabcheck::sweep {
namespace {

using model::CulpritKind;
using synth::MakeSynthetic;
using synth::Synthetic;

std::vector<model::SweepCulprit> Of(const model::SweepVerdict& v, CulpritKind kind) {
  std::vector<model::SweepCulprit> out;
  for (const auto& c : v.culprits) {
    if (c.kind == kind) out.push_back(c);
  }
  return out;
}

model::SweepVerdict AnalyzeSynthetic(const Synthetic& s, std::vector<model::SweepMember> members = {},
                                     std::vector<model::SweepPairResult> pairs = {}) {
  return Analyze({MakeSynthetic(s)}, members, pairs);
}

TEST(AnalysisTest, HealthyClusterNamesNobody) {
  Synthetic s;
  s.noise = 0.05;
  auto v = AnalyzeSynthetic(s);
  EXPECT_TRUE(v.culprits.empty()) << v.summary;
  EXPECT_EQ(v.severity, model::Severity::kPass);
  ASSERT_EQ(v.stats.size(), 1u);
  EXPECT_NEAR(v.stats[0].bw_median_gbps, 9.4, 0.5);
  EXPECT_EQ(v.stats[0].pairs_measured, 56u);
  EXPECT_EQ(v.stats[0].path_mtu_median, 9000);
}

TEST(AnalysisTest, NoisyButHealthyClusterNamesNobody) {
  // +-20% noise everywhere is spread, not a culprit: the relative floor holds.
  Synthetic s;
  s.n = 16;
  s.noise = 0.2;
  auto v = AnalyzeSynthetic(s);
  EXPECT_TRUE(Of(v, CulpritKind::kSlowNode).empty()) << v.summary;
  EXPECT_TRUE(Of(v, CulpritKind::kSlowLink).empty()) << v.summary;
}

TEST(AnalysisTest, SlowWithEveryPeerIsANodeProblem) {
  Synthetic s;
  s.n = 7;
  s.slow_nodes = {3};
  auto v = AnalyzeSynthetic(s);
  auto nodes = Of(v, CulpritKind::kSlowNode);
  ASSERT_EQ(nodes.size(), 1u) << v.summary;
  EXPECT_EQ(nodes[0].nodes, std::vector<int>{3});
  EXPECT_EQ(nodes[0].direction, "both");
  EXPECT_NEAR(nodes[0].ratio, 0.02, 0.005);
  EXPECT_EQ(nodes[0].severity, model::Severity::kFail);
  // Its six slow pairs are explained by the node, not reported as links.
  EXPECT_TRUE(Of(v, CulpritKind::kSlowLink).empty()) << v.summary;
  EXPECT_EQ(v.severity, model::Severity::kFail);
  ASSERT_FALSE(v.findings.empty());
  EXPECT_EQ(v.findings[0].id, "sweep.node.slow");
  EXPECT_NE(v.findings[0].message.find("node-3"), std::string::npos);
  EXPECT_NE(v.findings[0].message.find("2.0%"), std::string::npos) << v.findings[0].message;
}

TEST(AnalysisTest, OneSlowPairIsALinkProblem) {
  Synthetic s;
  s.n = 7;
  s.slow_links = {{1, 5}};
  auto v = AnalyzeSynthetic(s);
  EXPECT_TRUE(Of(v, CulpritKind::kSlowNode).empty()) << v.summary;
  auto links = Of(v, CulpritKind::kSlowLink);
  ASSERT_EQ(links.size(), 1u) << v.summary;
  EXPECT_EQ(links[0].nodes, (std::vector<int>{1, 5}));
  EXPECT_EQ(links[0].direction, "both");
  EXPECT_NEAR(links[0].ratio, 0.2, 0.02);
}

TEST(AnalysisTest, OneWaySlowLinkNamesItsDirection) {
  Synthetic s;
  auto m = MakeSynthetic(s);
  m.bw_gbps.set(2, 6, 1.0);
  auto v = Analyze({m}, {}, {});
  auto links = Of(v, CulpritKind::kSlowLink);
  ASSERT_EQ(links.size(), 1u) << v.summary;
  EXPECT_EQ(links[0].direction, "2->6");
}

TEST(AnalysisTest, NodeSendingSlowlyIsNamedForSending) {
  Synthetic s;
  auto m = MakeSynthetic(s);
  for (int j = 0; j < s.n; ++j) {
    if (j != 4) m.bw_gbps.set(4, j, 2.0);
  }
  auto v = Analyze({m}, {}, {});
  auto nodes = Of(v, CulpritKind::kSlowNode);
  ASSERT_EQ(nodes.size(), 1u) << v.summary;
  EXPECT_EQ(nodes[0].direction, "send");
  EXPECT_EQ(nodes[0].severity, model::Severity::kFail);
}

TEST(AnalysisTest, MtuHolesAtANodeAndOnALink) {
  Synthetic s;
  s.n = 8;
  s.mtu_nodes = {6};
  s.mtu_links = {{0, 2}};
  std::vector<model::SweepMember> members(8);
  for (int i = 0; i < 8; ++i) {
    members[i].index = i;
    members[i].name = "host" + std::to_string(i);
    members[i].interface_mtu = {i == 6 ? 1500 : 9000};
  }
  std::vector<model::SweepPairResult> pairs;
  model::SweepPairResult p;
  p.a = 1, p.b = 6, p.path_mtu = 1500, p.local_mtu = 9000;
  pairs.push_back(p);
  auto v = AnalyzeSynthetic(s, members, pairs);
  auto nodes = Of(v, CulpritKind::kMtuHoleNode);
  ASSERT_EQ(nodes.size(), 1u) << v.summary;
  EXPECT_EQ(nodes[0].nodes, std::vector<int>{6});
  EXPECT_EQ(nodes[0].value, 1500);
  EXPECT_EQ(nodes[0].median, 9000);
  auto links = Of(v, CulpritKind::kMtuHoleLink);
  ASSERT_EQ(links.size(), 1u) << v.summary;
  EXPECT_EQ(links[0].nodes, (std::vector<int>{0, 2}));
  bool black_hole = false;
  for (const auto& f : v.findings) {
    for (const auto& e : f.evidence) black_hole |= e.find("black hole: host1 believes MTU 9000") != std::string::npos;
  }
  EXPECT_TRUE(black_hole);
  EXPECT_NE(v.summary.find("host6"), std::string::npos) << v.summary;
}

TEST(AnalysisTest, AllFaultsAtOnceAreTeasedApart) {
  // The end-to-end scenario: slow node, MTU node, slow link between others.
  Synthetic s;
  s.n = 7;
  s.slow_nodes = {1};
  s.mtu_nodes = {2};
  s.slow_links = {{3, 5}};
  s.high_lat_nodes = {6};
  auto v = AnalyzeSynthetic(s);
  auto slow = Of(v, CulpritKind::kSlowNode);
  ASSERT_EQ(slow.size(), 1u) << v.summary;
  EXPECT_EQ(slow[0].nodes, std::vector<int>{1});
  auto links = Of(v, CulpritKind::kSlowLink);
  ASSERT_EQ(links.size(), 1u) << v.summary;
  EXPECT_EQ(links[0].nodes, (std::vector<int>{3, 5}));
  auto mtu = Of(v, CulpritKind::kMtuHoleNode);
  ASSERT_EQ(mtu.size(), 1u);
  EXPECT_EQ(mtu[0].nodes, std::vector<int>{2});
  auto lat = Of(v, CulpritKind::kHighLatencyNode);
  ASSERT_EQ(lat.size(), 1u) << v.summary;
  EXPECT_EQ(lat[0].nodes, std::vector<int>{6});
  EXPECT_TRUE(Of(v, CulpritKind::kHighLatencyLink).empty()) << v.summary;
}

TEST(AnalysisTest, RingSlowNodeIsNotBlamedOnItsNeighbours) {
  Synthetic s;
  s.n = 8;
  s.slow_nodes = {5};
  auto full = MakeSynthetic(s);
  model::SweepMatrices ring{0, model::PairMatrix(8), model::PairMatrix(8), model::PairMatrix(8), model::PairMatrix(8)};
  for (int i = 0; i < 8; ++i) {
    int j = (i + 1) % 8;
    ring.bw_gbps.set(i, j, full.bw_gbps.at(i, j));
    ring.bw_gbps.set(j, i, full.bw_gbps.at(j, i));
  }
  auto v = Analyze({ring}, {}, {});
  auto nodes = Of(v, CulpritKind::kSlowNode);
  ASSERT_EQ(nodes.size(), 1u) << v.summary;
  EXPECT_EQ(nodes[0].nodes, std::vector<int>{5});
  EXPECT_TRUE(Of(v, CulpritKind::kSlowLink).empty()) << v.summary;
}

TEST(AnalysisTest, UnreachableAndFailedTestsAreReported) {
  Synthetic s;
  s.n = 4;
  auto m = MakeSynthetic(s);
  for (int j = 0; j < 4; ++j) {
    m.bw_gbps.set(3, j, NAN);
    m.bw_gbps.set(j, 3, NAN);
  }
  std::vector<model::SweepMember> members(4);
  for (int i = 0; i < 4; ++i) members[i].index = i, members[i].name = "n" + std::to_string(i);
  members[3].reachable = false;
  members[3].error = "connection refused";
  model::SweepPairResult failed;
  failed.a = 0, failed.b = 1, failed.error = "perf: connect 10.0.0.2:18515: ECONNREFUSED";
  model::SweepPairResult to_dead;
  to_dead.a = 0, to_dead.b = 3, to_dead.error = "agent n3 did not answer";
  auto v = Analyze({m}, members, {failed, to_dead});
  ASSERT_EQ(Of(v, CulpritKind::kUnreachable).size(), 1u);
  auto f = Of(v, CulpritKind::kFailedLink);
  ASSERT_EQ(f.size(), 1u);  // the pair with the dead agent is the agent's problem
  EXPECT_EQ(f[0].nodes, (std::vector<int>{0, 1}));
  EXPECT_EQ(v.severity, model::Severity::kFail);
  EXPECT_NE(v.summary.find("unreachable agent (n3)"), std::string::npos) << v.summary;
}

TEST(AnalysisTest, TwoMembersCannotLocalise) {
  Synthetic s;
  s.n = 2;
  auto v = AnalyzeSynthetic(s);
  bool note = false;
  for (const auto& f : v.findings) note |= f.id == "sweep.too-few-members";
  EXPECT_TRUE(note);
}

TEST(AnalysisTest, NothingMeasuredIsUnknownNotPass) {
  model::SweepMatrices empty{0, model::PairMatrix(4), model::PairMatrix(4), model::PairMatrix(4), model::PairMatrix(4)};
  auto v = Analyze({empty}, {}, {});
  EXPECT_EQ(v.severity, model::Severity::kUnknown);
}

TEST(AnalysisTest, RobustOfSamplesLargeInputsAccurately) {
  std::vector<double> v;
  for (int i = 0; i < 3'000'001; ++i) v.push_back(i % 1000);
  Robust r = RobustOf(v);
  EXPECT_NEAR(r.median, 500, 2);
  EXPECT_NEAR(r.scaled_mad, 250 * 1.4826, 3);
  EXPECT_EQ(r.count, v.size());
}

TEST(SweepModelTest, JsonRoundTrip) {
  Synthetic s;
  s.n = 5;
  s.slow_nodes = {2};
  model::SweepResult r;
  r.pattern = "pairwise";
  r.rounds_planned = 5;
  r.rounds_completed = 5;
  r.matrices = {MakeSynthetic(s)};
  r.matrices[0].bw_gbps.set(0, 1, NAN);
  r.members.resize(5);
  for (int i = 0; i < 5; ++i) r.members[i].index = i;
  r.verdict = Analyze(r.matrices, r.members, {});
  nlohmann::json j = r;
  EXPECT_EQ(j["schema"], "fabcheck.sweep/v1");
  EXPECT_TRUE(j["matrices"][0]["bw_gbps"][0][1].is_null());
  EXPECT_TRUE(j["matrices"][0]["bw_gbps"][0][0].is_null());
  auto back = j.get<model::SweepResult>();
  EXPECT_EQ(back.matrices[0].bw_gbps.measured(), r.matrices[0].bw_gbps.measured());
  EXPECT_EQ(back.verdict.culprits.size(), r.verdict.culprits.size());
  EXPECT_EQ(back.verdict.culprits[0].kind, CulpritKind::kSlowNode);
  // Numbers out of their field's range are refused, never cast (a bundle comes from anywhere).
  for (const char* key : {"rounds_planned", "rails"}) {
    nlohmann::json bad = j;
    bad[key] = 1e30;
    EXPECT_THROW(bad.get<model::SweepResult>(), nlohmann::json::exception) << key;
  }
  nlohmann::json fractional = j;
  fractional["rounds_completed"] = 2.5;
  EXPECT_THROW(fractional.get<model::SweepResult>(), nlohmann::json::exception);
  j["schema"] = "fabcheck.sweep/v9";
  EXPECT_THROW(j.get<model::SweepResult>(), nlohmann::json::exception);
}

}  // namespace
}  // namespace fabcheck::sweep
