// Expectations, pair verdicts and which members failing pairs point at.
#include "ladder/judge.h"

#include <gtest/gtest.h>

namespace fabcheck::ladder {
namespace {

model::PairTest P(const std::string& a, const std::string& b, model::RungVerdict v) {
  model::PairTest p;
  p.a = a;
  p.b = b;
  p.verdict = v;
  return p;
}
constexpr auto kPass = model::RungVerdict::kPass;
constexpr auto kFail = model::RungVerdict::kFail;

TEST(Blame, ASlowNodeIsNamedNotItsNeighbours) {
  // Ring of 5, both directions; s's pairs fail.
  std::vector<model::PairTest> pairs;
  std::vector<std::string> ring = {"h0", "h1", "s", "h3", "h4"};
  for (size_t i = 0; i < ring.size(); ++i) {
    const auto& a = ring[i];
    const auto& b = ring[(i + 1) % ring.size()];
    auto v = a == "s" || b == "s" ? kFail : kPass;
    pairs.push_back(P(a, b, v));
    pairs.push_back(P(b, a, v));
  }
  EXPECT_EQ(BlameMembers(pairs), std::vector<std::string>{"s"});
  EXPECT_EQ(PairsVerdict(pairs), kFail);
}

TEST(Blame, ABadLinkWhoseCountersNameOneEndBlamesThatEndOnly) {
  // dgx-02 -> dgx-07 fails and dgx-07's port counted symbol errors in the
  // rung (bundle/correlate.h): dgx-07's NIC or cable, not dgx-02.
  model::PairTest bad = P("dgx-02", "dgx-07", kFail);
  bad.suspect = model::PairSuspect{"dgx-07", "mlx5_1/1", "NIC or cable", "high", "symbol_error +5212"};
  std::vector<model::PairTest> pairs = {bad, P("dgx-07", "dgx-01", kPass), P("dgx-01", "dgx-02", kPass)};
  EXPECT_EQ(BlameMembers(pairs), std::vector<std::string>{"dgx-07"});
}

TEST(Blame, ABadLinkBlamesBothEndsAndEverythingFailingBlamesEveryone) {
  std::vector<model::PairTest> pairs = {P("a", "b", kFail), P("b", "c", kPass), P("c", "d", kPass), P("d", "a", kPass)};
  EXPECT_EQ(BlameMembers(pairs), (std::vector<std::string>{"a", "b"}));
  std::vector<model::PairTest> all = {P("a", "b", kFail), P("b", "c", kFail), P("c", "a", kFail)};
  EXPECT_EQ(BlameMembers(all), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(BlameMembers({P("a", "b", kPass)}).empty());
  EXPECT_EQ(PairsVerdict({P("a", "b", model::RungVerdict::kNotRun)}), model::RungVerdict::kNotRun);
}

TEST(Expectation, SlowestOfPortsAndPcieTimesThePassLine) {
  RailCapacity a{"mlx5_0", 400, 504, "PCIe Gen5 x16"};
  RailCapacity b{"mlx5_3", 400, 126, "PCIe Gen4 x8"};
  auto e = VerbsExpectation(a, b, 0.9);
  ASSERT_TRUE(e.gbps);
  EXPECT_NEAR(*e.gbps, 126 * 0.9, 1e-9);
  EXPECT_NE(e.basis.find("mlx5_3 PCIe Gen4 x8"), std::string::npos) << e.basis;
  EXPECT_NE(e.basis.find("90%"), std::string::npos) << e.basis;
  EXPECT_FALSE(VerbsExpectation({}, {}, 0.9).gbps);
}

TEST(Expectation, CapacityFromTheInventory) {
  model::Inventory inv;
  model::RdmaDevice d;
  d.name = "mlx5_0";
  d.pci_bdf = "0000:18:00.0";
  model::RdmaPort port;
  port.rate_gbps = 400;
  port.state = "ACTIVE";
  port.netdev = "ens1";
  d.ports = {port};
  inv.rdma_devices = {d};
  model::Nic nic;
  nic.label = "mlx5_0";
  nic.rdma_devices = {"mlx5_0"};
  nic.pci.bdf = "0000:18:00.0";
  nic.pci.link.current_speed_gts = 16;
  nic.pci.link.current_width = 8;
  inv.nics = {nic};
  auto c = CapacityOf(inv, {}, 0);
  EXPECT_EQ(c.device, "mlx5_0");
  EXPECT_EQ(c.port_gbps, 400);
  ASSERT_TRUE(c.pcie_gbps);
  EXPECT_NEAR(*c.pcie_gbps, 16 * 8 * 128.0 / 130, 0.5);
  EXPECT_EQ(c.pcie_text, "PCIe Gen4 x8");
  EXPECT_TRUE(CapacityOf(inv, {}, 1).device.empty());  // no second rail
}

TEST(JudgePerf, TcpIsNeverAnRdmaPass) {
  model::PairTest p;
  p.transport = "tcp";
  p.bw_gbps = 9.5;
  JudgePerfPair(p, "auto", 10.0);
  EXPECT_EQ(p.verdict, kFail);
  EXPECT_NE(p.reason.find("RDMA not used: tcp"), std::string::npos) << p.reason;

  model::PairTest asked;
  asked.transport = "tcp";
  asked.bw_gbps = 9.5;
  JudgePerfPair(asked, "tcp", 10.0);
  EXPECT_EQ(asked.verdict, model::RungVerdict::kWarn);  // measured, judged, still not RDMA
  EXPECT_NE(asked.reason.find("RDMA not used"), std::string::npos);

  model::PairTest slow;
  slow.transport = "tcp";
  slow.bw_gbps = 0.1;
  JudgePerfPair(slow, "tcp", 10.0);
  EXPECT_EQ(slow.verdict, kFail);
  ASSERT_TRUE(slow.expected_gbps);
  EXPECT_DOUBLE_EQ(*slow.expected_gbps, 2.5);
}

TEST(JudgePerf, VerbsAgainstTheExpectation) {
  model::PairTest p;
  p.transport = "verbs";
  p.rdma = true;
  p.bw_gbps = 300;
  p.expected_gbps = 360;
  p.expected_basis = "port 400 Gb/s x 90%";
  JudgePerfPair(p, "auto", std::nullopt);
  EXPECT_EQ(p.verdict, kFail);
  EXPECT_NE(p.reason.find("below the expected 360.0"), std::string::npos) << p.reason;
  p.bw_gbps = 380;
  JudgePerfPair(p, "auto", std::nullopt);
  EXPECT_EQ(p.verdict, kPass);
  model::PairTest none;
  none.reason = "bandwidth to b: connection refused";
  JudgePerfPair(none, "auto", std::nullopt);
  EXPECT_EQ(none.verdict, kFail);
  EXPECT_EQ(none.reason, "bandwidth to b: connection refused");
}

TEST(JudgePath, HoleAndUnreachable) {
  model::PairTest hole;
  hole.path_mtu = 1500;
  hole.local_mtu = 9000;
  JudgePathPair(hole);
  EXPECT_EQ(hole.verdict, kFail);
  EXPECT_NE(hole.reason.find("MTU hole"), std::string::npos);
  model::PairTest gone;
  gone.reason = "no answer";
  JudgePathPair(gone);
  EXPECT_EQ(gone.verdict, kFail);
  EXPECT_NE(gone.reason.find("unreachable"), std::string::npos);
  model::PairTest ok;
  ok.path_mtu = 9000;
  ok.local_mtu = 9000;
  JudgePathPair(ok);
  EXPECT_EQ(ok.verdict, kPass);
}

}  // namespace
}  // namespace fabcheck::ladder
