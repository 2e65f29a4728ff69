// The typed readers of the net class, PCI functions, NUMA nodes, /proc and the
// RDMA port files (sys/net_class.h, sys/pci.h, sys/numa.h, sys/procfs.h,
// sys/infiniband.h), on a small tree laid out as the kernel lays out sysfs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "sys/infiniband.h"
#include "sys/net_class.h"
#include "sys/numa.h"
#include "sys/pci.h"
#include "sys/procfs.h"

namespace fabcheck::sys {
namespace {

namespace fs = std::filesystem;

class ReadersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("fabcheck-readers-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    const std::string nic = "sys/devices/pci0000:17/0000:17:00.0/0000:18:00.0";
    Write(nic + "/numa_node", "1\n");
    Write(nic + "/net/ens1np0/mtu", "9000\n");
    Write(nic + "/net/ens1np0/statistics/rx_bytes", "123456\n");
    Write(nic + "/net/ens1np0/statistics/tx_bytes", "654321\n");
    Write(nic + "/net/ens1np0/statistics/rx_dropped", "garbage\n");
    Link("sys/class/net/ens1np0", "../../devices/pci0000:17/0000:17:00.0/0000:18:00.0/net/ens1np0");
    Link(nic + "/net/ens1np0/device", "../../../0000:18:00.0");
    Link(nic + "/net/ens1np0/upper_ens1np0.100", "../../../../../virtual/net/ens1np0.100");
    Write("sys/devices/virtual/net/ens1np0.100/mtu", "nine thousand\n");
    Link("sys/class/net/ens1np0.100", "../../devices/virtual/net/ens1np0.100");
    Write(nic + "/infiniband/mlx5_0/ports/1/gid_attrs/ndevs/0", "ens1np0\n");
    Write(nic + "/infiniband/mlx5_0/ports/1/gid_attrs/ndevs/1", "ens1np0.100\n");
    Write(nic + "/infiniband/mlx5_0/ports/1/gid_attrs/ndevs/2", "ens1np0\n");
    Write(nic + "/infiniband/mlx5_0/ports/2/state", "1: DOWN\n");
    Write(nic + "/infiniband/mlx5_0/ports/lost+found", "");
    Link("sys/class/infiniband/mlx5_0", "../../devices/pci0000:17/0000:17:00.0/0000:18:00.0/infiniband/mlx5_0");
    Link("sys/bus/pci/devices/0000:18:00.0", "../../../devices/pci0000:17/0000:17:00.0/0000:18:00.0");
    Write("sys/devices/system/node/node0/cpulist", "0-3\n");
    Write("sys/devices/system/node/node1/cpulist", "4-5,8\n");
    Write("sys/devices/system/node/node10/cpulist", "garbage\n");
    Write("sys/devices/system/node/possible", "0-1\n");
    Write("proc/net/route",
          "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
          "eno1\t00000000\t0102A8C0\t0003\t0\t0\t100\t00000000\t0\t0\t0\n"
          "ens1np0\t0000000A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n");
    Write("proc/net/vlan/config",
          "VLAN Dev name  | VLAN ID\nName-Type: VLAN_NAME_TYPE_RAW_PLUS_VID_NO_PAD\n"
          "ens1np0.100    | 100  | ens1np0\n");
    auto root = SysRoot::Open(dir_.string());
    ASSERT_TRUE(root.ok()) << root.status().message();
    root_.emplace(*root);
  }
  void TearDown() override { fs::remove_all(dir_); }

  void Write(const std::string& rel, const std::string& content) {
    fs::create_directories((dir_ / rel).parent_path());
    std::ofstream(dir_ / rel) << content;
  }
  void Link(const std::string& rel, const std::string& target) {
    fs::create_directories((dir_ / rel).parent_path());
    fs::create_symlink(target, dir_ / rel);
  }
  const SysRoot& root() const { return *root_; }

