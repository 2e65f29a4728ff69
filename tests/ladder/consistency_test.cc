// Majority and outliers for the settings that must agree cluster-wide.
#include "ladder/consistency.h"

#include <gtest/gtest.h>

namespace fabcheck::ladder {
namespace {

MemberSettings M(const std::string& id, std::map<std::string, std::string> values) { return {id, std::move(values)}; }

const model::ConsistencyCheck& Find(const std::vector<model::ConsistencyCheck>& checks, const std::string& setting) {
  for (const auto& c : checks) {
    if (c.setting == setting) return c;
  }
  static model::ConsistencyCheck none;
  ADD_FAILURE() << "no check " << setting;
  return none;
}

TEST(Consistency, MajorityAndTheOutlierNamed) {
  auto checks = CompareSettings({M("a", {{"netdev_mtu", "1 x 9000"}, {"kernel", "6.1"}}),
                                 M("b", {{"netdev_mtu", "1 x 9000"}, {"kernel", "6.1"}}),
                                 M("c", {{"netdev_mtu", "1 x 1500"}, {"kernel", "6.1"}}),
                                 M("d", {{"netdev_mtu", "1 x 9000"}, {"kernel", "6.5"}})});
  const auto& mtu = Find(checks, "netdev_mtu");
  EXPECT_EQ(mtu.majority, "1 x 9000");
  EXPECT_EQ(mtu.outliers, std::vector<std::string>{"c"});
  EXPECT_EQ(mtu.verdict, model::RungVerdict::kFail);
  const auto& kernel = Find(checks, "kernel");
  EXPECT_EQ(kernel.outliers, std::vector<std::string>{"d"});
  EXPECT_EQ(kernel.verdict, model::RungVerdict::kWarn);  // versions differ: a warning, not a failure
  auto findings = ConsistencyFindings(checks);
  ASSERT_EQ(findings.size(), 2u);
  EXPECT_EQ(findings[0].object, "c");
  EXPECT_EQ(findings[0].severity, model::Severity::kFail);
  EXPECT_NE(findings[0].message.find("1 x 1500 here, 1 x 9000 on most members"), std::string::npos)
      << findings[0].message;
  EXPECT_FALSE(findings[0].remedy.empty());
}

TEST(Consistency, UnknownIsNeitherOutlierNorPassAndATieHasNoMajority) {
  auto checks = CompareSettings({M("a", {{"link_layer", "8 x InfiniBand"}, {"trust_mode", "dscp"}}),
                                 M("b", {{"link_layer", ""}, {"trust_mode", "pcp"}}),
                                 M("c", {{"link_layer", "8 x InfiniBand"}})});
  const auto& ll = Find(checks, "link_layer");
  EXPECT_TRUE(ll.outliers.empty());  // b does not know: not an outlier
  EXPECT_EQ(ll.verdict, model::RungVerdict::kPass);
  EXPECT_EQ(ll.values.at("b"), "");
  const auto& trust = Find(checks, "trust_mode");
  EXPECT_EQ(trust.majority, "");  // 1 vs 1: nobody can say which is right
  EXPECT_EQ(trust.outliers, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(Find(checks, "pfc_priorities").verdict, model::RungVerdict::kNotRun);  // unknown everywhere
}

TEST(Consistency, ExtractsMultisetsFromTheInventory) {
  model::Inventory inv;
  inv.host.kernel = "6.1.0-28-amd64";
  for (int i = 0; i < 2; ++i) {
    model::RdmaDevice d;
    d.name = "mlx5_" + std::to_string(i);
    d.fw_ver = "28.39.1002";
    model::RdmaPort p;
    p.port = 1;
    p.link_layer = "Ethernet";
    p.rate_gbps = i == 0 ? 400 : 200;
    p.width = 4;
    p.nccl_gid_index = 3;
    model::GidEntry g;
    g.index = 3;
    g.type = "RoCE v2";
    p.gids = {g};
    d.ports = {p};
    inv.rdma_devices.push_back(d);
  }
  control::RailInfo rail;
  rail.interface = "eth0";
  rail.mtu = 9000;
  auto s = ExtractSettings("n1", inv, {{"pfc_priorities", "3"}, {"trust_mode", "dscp"}}, {rail});
  EXPECT_EQ(s.values["port_rate"], "1 x 200 Gb/s, 1 x 400 Gb/s");
  EXPECT_EQ(s.values["port_width"], "2 x 4X");
  EXPECT_EQ(s.values["link_layer"], "2 x Ethernet");
  EXPECT_EQ(s.values["gid_type"], "2 x RoCE v2");
  EXPECT_EQ(s.values["nccl_gid_index"], "2 x 3");
  EXPECT_EQ(s.values["netdev_mtu"], "1 x 9000");
  EXPECT_EQ(s.values["firmware"], "2 x 28.39.1002");
  EXPECT_EQ(s.values["pfc_priorities"], "3");
  EXPECT_EQ(s.values["kernel"], "6.1.0-28-amd64");
  EXPECT_EQ(s.values["nccl_version"], "");
}

}  // namespace
}  // namespace fabcheck::ladder
