#include "base/units.h"

#include <gtest/gtest.h>

#include <chrono>

namespace fabcheck {
namespace {

TEST(UnitsTest, ParseSize) {
  EXPECT_EQ(*ParseSize("65536"), 65536u);
  EXPECT_EQ(*ParseSize("64K"), 65536u);
  EXPECT_EQ(*ParseSize("8M"), 8u << 20);
  EXPECT_EQ(*ParseSize("1GiB"), 1u << 30);
  EXPECT_EQ(*ParseSize("0.5K"), 512u);
  EXPECT_FALSE(ParseSize("").ok());
  EXPECT_FALSE(ParseSize("12Q").ok());
  EXPECT_FALSE(ParseSize("-4").ok());
  EXPECT_FALSE(ParseSize("0.3").ok());
}

TEST(UnitsTest, ParseSizeList) {
  auto sweep = ParseSizeList("2:8M");
  ASSERT_TRUE(sweep.ok());
  EXPECT_EQ(sweep->size(), 23u);  // 2^1 .. 2^23
  EXPECT_EQ(sweep->front(), 2u);
  EXPECT_EQ(sweep->back(), 8u << 20);
  EXPECT_EQ(*ParseSizeList("1K,4K"), (std::vector<uint64_t>{1024, 4096}));
  EXPECT_FALSE(ParseSizeList("3:8").ok());
  EXPECT_FALSE(ParseSizeList("8M:2").ok());
}

TEST(UnitsTest, ParseDuration) {
  EXPECT_DOUBLE_EQ(*ParseDurationSeconds("10"), 10);
  EXPECT_DOUBLE_EQ(*ParseDurationSeconds("500ms"), 0.5);
  EXPECT_DOUBLE_EQ(*ParseDurationSeconds("2m"), 120);
  EXPECT_FALSE(ParseDurationSeconds("fast").ok());
}

TEST(UnitsTest, CpuLists) {
  auto cpus = ParseCpuList("0-3,8,10-11\n");
  ASSERT_TRUE(cpus.ok());
  EXPECT_EQ(*cpus, (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(FormatCpuList(*cpus), "0-3,8,10-11");
  EXPECT_TRUE(ParseCpuList("")->empty());
  EXPECT_FALSE(ParseCpuList("3-1").ok());
  // Found by the units fuzzer: the same big range repeated grew a vector of
  // a million entries per repeat (a cpulist from a hostile capture).
  std::string bomb;
  for (int i = 0; i < 2000; ++i) bomb += "0-999999,";
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(ParseCpuList(bomb).ok());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  std::string repeats;
  for (int i = 0; i < 1000; ++i) repeats += "0-3,";
  EXPECT_EQ(*ParseCpuList(repeats), (std::vector<int>{0, 1, 2, 3}));
  // A kernel has at most 8,192 CPUs (NR_CPUS): the last one parses, the next
  // is refused by name, and so is a list whose ranges repeat past the cap.
  EXPECT_EQ(ParseCpuList("0-8191")->size(), 8192u);
  auto beyond = ParseCpuList("0-3,8192");
  ASSERT_FALSE(beyond.ok());
  EXPECT_NE(beyond.status().message().find("CPU 8192 is beyond"), std::string::npos) << beyond.status().message();
  std::string wide;
  for (int i = 0; i < 5; ++i) wide += "0-8191,";
  EXPECT_FALSE(ParseCpuList(wide).ok());
  EXPECT_FALSE(ParseCpuList("a-b").ok());
}

TEST(UnitsTest, IbRate) {
  EXPECT_FALSE(ParseIbRate("nan Gb/sec (4X NDR)").ok());
  EXPECT_FALSE(ParseIbRate("inf Gb/sec (4X NDR)").ok());
  EXPECT_FALSE(ParseIbRate("-400 Gb/sec (4X NDR)").ok());
  auto ndr = ParseIbRate("400 Gb/sec (4X NDR)\n");
  ASSERT_TRUE(ndr.ok());
  EXPECT_DOUBLE_EQ(ndr->gbps, 400);
  EXPECT_EQ(ndr->width, 4);
  EXPECT_EQ(ndr->speed_name, "NDR");
  auto sdr = ParseIbRate("2.5 Gb/sec (1X SDR)");
  ASSERT_TRUE(sdr.ok());
  EXPECT_DOUBLE_EQ(sdr->gbps, 2.5);
  auto old = ParseIbRate("10 Gb/sec (4X)");
  ASSERT_TRUE(old.ok());
  EXPECT_EQ(old->width, 4);
  EXPECT_EQ(old->speed_name, "");
  EXPECT_FALSE(ParseIbRate("N/A (no PMA)").ok());
}

TEST(UnitsTest, Pcie) {
  EXPECT_DOUBLE_EQ(*ParsePcieSpeedGts("32.0 GT/s PCIe"), 32);
  EXPECT_DOUBLE_EQ(*ParsePcieSpeedGts("8 GT/s"), 8);
  EXPECT_FALSE(ParsePcieSpeedGts("Unknown speed").ok());
  EXPECT_EQ(PcieGeneration(32), 5);
  EXPECT_EQ(PcieGeneration(2.5), 1);
  EXPECT_NEAR(PcieLinkGbps(32, 16), 504.1, 0.1);
  EXPECT_NEAR(PcieLinkGbps(5, 8), 32, 1e-9);
}

TEST(UnitsTest, Format) {
  EXPECT_EQ(FormatSize(65536), "64 KiB");
  EXPECT_EQ(FormatSize(3), "3 B");
  EXPECT_EQ(FormatSize(1536), "1.5 KiB");
}

}  // namespace
}  // namespace fabcheck
