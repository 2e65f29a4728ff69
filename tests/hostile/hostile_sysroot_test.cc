// Hostile sysroots and captures through the commands that read them:
// archives that write through links, bombs, symlink loops, FIFOs in place of
// attributes, folders in place of files, unreadable trees and NaN rates.
// Nothing may be written outside the unpack folder, no run may hang, and
// what could not be read is never a pass.
#include <signal.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "node_fixture.h"
#include "run.h"
#include "tar.h"

namespace fabcheck::hostile {
namespace {

namespace fs = std::filesystem;

class HostileSysrootTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("fabcheck-hostile-sys-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "tmp");
    fs::create_directories(dir_ / "outside");
    std::ofstream(dir_ / "outside/victim") << "original";
  }
  void TearDown() override {
    std::error_code ec;
    for (auto& e : fs::recursive_directory_iterator(dir_, fs::directory_options::skip_permission_denied, ec)) {
      fs::permissions(e.path(), fs::perms::owner_all, fs::perm_options::add, ec);
    }
    fs::remove_all(dir_, ec);
  }
  std::vector<std::string> Env() const { return {"TMPDIR=" + (dir_ / "tmp").string()}; }
  bool TmpEmpty() const { return fs::is_empty(dir_ / "tmp"); }
  std::string Victim() const { return Slurp((dir_ / "outside/victim").string()); }
  fs::path dir_;
};

void ExpectContained(const RunResult& r, double max_seconds) {
  EXPECT_FALSE(r.timed_out) << Describe(r);
  EXPECT_EQ(r.signal, 0) << Describe(r);
  EXPECT_LT(r.seconds, max_seconds * test_support::kSanitizerTimeFactor) << Describe(r);
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << Describe(r);
}

TEST_F(HostileSysrootTest, CapturesThatWriteThroughLinksNeverReachOutside) {
  std::string victim = (dir_ / "outside/victim").string();
  std::string outside = (dir_ / "outside").string();
  std::string through_file = (dir_ / "file.tar.gz").string();
  {
    Tar t(through_file);
    t.Add("sys", AE_IFDIR);
    t.Add("sys/x", AE_IFLNK, "", victim);
    t.Add("sys/x", AE_IFREG, "PWNED");
  }
  std::string through_dir = (dir_ / "dir.tar.gz").string();
  {
    Tar t(through_dir);
    t.Add("sys/evil", AE_IFLNK, "", outside);
    t.Add("sys/evil/PWNED", AE_IFREG, "x");
  }
  for (const std::string& capture : {through_file, through_dir}) {
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"inventory", "--sysroot", capture},
             {"doctor", "--no-process-env", "--sysroot", capture},
             {"snapshot", "--sysroot", capture, "-o", (dir_ / "out.tar.gz").string()}}) {
      SCOPED_TRACE(args[0] + " " + capture);
      RunResult r = RunFabcheck(args, {.env = Env()});
      ExpectContained(r, 30);
      EXPECT_EQ(Victim(), "original");
      EXPECT_FALSE(fs::exists(dir_ / "outside/PWNED"));
      EXPECT_TRUE(TmpEmpty()) << "unpacked copy left behind";
    }
  }
  // The link-then-folder capture is refused with a message naming it.
  RunResult r = RunFabcheck({"inventory", "--sysroot", through_dir}, {.env = Env()});
  EXPECT_EQ(r.code, 3) << Describe(r);
  EXPECT_NE(r.err.find("sys/evil"), std::string::npos) << Describe(r);
}

TEST_F(HostileSysrootTest, DeepAndHugeCapturesAreClearErrors) {
  std::string deep_name;
  for (int i = 0; i < 2000; ++i) deep_name += "d/";
  std::string deep = (dir_ / "deep.tar.gz").string();
  {
    Tar t(deep);
    t.Add("sys/" + deep_name + "f", AE_IFREG, "x");
  }
  RunResult r = RunFabcheck({"inventory", "--sysroot", deep}, {.env = Env()});
  ExpectContained(r, 30);
  EXPECT_EQ(r.code, 3) << Describe(r);
  EXPECT_NE(r.err.find("refusing to unpack"), std::string::npos) << Describe(r);
  EXPECT_TRUE(TmpEmpty());
}

