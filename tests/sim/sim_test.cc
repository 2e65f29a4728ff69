// The simulator's parts (names, fault files, max-min sharing, ECMP) and the
// sweep's planner and localiser run through it against planted faults.
#include "sim/sim.h"

#include <gtest/gtest.h>

#include "sim/faults.h"

namespace fabcheck::sim {
namespace {

Clos Small(int nodes = 128, int rails = 2) {
  ClosOptions o;
  o.nodes = nodes;
  o.rails = rails;
  return *Clos::Make(o);
}

TEST(Clos, NamesRoundTripAndBadNamesSayWhy) {
  Clos c = Small();
  EXPECT_EQ(c.Cable(37, 1), "n0037/r1~leaf-r1-01");
  EXPECT_EQ(c.Uplink(1, 3, 7), "leaf-r1-03~spine-r1-07");
  auto up = c.Parse("leaf-r1-03~spine-r1-07");
  ASSERT_TRUE(up.ok());
  EXPECT_EQ(up->kind, Element::Kind::kUplink);
  EXPECT_EQ(up->leaf, 3);
  EXPECT_EQ(up->spine, 7);
  auto cable = c.Parse("n0037/r1~leaf-r1-01");
  ASSERT_TRUE(cable.ok()) << cable.status().message();
  EXPECT_EQ(cable->member, 37);
  for (auto [name, words] : std::vector<std::pair<std::string, std::string>>{
           {"n0037/r1~leaf-r1-02", "is cabled to leaf-r1-01"},
           {"n0200", "beyond --nodes 128"},
           {"n0001/r5", "rail 5 is beyond --rails 2"},
           {"leaf-r0-09", "no such leaf"},
           {"leaf-r0-01~spine-r1-00", "different rails"},
           {"router7", "not a member name"}}) {
    auto e = c.Parse(name);
    ASSERT_FALSE(e.ok()) << name;
    EXPECT_NE(e.status().message().find(words), std::string::npos) << e.status().message();
  }
}

TEST(Faults, FileErrorsNameTheEntry) {
  Clos c = Small();
  for (auto [text, words] : std::vector<std::pair<std::string, std::string>>{
           {"{}", "not a JSON list"},
           {R"([{"kind": "nic_slow", "element": "n0001/r0"}])", "faults[0] (nic_slow): give factor"},
           {R"([{"kind": "nic_slow", "element": "n0001", "factor": 0.5}])", "is not a NIC"},
           {R"([{"kind": "slow", "element": "n0001"}])", "unknown kind 'slow'"},
           {R"([{"kind": "spine_loss", "element": "spine-r0-01", "loss": 2}])", "loss 2 is outside"},
           {R"([{"kind": "cable_degraded", "element": "n0001/r0~leaf-r0-00", "factor": 0.5, "loss": 0.01}])",
            "either factor or loss"},
           {R"([{"kind": "noise", "element": "n0001", "cv": 0.2, "colour": 1}])", "unknown key 'colour'"}}) {
    auto f = ParseFaults(text, c);
    ASSERT_FALSE(f.ok()) << text;
    EXPECT_NE(f.status().message().find(words), std::string::npos) << f.status().message();
  }
}

TEST(MaxMin, SharesTheBottleneckAndGivesTheRestToTheOthers) {
  // Links: 0 (cap 10) shared by flows 0,1,2; link 1 (cap 2) also on flow 0.
  auto r = SimTransport::MaxMinRates({10, 2}, {{0, 1}, {0}, {0}});
  EXPECT_DOUBLE_EQ(r[0], 2);
  EXPECT_DOUBLE_EQ(r[1], 4);
  EXPECT_DOUBLE_EQ(r[2], 4);
  // Classic: a long flow over two links and a short one on each.
  auto c = SimTransport::MaxMinRates({1, 1}, {{0, 1}, {0}, {1}});
  EXPECT_DOUBLE_EQ(c[0], 0.5);
  EXPECT_DOUBLE_EQ(c[1], 0.5);
}

TEST(Ecmp, FlowsSpreadOverEverySpine) {
  Clos c = Small();
  std::vector<int> hits(8);
  for (uint32_t port = 0; port < 8000; ++port) ++hits[c.SpineFor(1, 100, 0, port)];
  for (int h : hits) EXPECT_NEAR(h, 1000, 150);
}

nlohmann::json Simulate(const std::string& faults, sweep::Pattern strategy = sweep::Pattern::kAdaptive, int seed = 1) {
  SimOptions o;
  o.clos.nodes = 128;
  o.clos.rails = 2;
  o.faults_json = faults;
  o.strategy = strategy;
  o.seed = seed;
  auto r = RunSim(o);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : nlohmann::json::object();
}

// Each kind alone, with a noise decoy beside it: named as its element and
// kind, nothing else named.
TEST(Sim, EachFaultKindIsPinnedToItsElement) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"kind": "node_slow", "element": "n0005", "factor": 0.4})", "node"},
      {R"({"kind": "nic_slow", "element": "n0040/r1", "factor": 0.5})", "nic"},
      {R"({"kind": "cable_degraded", "element": "n0070/r0~leaf-r0-02", "factor": 0.5})", "cable"},
      {R"({"kind": "cable_degraded", "element": "n0071/r1~leaf-r1-02", "loss": 0.005})", "cable"},
      {R"({"kind": "uplink_degraded", "element": "leaf-r1-03~spine-r1-05", "factor": 0.2})", "uplink"},
      {R"({"kind": "uplink_degraded", "element": "leaf-r0-00~spine-r0-02", "loss": 0.01})", "uplink"},
      {R"({"kind": "spine_loss", "element": "spine-r0-06", "loss": 0.004})", "spine"},
      {R"({"kind": "mtu_mismatch", "element": "n0100/r0", "mtu": 1500})", "mtu"},
      {R"({"kind": "flap", "element": "n0090/r1~leaf-r1-02", "factor": 0.3})", "cable"},
      // What a symmetric model hides: one way only (recall needs the finding's direction to match).
      {R"({"kind": "uplink_degraded", "element": "leaf-r1-03~spine-r1-05", "factor": 0.2, "direction": "up"})",
       "uplink"},
      {R"({"kind": "uplink_degraded", "element": "leaf-r0-02~spine-r0-01", "factor": 0.2, "direction": "down"})",
       "uplink"},
      {R"({"kind": "uplink_degraded", "element": "leaf-r0-00~spine-r0-02", "loss": 0.003, "direction": "down"})",
       "uplink"},
      {R"({"kind": "spine_congested", "element": "spine-r0-04", "factor": 0.3})", "spine"},
  };
  for (const auto& [fault, kind] : cases) {
    auto r = Simulate("[" + fault + R"(, {"kind": "noise", "element": "n0011", "cv": 0.25}])");
    const auto& s = r["score"];
    EXPECT_EQ(s["recall"], 1.0) << fault << "\n" << r["findings"].dump(1);
    EXPECT_EQ(s["precision"], 1.0) << fault << "\n" << r["findings"].dump(1);
    ASSERT_EQ(r["findings"].size(), 1u) << fault;
    EXPECT_EQ(r["findings"][0]["kind"], kind);
    EXPECT_LE(r["rounds"].get<int>(), 30);
  }
}

