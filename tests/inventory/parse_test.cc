// Pure parsers and decisions: GIDs and NCCL's GID choice, distance classes,
// rails, helper parsers, the model's JSON round trip.
#include <gtest/gtest.h>

#include "fabcheck/model/inventory.h"
#include "inventory/gid.h"
#include "inventory/pci.h"
#include "inventory/reader.h"
#include "inventory/topology.h"

namespace fabcheck::inventory {
namespace {

using model::PathType;

model::GidEntry Gid(int index, const std::string& text, const std::string& type, const std::string& ndev = "eth0") {
  model::GidEntry g;
  g.index = index;
  EXPECT_TRUE(ParseGid(text, &g)) << text;
  g.type = type;
  g.netdev = ndev;
  return g;
}

TEST(InventoryGidTest, ParsesIpv4MappedIpv6AndLinkLocal) {
  model::GidEntry g;
  ASSERT_TRUE(ParseGid("0000:0000:0000:0000:0000:ffff:0a00:0a05\n", &g));
  EXPECT_TRUE(g.ipv4);
  EXPECT_FALSE(g.link_local);
  EXPECT_EQ(g.ip, "10.0.10.5");
  ASSERT_TRUE(ParseGid("fe80:0000:0000:0000:ba59:9fff:fed4:4a2e", &g));
  EXPECT_FALSE(g.ipv4);
  EXPECT_TRUE(g.link_local);
  EXPECT_EQ(g.ip, "fe80::ba59:9fff:fed4:4a2e");
  ASSERT_TRUE(ParseGid("2001:0db8:0000:0001:0000:0000:0000:0005", &g));
  EXPECT_EQ(g.ip, "2001:db8:0:1::5");
  EXPECT_FALSE(ParseGid("garbage", &g));
  EXPECT_FALSE(ParseGid("fe80:zzzz:0000:0000:0000:0000:0000:0000", &g));
  EXPECT_FALSE(ParseGid("fe80:0000:0000:0000:0000:0000:0000", &g));
  EXPECT_TRUE(IsEmptyGid("0000:0000:0000:0000:0000:0000:0000:0000\n"));
  EXPECT_TRUE(IsEmptyGid("fe80:0000:0000:0000:0000:0000:0000:0000"));
  EXPECT_FALSE(IsEmptyGid("fe80:0000:0000:0000:ba59:9fff:fed4:4a2e"));
}

TEST(InventoryGidTest, NcclPicksTheFirstRoceV2Ipv4NonLinkLocalEntry) {
  std::vector<model::GidEntry> table = {
      Gid(0, "fe80:0000:0000:0000:ba59:9fff:fed4:4a2e", "IB/RoCE v1"),
      Gid(1, "fe80:0000:0000:0000:ba59:9fff:fed4:4a2e", "RoCE v2"),
      Gid(2, "2001:0db8:0000:0001:0000:0000:0000:0005", "IB/RoCE v1"),
      Gid(3, "2001:0db8:0000:0001:0000:0000:0000:0005", "RoCE v2"),  // the hard-coded "3" is IPv6 here
      Gid(4, "0000:0000:0000:0000:0000:ffff:0a64:0005", "IB/RoCE v1", "eth0.100"),
      Gid(5, "0000:0000:0000:0000:0000:ffff:0a64:0005", "RoCE v2", "eth0.100"),
  };
  EXPECT_EQ(PickNcclGidIndex("Ethernet", table), 5);
  EXPECT_EQ(PickNcclGidIndex("InfiniBand", table), 0);
  EXPECT_EQ(PickNcclGidIndex("", table), std::nullopt);
  table.pop_back();  // only a v1 IPv4 entry left: NCCL finds nothing
  EXPECT_EQ(PickNcclGidIndex("Ethernet", table), std::nullopt);
}

model::PciFunction Fn(const std::string& rc, std::vector<std::string> bridges, std::optional<int> numa) {
  model::PciFunction f;
  f.root_complex = rc;
  f.numa_node = numa;
  for (auto& b : bridges) f.path.push_back({b, "", "", "0x060400", "", {}});
  return f;
}

TEST(InventoryTopologyTest, ClassifiesAsNvidiaSmiDoes) {
  auto gpu = Fn("pci0000:15", {"0000:15:01.0", "0000:16:00.0", "0000:17:01.0"}, 0);
  auto same_switch = Fn("pci0000:15", {"0000:15:01.0", "0000:16:00.0", "0000:17:00.0"}, 0);
  auto deeper = Fn("pci0000:15", {"0000:15:01.0", "0000:16:00.0", "0000:17:02.0", "0000:30:00.0", "0000:31:00.0"}, 0);
  auto other_port = Fn("pci0000:15", {"0000:15:02.0"}, 0);
  auto other_host = Fn("pci0000:3d", {"0000:3d:01.0"}, 0);
  auto other_socket = Fn("pci0000:97", {"0000:97:01.0"}, 1);
  auto unknown_numa = Fn("pci0000:97", {"0000:97:01.0"}, std::nullopt);
  EXPECT_EQ(Classify(gpu, same_switch), PathType::kPix);
  EXPECT_EQ(Classify(gpu, deeper), PathType::kPxb);
  EXPECT_EQ(Classify(gpu, other_port), PathType::kPhb);
  EXPECT_EQ(Classify(gpu, other_host), PathType::kNode);
  EXPECT_EQ(Classify(gpu, other_socket), PathType::kSys);
  EXPECT_EQ(Classify(gpu, unknown_numa), PathType::kUnknown);
  EXPECT_EQ(Classify(gpu, Fn("", {}, 0)), PathType::kUnknown);
  // A VM: no bridges, one host bridge, NUMA -1 everywhere.
  EXPECT_EQ(Classify(Fn("pci0000:00", {}, std::nullopt), Fn("pci0000:00", {}, std::nullopt)), PathType::kPhb);
}

TEST(InventoryTopologyTest, RailsBalanceGpusOverEquallyNearNics) {
  // 4 GPUs, 2 RDMA NICs, all on one host bridge (PHB to each): two GPUs per NIC.
  std::vector<model::Gpu> gpus(4);
  for (int i = 0; i < 4; ++i) {
    gpus[i].index = i;
    gpus[i].pci = Fn("pci0000:00", {"0000:00:0" + std::to_string(i) + ".0"}, 0);
  }
  std::vector<model::Nic> nics(3);
  nics[0].label = "mlx5_0";
  nics[0].rdma_devices = {"mlx5_0"};
  nics[0].pci = Fn("pci0000:00", {"0000:00:10.0"}, 0);
  nics[1].label = "mlx5_1";
  nics[1].rdma_devices = {"mlx5_1"};
  nics[1].pci = Fn("pci0000:00", {"0000:00:11.0"}, 0);
  nics[2].label = "eno1";  // no RDMA: never a rail while RDMA NICs exist
  nics[2].pci = Fn("pci0000:00", {"0000:00:01.0"}, 0);
  gpus[3].pci = Fn("pci0000:00", {"0000:00:01.0", "0000:01:00.0"}, 0);  // shares a port with eno1 only
  auto t = BuildTopology(gpus, nics);
  ASSERT_EQ(t.rails.size(), 4u);
  int on0 = 0, on1 = 0;
  for (const auto& r : t.rails) {
    EXPECT_NE(r.nic, "eno1");
    on0 += r.nic == "mlx5_0";
    on1 += r.nic == "mlx5_1";
    EXPECT_TRUE(r.shared);
  }
  EXPECT_EQ(on0, 2);
  EXPECT_EQ(on1, 2);
  EXPECT_EQ(t.distance[3][2], PathType::kPix);
}

TEST(InventoryTopologyTest, ConstrainedGpuChoosesFirst) {
  // GPU1 is PIX to mlx5_0 only; GPU0 is PHB to both. Taking GPUs in index
  // order would give GPU0 mlx5_0 and crowd GPU1; the constrained GPU goes first.
  std::vector<model::Gpu> gpus(2);
  gpus[0].index = 0;
  gpus[0].pci = Fn("pci0000:00", {"0000:00:02.0"}, 0);
  gpus[1].index = 1;
  gpus[1].pci = Fn("pci0000:00", {"0000:00:01.0", "0000:01:00.0", "0000:02:01.0"}, 0);
  std::vector<model::Nic> nics(2);
  nics[0].label = "mlx5_0";
  nics[0].rdma_devices = {"mlx5_0"};
  nics[0].pci = Fn("pci0000:00", {"0000:00:01.0", "0000:01:00.0", "0000:02:00.0"}, 0);
  nics[1].label = "mlx5_1";
  nics[1].rdma_devices = {"mlx5_1"};
  nics[1].pci = Fn("pci0000:00", {"0000:00:03.0"}, 0);
  auto t = BuildTopology(gpus, nics);
  EXPECT_EQ(t.distance[1][0], PathType::kPix);
  EXPECT_EQ(t.distance[0][0], PathType::kPhb);
  EXPECT_EQ(t.rails[1].nic, "mlx5_0");
  EXPECT_EQ(t.rails[0].nic, "mlx5_1");
  EXPECT_FALSE(t.rails[0].shared);
}

TEST(InventoryReaderHelpersTest, NaturalOrderBdfAndStateParsing) {
  EXPECT_TRUE(NaturalLess("mlx5_2", "mlx5_10"));
  EXPECT_FALSE(NaturalLess("mlx5_10", "mlx5_2"));
  EXPECT_TRUE(NaturalLess("eth0", "eth0.100"));
  EXPECT_TRUE(LooksLikeBdf("0000:18:00.0"));
  EXPECT_FALSE(LooksLikeBdf("pci0000:18"));
  EXPECT_FALSE(LooksLikeBdf("0000:18:00"));
}

TEST(InventoryPciTest, ClassifiesByClassAndVendor) {
  EXPECT_EQ(ClassifyPci("0x030200", "0x10de"), PciKind::kGpu);
  EXPECT_EQ(ClassifyPci("0x030000", "0x10de"), PciKind::kGpu);
  EXPECT_EQ(ClassifyPci("0x030000", "0x1a03"), PciKind::kOther);  // a BMC's VGA is no GPU
  EXPECT_EQ(ClassifyPci("0x068000", "0x10de"), PciKind::kNvSwitch);
  EXPECT_EQ(ClassifyPci("0x020700", "0x15b3"), PciKind::kNic);
  EXPECT_EQ(ClassifyPci("0x020000", "0x1af4"), PciKind::kNic);
  EXPECT_EQ(ClassifyPci("0x060400", "0x1000"), PciKind::kOther);
}

TEST(InventoryModelTest, JsonRoundTripsAndRejectsOtherSchemas) {
  model::Inventory inv;
  inv.source = "directory /x";
  model::RdmaDevice d;
  d.name = "mlx5_0";
  model::RdmaPort p;
  p.port = 1;
  p.rate_gbps = 400;
  p.nccl_gid_index = 3;
  d.ports.push_back(p);
  inv.rdma_devices.push_back(d);
  model::NetDevice n;
  n.name = "eth0";
  n.addresses_known = true;
  n.addresses.push_back({"inet", "10.0.0.1", 24});
  inv.netdevs.push_back(n);
  inv.topology.gpus = {"GPU0"};
  inv.topology.nics = {"mlx5_0"};
  inv.topology.distance = {{PathType::kPix}};
  inv.topology.rails = {{0, "mlx5_0", PathType::kPix, false}};
  nlohmann::json j = inv;
  EXPECT_EQ(j["schema"], "fabcheck.inventory/v1");
  EXPECT_TRUE(j["rdma_devices"][0]["ports"][0]["lid"].is_null());  // unknown is null, not 0
  std::string error;
  auto back = model::ParseInventoryJson(j.dump(), &error);
  ASSERT_TRUE(back.has_value()) << error;
  EXPECT_EQ(nlohmann::json(*back), j);
  j["schema"] = "fabcheck.perf/v1";
  EXPECT_FALSE(model::ParseInventoryJson(j.dump(), &error).has_value());
  EXPECT_NE(error.find("fabcheck.inventory/v1"), std::string::npos);
  EXPECT_FALSE(model::ParseInventoryJson("{", &error).has_value());
}

}  // namespace
}  // namespace fabcheck::inventory