  fs::path dir_;
  std::optional<SysRoot> root_;
};

TEST_F(ReadersTest, NetClassFilesAndValues) {
  EXPECT_EQ(net_class::Interface("ens1np0").Mtu(), "/sys/class/net/ens1np0/mtu");
  EXPECT_EQ(net_class::Interface("ens1np0").EcnEnable("roce_np", 3), "/sys/class/net/ens1np0/ecn/roce_np/enable/3");
  auto mtu = net_class::ReadMtu(root(), "ens1np0");
  ASSERT_TRUE(mtu.ok()) << mtu.status().message();
  EXPECT_EQ(*mtu, 9000);
  auto garbage = net_class::ReadMtu(root(), "ens1np0.100");
  ASSERT_FALSE(garbage.ok());
  EXPECT_NE(garbage.status().message().find("ens1np0.100/mtu"), std::string::npos) << garbage.status().message();
  EXPECT_EQ(net_class::ReadNumaNode(root(), "ens1np0"), 1);
  EXPECT_EQ(net_class::ReadNumaNode(root(), "ens1np0.100"), std::nullopt);  // virtual: no device
  EXPECT_EQ(net_class::UpperDevices(root(), "ens1np0"), std::vector<std::string>{"ens1np0.100"});
  auto stats = net_class::ReadStatistics(root(), "ens1np0");
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(*stats, (std::map<std::string, uint64_t>{{"rx_bytes", 123456}, {"tx_bytes", 654321}}));
  EXPECT_EQ(net_class::ReadStatistics(root(), "ens1np0.100").status().code(), StatusCode::kNotFound);
}

TEST_F(ReadersTest, RdmaPortsAndTheirGidNetdevs) {
  auto devices = infiniband::ListDevices(root());
  ASSERT_TRUE(devices.ok());
  EXPECT_EQ(*devices, std::vector<std::string>{"mlx5_0"});
  auto ports = infiniband::ListPorts(root(), "mlx5_0");
  ASSERT_TRUE(ports.ok());
  EXPECT_EQ(*ports, (std::vector<int>{1, 2}));  // lost+found is no port
  EXPECT_EQ(infiniband::PortGidNetdevs(root(), "mlx5_0", 1), (std::vector<std::string>{"ens1np0", "ens1np0.100"}));
  EXPECT_TRUE(infiniband::PortGidNetdevs(root(), "mlx5_0", 2).empty());
  EXPECT_EQ(infiniband::Port("mlx5_0", 1).GidType("3"), "/sys/class/infiniband/mlx5_0/ports/1/gid_attrs/types/3");
  EXPECT_EQ(infiniband::DeviceOfPath("/sys/class/infiniband/mlx5_0/ports/1/rate"), "mlx5_0");
  EXPECT_EQ(infiniband::DeviceOfPath("/sys/class/net/ens1np0/mtu"), "");
  EXPECT_EQ(infiniband::VerbsIbdevFile("uverbs0"), "/sys/class/infiniband_verbs/uverbs0/ibdev");
}

TEST_F(ReadersTest, PciFunctionsAndNumaNodes) {
  EXPECT_EQ(pci::Function("0000:18:00.0").Attribute("max_link_width"),
            "/sys/bus/pci/devices/0000:18:00.0/max_link_width");
  auto functions = pci::ListFunctions(root());
  ASSERT_TRUE(functions.ok());
  EXPECT_EQ(*functions, std::vector<std::string>{"0000:18:00.0"});
  EXPECT_EQ(numa::ListNodes(root()), (std::vector<int>{0, 1, 10}));
  EXPECT_EQ(numa::NodeId("node7"), 7);
  EXPECT_EQ(numa::NodeId("possible"), std::nullopt);
  auto cpus = numa::ReadNodeCpus(root(), 1);
  ASSERT_TRUE(cpus.ok());
  EXPECT_EQ(*cpus, (std::vector<int>{4, 5, 8}));
  auto bad = numa::ReadNodeCpus(root(), 10);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("node10/cpulist"), std::string::npos) << bad.status().message();
  EXPECT_FALSE(numa::ReadNodeCpus(root(), 3).ok());
}

TEST_F(ReadersTest, ProcFiles) {
  auto defaults = procfs::ReadDefaultRouteInterfaces(root());
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(*defaults, std::set<std::string>{"eno1"});
  auto vlans = procfs::ReadVlanConfig(root());
  ASSERT_EQ(vlans.size(), 1u);
  EXPECT_EQ(vlans["ens1np0.100"].parent, "ens1np0");
  EXPECT_EQ(vlans["ens1np0.100"].id, 100);
  EXPECT_TRUE(procfs::ParseVlanConfig("").empty());
  EXPECT_TRUE(procfs::ParseDefaultRouteInterfaces("Iface\tDestination\n").empty());
  EXPECT_EQ(procfs::ModuleDir("mlx5_core"), "/sys/module/mlx5_core");
}

}  // namespace
}  // namespace fabcheck::sys