TEST_F(HostileSysrootTest, TheUnpackedCopyGoesAwayOnSigtermAndSighup) {
  fixtures::NodeFixture node(dir_ / "node", {.pairs = 1});
  std::string capture = (dir_ / "node.tar.gz").string();
  RunResult snap = RunFabcheck({"snapshot", "--sysroot", node.root(), "-o", capture});
  ASSERT_EQ(snap.code, 0) << Describe(snap);
  for (int sig : {SIGTERM, SIGHUP}) {
    // The env file is a FIFO whose writer never writes: doctor has unpacked
    // the capture and waits there, as a stuck job would.
    std::string fifo = (dir_ / ("env-" + std::to_string(sig))).string();
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    int writer = ::open(fifo.c_str(), O_RDWR | O_NONBLOCK);
    bool saw_unpacked = false;
    RunOptions options{.timeout_s = 30, .env = Env(), .while_running = [&](pid_t pid) {
                         for (int i = 0; i < 500 && TmpEmpty(); ++i) {
                           std::this_thread::sleep_for(std::chrono::milliseconds(20));
                         }
                         saw_unpacked = !TmpEmpty();
                         std::this_thread::sleep_for(std::chrono::milliseconds(200));
                         ::kill(pid, sig);
                       }};
    RunResult r = RunFabcheck({"doctor", "--no-process-env", "--sysroot", capture, "--env-file", fifo}, options);
    ::close(writer);
    EXPECT_TRUE(saw_unpacked) << Describe(r);
    EXPECT_EQ(r.signal, sig) << Describe(r);
    EXPECT_TRUE(TmpEmpty()) << "temp folder left behind after signal " << sig;
  }
}

TEST_F(HostileSysrootTest, LoopsFifosFoldersAndHugeFilesInPlaceOfAttributes) {
  fixtures::NodeFixture node(dir_ / "node", {.pairs = 2});
  std::string port = node.root() + "/" + node.PortDir(0);
  // A FIFO instead of the port state, with a writer holding it open (a read would block).
  fs::remove(port + "/state");
  ASSERT_EQ(::mkfifo((port + "/state").c_str(), 0600), 0);
  int writer = ::open((port + "/state").c_str(), O_RDWR | O_NONBLOCK);
  // A folder instead of the rate, a symlink loop instead of link_layer, a huge phys_state.
  fs::remove(port + "/rate");
  fs::create_directories(port + "/rate");
  fs::remove(port + "/link_layer");
  fs::create_symlink("link_layer", port + "/link_layer");
  std::ofstream(port + "/phys_state") << std::string(20 << 20, '5');
  // A loop of class links.
  fs::create_symlink("../loop-b", node.root() + "/sys/class/loop-a");
  fs::create_symlink("../loop-a", node.root() + "/sys/class/loop-b");
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"inventory", "--json", "--sysroot", node.root()},
           {"doctor", "--json", "--no-process-env", "--sysroot", node.root()},
           {"snapshot", "--sysroot", node.root(), "-o", (dir_ / "s.tar.gz").string()}}) {
    SCOPED_TRACE(args[0]);
    RunResult r = RunFabcheck(args, {.timeout_s = 60});
    ExpectContained(r, 30);
    EXPECT_GE(r.code, 0) << Describe(r);
    if (args[0] != "doctor") continue;
    // The port whose attributes could not be read is unknown, never passed.
    auto j = nlohmann::json::parse(r.out, nullptr, false);
    ASSERT_TRUE(j.is_object()) << Describe(r);
    bool unknown = false;
    for (const auto& f : j["findings"]) {
      if (f["object"].get<std::string>().find("mlx5_0") == std::string::npos) continue;
      unknown |= f["severity"] == "unknown";
      if (f["id"] == "port.down" || f["id"] == "port.rate.low") EXPECT_NE(f["severity"], "pass") << f.dump();
    }
    EXPECT_TRUE(unknown) << r.out.substr(0, 3000);
  }
  ::close(writer);
}

TEST_F(HostileSysrootTest, ANanPortRateIsNeverAPass) {
  fixtures::NodeFixture node(dir_ / "node", {.pairs = 2});
  node.Write(node.PortDir(0) + "/rate", "nan Gb/sec (4X NDR)\n");
  RunResult r = RunFabcheck({"doctor", "--json", "--no-process-env", "--only", "port.rate.low", "--sysroot", node.root()});
  ExpectContained(r, 30);
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << Describe(r);
  bool unknown = false;
  for (const auto& f : j["findings"]) {
    if (f["id"] == "port.rate.low" && f["object"].get<std::string>().find("mlx5_0") != std::string::npos) {
      EXPECT_NE(f["severity"], "pass") << f.dump();
      unknown |= f["severity"] == "unknown";
    }
    if (f["id"] == "port.rate.low" && f["severity"] == "pass") {
      EXPECT_EQ(f["message"].get<std::string>().find("nan"), std::string::npos) << f.dump();
    }
  }
  EXPECT_TRUE(unknown) << r.out;
}

