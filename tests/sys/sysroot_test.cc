#include "sys/sysroot.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <thread>

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


TEST_F(SysRootTest, CaptureOntoANonRegularFileStreamsOrRefusesButNeverRenames) {
  auto root = SysRoot::Open(dir_.string());
  ASSERT_TRUE(root.ok());
  root->StartRecording();
  ASSERT_TRUE(root->ReadAttribute("/sys/class/infiniband/mlx5_0/fw_ver").ok());

  // A character device is streamed into and stays a device: one of our own
  // as root (a regression must not replace the machine's /dev/null).
  std::string device = "/dev/null";
  if (::geteuid() == 0) {
    device = (dir_ / "null").string();
    ASSERT_EQ(::mknod(device.c_str(), S_IFCHR | 0666, makedev(1, 3)), 0);
  }
  ASSERT_TRUE(root->WriteCapture(device, "{}").ok());
  EXPECT_TRUE(fs::is_character_file(device));

  // A FIFO: the reader gets the whole capture.
  std::string fifo = (dir_ / "out.fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string received;
  std::thread reader([&] {
    std::ifstream in(fifo, std::ios::binary);
    received.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  });
  Status streamed = root->WriteCapture(fifo, "{}");
  reader.join();
  ASSERT_TRUE(streamed.ok()) << streamed.ToString();
  EXPECT_TRUE(fs::is_fifo(fifo));
  ASSERT_GT(received.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(received[0]), 0x1f);  // gzip magic
  EXPECT_EQ(static_cast<unsigned char>(received[1]), 0x8b);

  // A folder is refused with a hint.
  Status folder = root->WriteCapture(dir_.string(), "{}");
  ASSERT_FALSE(folder.ok());
  EXPECT_NE(folder.message().find("it is a folder"), std::string::npos) << folder.message();
  EXPECT_TRUE(fs::is_directory(dir_));
}

TEST_F(SysRootTest, CaptureKeepsALinkAndNeverWritesThroughAPlantedPartialFile) {
  auto root = SysRoot::Open(dir_.string());
  ASSERT_TRUE(root.ok());
  root->StartRecording();
  ASSERT_TRUE(root->ReadAttribute("/sys/class/infiniband/mlx5_0/fw_ver").ok());
  fs::path real = dir_ / "real.tar.gz";
  std::ofstream(real) << "old";
  fs::create_symlink(real, dir_ / "link.tar.gz");
  // Someone plants the name the old code wrote to first.
  fs::path victim = dir_ / "victim";
  std::ofstream(victim) << "original";
  fs::create_symlink(victim, dir_ / "link.tar.gz.partial");
  fs::create_symlink(victim, dir_ / "real.tar.gz.partial");

  ASSERT_TRUE(root->WriteCapture((dir_ / "link.tar.gz").string(), "{}").ok());
  EXPECT_TRUE(fs::is_symlink(dir_ / "link.tar.gz"));
  EXPECT_GT(fs::file_size(real), 3u);
  std::ifstream in(victim);
  std::string content;
  in >> content;
  EXPECT_EQ(content, "original");
  auto replay = SysRoot::Open(real.string());
  ASSERT_TRUE(replay.ok()) << replay.status().ToString();
  EXPECT_EQ(*replay->ReadAttribute("/sys/class/infiniband/mlx5_0/fw_ver"), "28.39.1002");
  // No temporary file left beside it.
  for (auto& e : fs::directory_iterator(dir_)) {
    EXPECT_EQ(e.path().string().find(".XXXXXX"), std::string::npos);
    EXPECT_FALSE(e.path().filename().string().rfind(".real", 0) == 0) << e.path();
  }
}

}  // namespace
}  // namespace fabcheck::sys
