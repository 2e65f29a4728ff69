#include "sys/sysroot.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace fabcheck::sys {
namespace {

namespace fs = std::filesystem;

class SysRootTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("fabcheck-sysroot-test-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    // A miniature sysfs: a class link pointing into devices, as the kernel lays it out.
    Write("sys/devices/pci0000:00/0000:00:01.0/0000:18:00.0/infiniband/mlx5_0/fw_ver", "28.39.1002\n");
    Write("sys/devices/pci0000:00/0000:00:01.0/0000:18:00.0/infiniband/mlx5_0/ports/1/rate", "400 Gb/sec (4X NDR)\n");
    Write("sys/devices/pci0000:00/0000:00:01.0/0000:18:00.0/numa_node", "1");
    fs::create_directories(dir_ / "sys/class/infiniband");
    fs::create_symlink("../../devices/pci0000:00/0000:00:01.0/0000:18:00.0/infiniband/mlx5_0",
                       dir_ / "sys/class/infiniband/mlx5_0");
    fs::create_symlink("../../../0000:18:00.0",
                       dir_ / "sys/devices/pci0000:00/0000:00:01.0/0000:18:00.0/infiniband/mlx5_0/device");
    // An absolute link must stay inside the root.
    fs::create_directories(dir_ / "sys/bus/pci/devices");
    fs::create_symlink("/sys/devices/pci0000:00/0000:00:01.0/0000:18:00.0", dir_ / "sys/bus/pci/devices/0000:18:00.0");
  }
  void TearDown() override { fs::remove_all(dir_); }

  void Write(const std::string& rel, const std::string& content) {
    fs::create_directories((dir_ / rel).parent_path());
    std::ofstream(dir_ / rel) << content;
  }

  fs::path dir_;
};

TEST_F(SysRootTest, ReadsThroughLinksInsideTheRoot) {
  auto root = SysRoot::Open(dir_.string());
  ASSERT_TRUE(root.ok()) << root.status().ToString();
  EXPECT_EQ(*root->ReadAttribute("/sys/class/infiniband/mlx5_0/fw_ver"), "28.39.1002");
  EXPECT_EQ(*root->ReadAttribute("/sys/class/infiniband/mlx5_0/device/numa_node"), "1");
  EXPECT_EQ(*root->ReadAttribute("/sys/bus/pci/devices/0000:18:00.0/numa_node"), "1");
  EXPECT_EQ(*root->Resolve("/sys/class/infiniband/mlx5_0/device"), "/sys/devices/pci0000:00/0000:00:01.0/0000:18:00.0");
  EXPECT_EQ(*root->ListDir("/sys/class/infiniband"), std::vector<std::string>{"mlx5_0"});
  EXPECT_EQ(*root->ReadLink("/sys/class/infiniband/mlx5_0/device"), "../../../0000:18:00.0");
}

TEST_F(SysRootTest, MissingFileNamesThePath) {
  auto root = SysRoot::Open(dir_.string());
  ASSERT_TRUE(root.ok());
  auto missing = root->ReadFile("/sys/class/infiniband/mlx5_0/ports/1/state");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("ports/1/state"), std::string::npos);
  EXPECT_NE(missing.status().message().find("ENOENT"), std::string::npos);
}

TEST_F(SysRootTest, NotASysrootIsAClearError) {
  auto empty = fs::temp_directory_path() / ("fabcheck-empty-" + std::to_string(::getpid()));
  fs::create_directories(empty);
  auto root = SysRoot::Open(empty.string());
  fs::remove_all(empty);
  ASSERT_FALSE(root.ok());
  EXPECT_NE(root.status().message().find("is not a sysroot"), std::string::npos);
  EXPECT_NE(root.status().message().find("fabcheck snapshot"), std::string::npos);
  EXPECT_FALSE(SysRoot::Open("/nonexistent/path").ok());
}

TEST_F(SysRootTest, GarbageTarballIsAClearError) {
  auto bad = dir_ / "bad.tar.gz";
  std::ofstream(bad) << "this is not a tarball";
  auto root = SysRoot::Open(bad.string());
  ASSERT_FALSE(root.ok());
  EXPECT_NE(root.status().message().find("bad.tar.gz"), std::string::npos);
}

TEST_F(SysRootTest, RecordedReadsRoundTripThroughACapture) {
  auto root = SysRoot::Open(dir_.string());
  ASSERT_TRUE(root.ok());
  root->StartRecording();
  ASSERT_TRUE(root->ReadAttribute("/sys/class/infiniband/mlx5_0/ports/1/rate").ok());
  ASSERT_TRUE(root->ReadAttribute("/sys/class/infiniband/mlx5_0/device/numa_node").ok());
  ASSERT_TRUE(root->ListDir("/sys/class/infiniband").ok());
  root->RecordMeta("addresses.json", "[]");
  auto capture = dir_ / "capture.tar.gz";
  ASSERT_TRUE(root->WriteCapture(capture.string(), R"({"hostname":"test"})").ok());

  auto replay = SysRoot::Open(capture.string());
  ASSERT_TRUE(replay.ok()) << replay.status().ToString();
  EXPECT_EQ(replay->kind(), SysRoot::Kind::kCapture);
  EXPECT_EQ(*replay->ReadAttribute("/sys/class/infiniband/mlx5_0/ports/1/rate"), "400 Gb/sec (4X NDR)");
  EXPECT_EQ(*replay->ReadAttribute("/sys/class/infiniband/mlx5_0/device/numa_node"), "1");
  EXPECT_EQ(*replay->ListDir("/sys/class/infiniband"), std::vector<std::string>{"mlx5_0"});
  EXPECT_EQ(*replay->ReadMeta("addresses.json"), "[]");
  EXPECT_EQ(*replay->ReadAttribute("/fabcheck/capture.json"), R"({"hostname":"test"})");
  // Not read, so not captured.
  EXPECT_FALSE(replay->ReadFile("/sys/class/infiniband/mlx5_0/fw_ver").ok());
  EXPECT_NE(replay->DisplayPath("/sys/x").find("capture.tar.gz:/sys/x"), std::string::npos);
}

TEST_F(SysRootTest, CaptureToUnwritablePlaceFailsCleanly) {
  auto root = SysRoot::Open(dir_.string());
  ASSERT_TRUE(root.ok());
  root->StartRecording();
  Status s = root->WriteCapture("/nonexistent-dir/x.tar.gz", "{}");
  EXPECT_FALSE(s.ok());
  EXPECT_FALSE(fs::exists("/nonexistent-dir/x.tar.gz.partial"));
}

}  // namespace
}  // namespace fabcheck::sys
