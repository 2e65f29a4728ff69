// The /sys/class/infiniband layout and value formats (sys/infiniband.h).
#include "sys/infiniband.h"

#include <gtest/gtest.h>

namespace fabcheck::sys::infiniband {
namespace {

TEST(Infiniband, Paths) {
  EXPECT_EQ(PortDir("mlx5_0", 1), "/sys/class/infiniband/mlx5_0/ports/1");
  EXPECT_EQ(PortFile("mlx5_0", 1, "state"), "/sys/class/infiniband/mlx5_0/ports/1/state");
  EXPECT_EQ(HwCountersDir("mlx5_3", 2), "/sys/class/infiniband/mlx5_3/ports/2/hw_counters");
  EXPECT_EQ(CountersDir("rxe0", 1), "/sys/class/infiniband/rxe0/ports/1/counters");
  EXPECT_EQ(NumaNodeFile("mlx5_0"), "/sys/class/infiniband/mlx5_0/device/numa_node");
  EXPECT_EQ(PortsDir("mlx5_0"), "/sys/class/infiniband/mlx5_0/ports");
}

TEST(Infiniband, PortStateAsTheKernelWritesIt) {
  auto active = ParsePortState("4: ACTIVE\n");
  ASSERT_TRUE(active);
  EXPECT_EQ(active->code, 4);
  EXPECT_EQ(active->name, "ACTIVE");
  auto phy = ParsePortState("7: Phy Test");
  ASSERT_TRUE(phy);
  EXPECT_EQ(phy->name, "Phy Test");
  auto up = ParsePortState("5: LinkUp");
  ASSERT_TRUE(up);
  EXPECT_EQ(up->name, "LinkUp");
  for (const char* bad : {"", "ACTIVE", "4", "4:", "x: ACTIVE", "-1: DOWN", "999: ACTIVE"}) {
    EXPECT_FALSE(ParsePortState(bad)) << bad;
  }
}

}  // namespace
}  // namespace fabcheck::sys::infiniband