TEST(Sim, OneWayFaultsAreNamedWithTheirDirection) {
  auto up = Simulate(R"([{"kind": "uplink_degraded", "element": "leaf-r1-03~spine-r1-05", "factor": 0.2,
                          "direction": "up"}])");
  ASSERT_EQ(up["findings"].size(), 1u) << up["findings"].dump(1);
  EXPECT_EQ(up["findings"][0]["direction"], "leaf-r1-03->spine-r1-05");
  auto down = Simulate(R"([{"kind": "uplink_degraded", "element": "leaf-r1-03~spine-r1-05", "loss": 0.005,
                            "direction": "down"}])");
  ASSERT_EQ(down["findings"].size(), 1u) << down["findings"].dump(1);
  EXPECT_EQ(down["findings"][0]["direction"], "spine-r1-05->leaf-r1-03");
  auto both = Simulate(R"([{"kind": "uplink_degraded", "element": "leaf-r1-03~spine-r1-05", "factor": 0.2}])");
  ASSERT_EQ(both["findings"].size(), 1u) << both["findings"].dump(1);
  EXPECT_EQ(both["findings"][0]["direction"], "both");
}

TEST(Faults, DirectionIsForUplinksOnly) {
  Clos c = Small();
  auto bad = ParseFaults(R"([{"kind": "spine_loss", "element": "spine-r0-01", "loss": 0.01, "direction": "up"}])", c);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("direction is for uplink_degraded only"), std::string::npos);
  auto sideways = ParseFaults(
      R"([{"kind": "uplink_degraded", "element": "leaf-r0-01~spine-r0-01", "loss": 0.01, "direction": "left"}])", c);
  ASSERT_FALSE(sideways.ok());
  auto ok = ParseFaults(
      R"([{"kind": "uplink_degraded", "element": "leaf-r0-01~spine-r0-01", "loss": 0.01, "direction": "up"}])", c);
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ExpectedFinding((*ok)[0]).direction, "leaf-r0-01->spine-r0-01");
}

TEST(Sim, HealthyFabricWithDecoysNamesNothing) {
  auto r = Simulate(R"([{"kind": "noise", "element": "n0001", "cv": 0.3}, {"kind": "noise", "element": "n0077", "cv": 0.3}])");
  EXPECT_TRUE(r["findings"].empty()) << r["findings"].dump(1);
  EXPECT_EQ(r["score"]["precision"], 1.0);
}

TEST(Sim, RealisticMixIsFoundByAdaptiveInFewRounds) {
  for (int seed : {11, 12, 13}) {
    SimOptions o;
    o.clos.nodes = 256;
    o.clos.rails = 4;
    o.realistic_mix = true;
    o.seed = seed;
    auto r = RunSim(o);
    ASSERT_TRUE(r.ok());
    const auto& s = (*r)["score"];
    EXPECT_GE(s.at("top1").get<double>(), 0.85) << seed << " " << s.dump(1);
    EXPECT_GE(s.at("precision").get<double>(), 0.85) << seed << " " << s.dump(1);
    EXPECT_LE((*r)["rounds"].get<int>(), 40);
    EXPECT_DOUBLE_EQ((*r)["simulated_wall_s"].get<double>(), 10.0 * (*r)["rounds"].get<int>());
  }
}

TEST(Sim, RingCannotSeeUplinksTopologyCan) {
  const std::string uplink = R"([{"kind": "uplink_degraded", "element": "leaf-r0-01~spine-r0-04", "loss": 0.01}])";
  auto ring = Simulate(uplink, sweep::Pattern::kRing);
  auto topo = Simulate(uplink, sweep::Pattern::kTopology);
  EXPECT_EQ(topo["score"]["top1"], 1.0) << topo["findings"].dump(1);
  EXPECT_EQ(topo["rounds"], 31 + 3);
  EXPECT_LT(ring["score"]["top1"].get<double>(), 1.0);
}

}  // namespace
}  // namespace fabcheck::sim
