// Captures: inventory of a directory == inventory of its snapshot, the
// snapshot holds only what was read, and bad sysroots fail clearly.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "fixtures.h"
#include "inventory/inventory.h"
#include "inventory/snapshot.h"
#include "sys/sysroot.h"

namespace fabcheck::inventory {
namespace {

namespace fs = std::filesystem;
using testing::Comparable;
using testing::FixtureDir;
using testing::ScratchDir;

class InventoryRoundTripTest : public ::testing::TestWithParam<std::string> {};

TEST_P(InventoryRoundTripTest, CaptureReadsLikeTheDirectory) {
  auto dir = sys::SysRoot::Open(FixtureDir(GetParam()));
  ASSERT_TRUE(dir.ok()) << dir.status().ToString();
  nlohmann::json from_dir = Comparable(ReadInventory(*dir));

  std::string capture = ScratchDir() + "/" + GetParam() + ".tar.gz";
  auto snap_root = sys::SysRoot::Open(FixtureDir(GetParam()));
  ASSERT_TRUE(snap_root.ok());
  auto snap = TakeSnapshot(*snap_root, capture, "test");
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  EXPECT_EQ(Comparable(snap->inventory), from_dir);  // recording does not change what is read
  auto info = nlohmann::json::parse(snap->info_json);
  EXPECT_EQ(info["fabcheck_version"], "test");
  EXPECT_TRUE(info.contains("taken_at"));

  auto cap = sys::SysRoot::Open(capture);
  ASSERT_TRUE(cap.ok()) << cap.status().ToString();
  nlohmann::json from_capture = Comparable(ReadInventory(*cap));
  if (GetParam() == "broken") {
    // A file that failed to read is not in the capture, so its warning says
    // ENOENT there (or nothing, for optional files); every value is the same.
    from_dir.erase("warnings");
    from_capture.erase("warnings");
  }
  EXPECT_EQ(from_capture, from_dir) << nlohmann::json::diff(from_dir, from_capture).dump(1);
  EXPECT_TRUE(cap->ReadFile("/fabcheck/capture.json").ok());
}

INSTANTIATE_TEST_SUITE_P(Fixtures, InventoryRoundTripTest, ::testing::Values("dgx-h100", "roce", "broken"));

TEST(InventorySnapshotTest, NeverReadsConfigVpdOrOtherUnneededFiles) {
  std::string capture = ScratchDir() + "/traps.tar.gz";
  auto root = sys::SysRoot::Open(FixtureDir("dgx-h100"));
  ASSERT_TRUE(root.ok());
  ASSERT_TRUE(TakeSnapshot(*root, capture, "test").ok());
  auto cap = sys::SysRoot::Open(capture);
  ASSERT_TRUE(cap.ok());
  // The fixture plants config and vpd in every function; none may be read.
  int files = 0;
  // Walks the capture through the SysRoot itself (links skipped: they point
  // at directories walked anyway).
  std::vector<std::string> todo = {""};
  while (!todo.empty()) {
    std::string dir = todo.back();
    todo.pop_back();
    auto names = cap->ListDir(dir.empty() ? "/" : dir);
    ASSERT_TRUE(names.ok()) << names.status().message();
    for (const auto& name : *names) {
      std::string path = dir + "/" + name;
      if (cap->ReadLink(path).ok()) continue;
      if (cap->IsDirectory(path)) {
        todo.push_back(path);
        continue;
      }
      ++files;
      auto content = cap->ReadFile(path);
      ASSERT_TRUE(content.ok()) << content.status().message();
      EXPECT_EQ(content->find("MUST-NOT-BE-READ"), std::string::npos) << path;
    }
  }
  EXPECT_GT(files, 100);
}

TEST(InventorySnapshotTest, RegisteredReadersAddTheirFiles) {
  // How doctor and the exporter hook in: their reads land in the capture.
  static bool ran = false;
  RegisterSnapshotReader("test-extra", [](const sys::SysRoot& root) {
    ran = true;
    (void)root.ReadFile("/sys/devices/system/node/online");
    root.RecordMeta("test-extra.json", "{}\n");
  });
  std::string capture = ScratchDir() + "/extra.tar.gz";
  auto root = sys::SysRoot::Open(FixtureDir("roce"));
  ASSERT_TRUE(root.ok());
  ASSERT_TRUE(TakeSnapshot(*root, capture, "test").ok());
  EXPECT_TRUE(ran);
  auto cap = sys::SysRoot::Open(capture);
  ASSERT_TRUE(cap.ok());
  EXPECT_EQ(*cap->ReadAttribute("/sys/devices/system/node/online"), "0-0");
  EXPECT_TRUE(cap->ReadMeta("test-extra.json").ok());
  auto names = SnapshotReaderNames();
  EXPECT_EQ(names.front(), "inventory");
  EXPECT_EQ(names.back(), "test-extra");
}

TEST(InventoryBadSysrootTest, NotASysrootIsAClearError) {
  std::string empty = ScratchDir() + "/empty-dir";
  fs::create_directories(empty);
  auto dir = sys::SysRoot::Open(empty);
  ASSERT_FALSE(dir.ok());
  EXPECT_NE(dir.status().message().find("is not a sysroot"), std::string::npos) << dir.status().message();
  std::string garbage = ScratchDir() + "/garbage.tar.gz";
  std::ofstream(garbage) << "this is not a tarball";
  auto tar = sys::SysRoot::Open(garbage);
  ASSERT_FALSE(tar.ok());
  EXPECT_NE(tar.status().message().find("fabcheck snapshot"), std::string::npos) << tar.status().message();
}

TEST(InventoryBadSysrootTest, EmptySysTreeGivesAnEmptyInventoryWithoutWarnings) {
  std::string bare = ScratchDir() + "/bare";
  fs::create_directories(bare + "/sys");
  auto root = sys::SysRoot::Open(bare);
  ASSERT_TRUE(root.ok());
  auto inv = ReadInventory(*root);
  EXPECT_TRUE(inv.rdma_devices.empty());
  EXPECT_TRUE(inv.gpus.empty());
  EXPECT_FALSE(inv.rdma_sysfs_present);
  EXPECT_FALSE(inv.verbs.probed);
  EXPECT_TRUE(inv.warnings.empty());
}

}  // namespace
}  // namespace fabcheck::inventory
