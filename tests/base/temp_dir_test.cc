#include "base/temp_dir.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace fabcheck {
namespace {

namespace fs = std::filesystem;

class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = fs::temp_directory_path() / ("fabcheck-tempdir-test-" + std::to_string(::getpid()));
    fs::create_directories(base_ / "tmp");
    std::ofstream(base_ / "keep") << "outside";
    ::setenv("TMPDIR", (base_ / "tmp").c_str(), 1);
  }
  void TearDown() override {
    ::unsetenv("TMPDIR");
    fs::remove_all(base_);
  }
  fs::path base_;
};

void Fill(const std::string& dir, const fs::path& outside) {
  fs::create_directories(fs::path(dir) / "sys/class/net/eth0");
  std::ofstream(fs::path(dir) / "sys/class/net/eth0/mtu") << "1500";
  fs::create_symlink(outside, fs::path(dir) / "sys/link-out");
  fs::create_directory_symlink(outside.parent_path(), fs::path(dir) / "sys/dir-out");
}

TEST_F(TempDirTest, RemovedWithItsOwnerWithoutFollowingLinks) {
  std::string path;
  {
    auto dir = TempDir::Create("fabcheck-test");
    ASSERT_TRUE(dir.ok()) << dir.status().ToString();
    path = (*dir)->path();
    EXPECT_EQ(path.rfind((base_ / "tmp").string(), 0), 0u);
    Fill(path, base_ / "keep");
  }
  EXPECT_FALSE(fs::exists(path));
  EXPECT_TRUE(fs::exists(base_ / "keep"));
}

TEST_F(TempDirTest, SignalSafeRemovalTakesTheWholeTree) {
  std::string dir = (base_ / "tree").string();
  fs::create_directories(dir);
  Fill(dir, base_ / "keep");
  for (int i = 0; i < 300; ++i) std::ofstream(fs::path(dir) / ("f" + std::to_string(i))) << i;
  EXPECT_TRUE(RemoveTreeNoFollow(dir.c_str()));
  EXPECT_FALSE(fs::exists(dir));
  EXPECT_TRUE(fs::exists(base_ / "keep"));
}

// A child makes a TempDir and waits; the parent ends it with `sig`.
void EndChildWith(int sig, const fs::path& base) {
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto dir = TempDir::Create("fabcheck-capture");
    if (!dir.ok()) ::_exit(10);
    Fill((*dir)->path(), base / "keep");
    char byte = 1;
    if (::write(ready[1], &byte, 1) != 1) ::_exit(11);
    while (true) ::pause();
  }
  ::close(ready[1]);
  char byte = 0;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  ::close(ready[0]);
  EXPECT_FALSE(fs::is_empty(base / "tmp"));
  ASSERT_EQ(::kill(child, sig), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status)) << "the exit status must still say the signal ended it";
  if (WIFSIGNALED(status)) {
    EXPECT_EQ(WTERMSIG(status), sig);
  }
  EXPECT_TRUE(fs::is_empty(base / "tmp")) << "temp folder left behind after signal " << sig;
  EXPECT_TRUE(fs::exists(base / "keep"));
}

TEST_F(TempDirTest, RemovedOnSigterm) { EndChildWith(SIGTERM, base_); }
TEST_F(TempDirTest, RemovedOnSighup) { EndChildWith(SIGHUP, base_); }
TEST_F(TempDirTest, RemovedOnSigint) { EndChildWith(SIGINT, base_); }

TEST_F(TempDirTest, AnIgnoredSignalStaysIgnored) {
  // nohup: SIGHUP ignored before the first TempDir; it must stay so.
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::signal(SIGHUP, SIG_IGN);
    auto dir = TempDir::Create("fabcheck-capture");
    struct sigaction now {};
    ::sigaction(SIGHUP, nullptr, &now);
    ::_exit(dir.ok() && now.sa_handler == SIG_IGN ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

}  // namespace
}  // namespace fabcheck
