// `fabcheck gpu`'s link reading (on a fixture sysfs) and its verdicts.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "coll/gpu_copy.h"

namespace fabcheck::coll {
namespace {

void Write(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << text << "\n";
}

TEST(GpuCopy, ReadsThePcieLinkThroughSysRoot) {
  auto dir = std::filesystem::path(::testing::TempDir()) / ("fc-coll-sys-" + std::to_string(::getpid()));
  auto dev = dir / "sys/bus/pci/devices/0000:18:00.0";
  Write(dev / "current_link_speed", "16.0 GT/s PCIe");
  Write(dev / "current_link_width", "8");
  Write(dev / "max_link_speed", "32.0 GT/s PCIe");
  Write(dev / "max_link_width", "16");
  Write(dev / "numa_node", "1");
  auto root = sys::SysRoot::Open(dir.string());
  ASSERT_TRUE(root.ok()) << root.status().ToString();
  model::GpuInfo gpu;
  gpu.pci_bus_id = "0000:18:00.0";
  ReadPcieLink(*root, gpu.pci_bus_id, &gpu);
  EXPECT_DOUBLE_EQ(gpu.pcie_gts, 16.0);
  EXPECT_EQ(gpu.pcie_width, 8);
  EXPECT_DOUBLE_EQ(gpu.pcie_max_gts, 32.0);
  EXPECT_EQ(gpu.pcie_max_width, 16);
  EXPECT_EQ(gpu.numa_node, 1);

  model::GpuInfo missing;
  ReadPcieLink(*root, "0000:99:00.0", &missing);  // absent device: unknown, not a crash
  EXPECT_EQ(missing.pcie_gts, 0);
  EXPECT_EQ(missing.numa_node, -1);
  std::filesystem::remove_all(dir);
}

TEST(GpuCopy, FlagsADowngradedLinkAndASlowCopy) {
  model::GpuCopyReport report;
  model::GpuInfo gpu;
  gpu.index = 0;
  gpu.pci_bus_id = "0000:18:00.0";
  gpu.pcie_gts = 16;
  gpu.pcie_width = 16;
  gpu.pcie_max_gts = 32;
  gpu.pcie_max_width = 16;
  report.gpus.push_back(gpu);
  model::GpuCopyMeasurement fast{"h2d", 0, -1, 0, true, 1 << 28, 10, 55.3, 63.0, "PCIe Gen5 x16"};
  model::GpuCopyMeasurement slow{"d2h", 0, -1, 0, true, 1 << 28, 10, 20.0, 63.0, "PCIe Gen5 x16"};
  model::GpuCopyMeasurement remote{"d2h", 0, -1, 1, false, 1 << 28, 10, 20.0, 63.0, "PCIe Gen5 x16"};
  model::GpuCopyMeasurement d2d{"d2d", 0, -1, -1, true, 1 << 28, 10, 2100, 0, "device memory"};
  report.measurements = {fast, slow, remote, d2d};
  auto findings = GpuCopyFindings(report, 0.7);
  ASSERT_EQ(findings.size(), 4u);
  EXPECT_EQ(findings[0].id, "gpu.pcie.downgraded");
  EXPECT_EQ(findings[0].severity, model::Severity::kWarn);
  EXPECT_EQ(findings[1].severity, model::Severity::kPass);  // 55.3 / 63 = 88%
  EXPECT_EQ(findings[2].severity, model::Severity::kWarn);
  EXPECT_NE(findings[2].message.find("32%"), std::string::npos) << findings[2].message;
  EXPECT_EQ(findings[3].severity, model::Severity::kInfo);  // remote NUMA node: expected to be slower
}

}  // namespace
}  // namespace fabcheck::coll
