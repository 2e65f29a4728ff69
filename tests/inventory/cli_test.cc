// The commands as a user runs them (the fabcheck binary).
#include <gtest/gtest.h>

#include <sstream>

#include "fixtures.h"

namespace fabcheck::inventory {
namespace {

using testing::FixtureDir;
using testing::RunCommand;
using testing::ScratchDir;

std::string Bin() { return FABCHECK_BINARY; }

TEST(InventoryCliTest, HumanTablesFitEightyColumns) {
  for (const std::string name : {"dgx-h100", "roce", "broken"}) {
    std::string out;
    int rc = RunCommand(Bin() + " inventory --matrix --sysroot " + FixtureDir(name), &out);
    EXPECT_EQ(rc, name == "broken" ? 1 : 0) << out;
    std::istringstream lines(out);
    std::string line;
    int count = 0;
    while (std::getline(lines, line)) {
      ++count;
      // The header and warnings name host paths, which can be long.
      if (line.rfind("fabcheck inventory:", 0) == 0 || line.rfind("  /", 0) == 0) continue;
      EXPECT_LE(line.size(), 80u) << name << ": " << line;
    }
    EXPECT_GT(count, 10) << out;
  }
}

TEST(InventoryCliTest, ShowsMatrixRailsAndFaults) {
  std::string out;
  RunCommand(Bin() + " inventory --matrix --sysroot " + FixtureDir("broken"), &out);
  EXPECT_NE(out.find("DOWN"), std::string::npos) << out;
  EXPECT_NE(out.find("Polling"), std::string::npos) << out;
  EXPECT_NE(out.find("Gen4 x8/Gen5 x16 !"), std::string::npos) << out;
  EXPECT_NE(out.find("GPU2>"), std::string::npos) << out;
  EXPECT_NE(out.find("SYS"), std::string::npos) << out;
  EXPECT_NE(out.find("fw_ver: unreadable: ENOENT"), std::string::npos) << out;
}

TEST(InventoryCliTest, JsonIsVersioned) {
  std::string out;
  ASSERT_EQ(RunCommand(Bin() + " inventory --json --sysroot " + FixtureDir("roce") + " 2>/dev/null", &out), 0);
  auto j = nlohmann::json::parse(out);
  EXPECT_EQ(j["schema"], "fabcheck.inventory/v1");
  EXPECT_EQ(j["rdma_devices"][0]["ports"][0]["nccl_gid_index"], 5);
}

TEST(InventoryCliTest, NotASysrootExitsThreeWithAClearMessage) {
  std::string out;
  EXPECT_EQ(RunCommand(Bin() + " inventory --sysroot " + ScratchDir(), &out), 3);
  EXPECT_NE(out.find("is not a sysroot"), std::string::npos) << out;
  EXPECT_EQ(RunCommand(Bin() + " inventory --sysroot /nonexistent/x.tar.gz", &out), 3);
  EXPECT_NE(out.find("ENOENT"), std::string::npos) << out;
}

TEST(InventoryCliTest, HelpTeachesWithExamples) {
  std::string out;
  EXPECT_EQ(RunCommand(Bin() + " inventory --help", &out), 0);
  EXPECT_NE(out.find("Examples:"), std::string::npos);
  EXPECT_NE(out.find("--sysroot"), std::string::npos);
  EXPECT_NE(out.find("snapshot -o"), std::string::npos);
}

TEST(InventorySnapshotCliTest, SnapshotThenInventoryOfTheCapture) {
  std::string capture = ScratchDir() + "/cli.tar.gz";
  std::string out;
  ASSERT_EQ(RunCommand(Bin() + " snapshot --sysroot " + FixtureDir("dgx-h100") + " -o " + capture, &out), 0) << out;
  EXPECT_NE(out.find("10 RDMA device(s)"), std::string::npos) << out;
  std::string from_dir, from_capture;
  RunCommand(Bin() + " inventory --json --sysroot " + FixtureDir("dgx-h100") + " 2>/dev/null", &from_dir);
  RunCommand(Bin() + " inventory --json --sysroot " + capture + " 2>/dev/null", &from_capture);
  auto a = nlohmann::json::parse(from_dir), b = nlohmann::json::parse(from_capture);
  a.erase("source");
  b.erase("source");
  EXPECT_EQ(a, b);
  EXPECT_NE(RunCommand(Bin() + " snapshot", &out), 0);  // -o is required
}

TEST(InventoryCliTest, LiveNodeNeverFails) {
  // Whatever this machine is (no RDMA here: ENOSYS), inventory runs and says so.
  std::string out;
  int rc = RunCommand(Bin() + " inventory", &out);
  EXPECT_TRUE(rc == 0 || rc == 1) << out;
  EXPECT_NE(out.find("RDMA ports"), std::string::npos) << out;
  EXPECT_NE(out.find("libibverbs:"), std::string::npos) << out;
}

}  // namespace
}  // namespace fabcheck::inventory