// Runs `args` as an unprivileged user: root reads through chmod 000. The
// binary is copied beside the fixtures first: the build tree may sit under a
// folder nobody cannot enter (/root).
RunResult RunUnprivileged(std::vector<std::string> args, const fs::path& dir) {
  if (::geteuid() != 0) return RunFabcheck(args);
  fs::path binary = dir / "fabcheck";
  if (!fs::exists(binary)) {
    fs::copy_file(FABCHECK_BINARY, binary);
    fs::permissions(binary, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                fs::perms::others_read | fs::perms::others_exec);
  }
  std::vector<std::string> wrapped = {"--reuid=65534", "--regid=65534", "--clear-groups", binary.string()};
  wrapped.insert(wrapped.end(), args.begin(), args.end());
  RunResult r;
  // setpriv (util-linux) runs the binary with nobody's ids.
  std::string cmd = "setpriv";
  for (auto& a : wrapped) cmd += " '" + a + "'";
  cmd += " >" + std::string("/tmp/fabcheck-hostile-priv-") + std::to_string(::getpid()) + ".out 2>&1";
  int status = std::system(cmd.c_str());
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = Slurp("/tmp/fabcheck-hostile-priv-" + std::to_string(::getpid()) + ".out");
  ::unlink(("/tmp/fabcheck-hostile-priv-" + std::to_string(::getpid()) + ".out").c_str());
  return r;
}

bool HaveSetpriv() { return std::system("setpriv --version >/dev/null 2>&1") == 0; }

TEST_F(HostileSysrootTest, UnreadableInputIsCouldNotRunNeverAPass) {
  if (::geteuid() == 0 && !HaveSetpriv()) GTEST_SKIP() << "running as root without setpriv: cannot drop privileges";
  fs::permissions(dir_, fs::perms::all);  // nobody must reach the fixtures
  fixtures::NodeFixture node(dir_ / "node", {.pairs = 1});
  fs::permissions(dir_ / "node", fs::perms::all);
  for (auto& e : fs::recursive_directory_iterator(dir_ / "node")) {
    if (!e.is_symlink()) fs::permissions(e.path(), fs::perms::others_read | fs::perms::others_exec, fs::perm_options::add);
  }
  fs::permissions(node.root() + "/sys/class/infiniband", fs::perms::none);
  RunResult doctor = RunUnprivileged({"doctor", "--no-process-env", "--sysroot", node.root()}, dir_);
  EXPECT_EQ(doctor.code, 3) << doctor.out;
  EXPECT_NE(doctor.out.find("EACCES"), std::string::npos) << doctor.out;
  fs::permissions(node.root(), fs::perms::none);
  RunResult whole = RunUnprivileged({"doctor", "--no-process-env", "--sysroot", node.root()}, dir_);
  EXPECT_EQ(whole.code, 3) << whole.out;
  EXPECT_EQ(whole.out.find("nothing to check"), std::string::npos) << whole.out;

  fs::create_directories(dir_ / "manifests/team-a");
  std::ofstream(dir_ / "manifests/ok.yaml") << "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n";
  std::ofstream(dir_ / "manifests/team-a/pod.yaml") << "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n";
  fs::permissions(dir_ / "manifests", fs::perms::all);
  fs::permissions(dir_ / "manifests/ok.yaml", fs::perms::all);
  fs::permissions(dir_ / "manifests/team-a", fs::perms::none);
  RunResult sub = RunUnprivileged({"k8s", "lint", (dir_ / "manifests").string()}, dir_);
  EXPECT_EQ(sub.code, 3) << sub.out;
  EXPECT_NE(sub.out.find("team-a"), std::string::npos) << sub.out;
  fs::permissions(dir_ / "manifests", fs::perms::none);
  RunResult top = RunUnprivileged({"k8s", "lint", (dir_ / "manifests").string()}, dir_);
  EXPECT_EQ(top.code, 3) << top.out;
}

TEST_F(HostileSysrootTest, SnapshotOntoNonRegularFilesNeverReplacesThem) {
  fixtures::NodeFixture node(dir_ / "node", {.pairs = 1});
  // A FIFO with a reader: the capture is streamed into it and the FIFO stays.
  std::string fifo = (dir_ / "out.fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string received;
  std::thread reader([&] { received = Slurp(fifo); });
  RunResult r = RunFabcheck({"snapshot", "--sysroot", node.root(), "-o", fifo});
  reader.join();
  EXPECT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(fs::is_fifo(fifo));
  EXPECT_GT(received.size(), 100u);
  // A character device of our own (as root), else /dev/null (which a
  // non-root user could not replace anyway).
  std::string device = "/dev/null";
  if (::geteuid() == 0) {
    device = (dir_ / "null").string();
    ASSERT_EQ(::mknod(device.c_str(), S_IFCHR | 0666, makedev(1, 3)), 0);
  }
  r = RunFabcheck({"snapshot", "--sysroot", node.root(), "-o", device});
  EXPECT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(fs::is_character_file(device));
  // A folder is refused.
  r = RunFabcheck({"snapshot", "--sysroot", node.root(), "-o", dir_.string()});
  EXPECT_EQ(r.code, 3) << Describe(r);
  EXPECT_NE(r.err.find("folder"), std::string::npos) << Describe(r);
  EXPECT_TRUE(fs::is_directory(dir_));
}

}  // namespace
}  // namespace fabcheck::hostile
