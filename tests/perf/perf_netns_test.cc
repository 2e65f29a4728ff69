// End to end over TCP between two network namespaces with the fabcheck
// binary: `perf serve` in one, `perf run --json` in the other (veth pair).
// Needs root (ip netns); skips with the reason otherwise. Namespaces are
// named fcperf-<pid>-a/b and always removed.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <array>
#include <cstdio>
#include <string>

namespace {

std::string Sh(const std::string& cmd, int* rc = nullptr) {
  std::string out;
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (p == nullptr) return out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  int status = ::pclose(p);
  if (rc != nullptr) *rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

class NetnsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (::geteuid() != 0) {
      skip_ = "needs root to create network namespaces";
      return;
    }
    a_ = "fcperf-" + std::to_string(::getpid()) + "-a";
    b_ = "fcperf-" + std::to_string(::getpid()) + "-b";
    std::string veth = "fcp" + std::to_string(::getpid() % 100000);
    int rc = 0;
    std::string out = Sh("ip netns add " + a_ + " && ip netns add " + b_ + " && ip link add " + veth + "a netns " +
                             a_ + " type veth peer name " + veth + "b netns " + b_ + " && ip -n " + a_ +
                             " addr add 10.213.7.1/24 dev " + veth + "a && ip -n " + b_ +
                             " addr add 10.213.7.2/24 dev " + veth + "b && ip -n " + a_ + " link set " + veth +
                             "a up && ip -n " + b_ + " link set " + veth + "b up && ip -n " + a_ +
                             " link set lo up && ip -n " + b_ + " link set lo up",
                         &rc);
    if (rc != 0) {
      skip_ = "cannot create network namespaces here: " + out;
      TearDownTestSuite();
      return;
    }
    // The server: its first stdout line names the port it got.
    int pipefd[2];
    if (::pipe(pipefd) != 0) {
      skip_ = "pipe failed";
      return;
    }
    server_pid_ = ::fork();
    if (server_pid_ == 0) {
      ::dup2(pipefd[1], 1);
      ::close(pipefd[0]);
      ::execlp("ip", "ip", "netns", "exec", b_.c_str(), FABCHECK_BINARY, "perf", "serve", "--bind", "10.213.7.2",
               "--port", "0", "--timeout", "10", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(pipefd[1]);
    FILE* f = ::fdopen(pipefd[0], "r");
    char line[256] = {};
    if (f == nullptr || ::fgets(line, sizeof line, f) == nullptr) {
      skip_ = "perf serve did not start";
      return;
    }
    std::string l(line);
    port_ = std::stoi(l.substr(l.rfind(':') + 1));
    server_out_ = f;
  }

  static void TearDownTestSuite() {
    if (server_pid_ > 0) {
      ::kill(server_pid_, SIGTERM);
      int status = 0;
      ::waitpid(server_pid_, &status, 0);
      server_pid_ = -1;
    }
    if (server_out_ != nullptr) ::fclose(server_out_);
    server_out_ = nullptr;
    if (!a_.empty()) Sh("ip netns del " + a_);
    if (!b_.empty()) Sh("ip netns del " + b_);
  }

  void SetUp() override {
    if (!skip_.empty()) GTEST_SKIP() << skip_;
  }

  // Runs the client in namespace a; returns its JSON.
  nlohmann::json Run(const std::string& args, int expect_rc = 0) {
    int rc = 0;
    std::string out = Sh("ip netns exec " + a_ + " " + FABCHECK_BINARY + " perf run 10.213.7.2 --port " +
                             std::to_string(port_) + " --transport tcp --json --timeout 10 " + args,
                         &rc);
    EXPECT_EQ(rc, expect_rc) << out;
    auto start = out.find('{');
    if (start == std::string::npos) {
      ADD_FAILURE() << "no JSON in: " << out;
      return {};
    }
    auto j = nlohmann::json::parse(out.substr(start), nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << out;
    return j;
  }

  static inline std::string skip_, a_, b_;
  static inline pid_t server_pid_ = -1;
  static inline int port_ = 0;
  static inline FILE* server_out_ = nullptr;
};

TEST_F(NetnsTest, BandwidthSweepWithValidation) {
  auto j = Run("--test bw --sizes 64:1M --iters 200 --validate");
  ASSERT_EQ(j.value("schema", ""), "fabcheck.perf/v1");
  EXPECT_TRUE(j["ok"].get<bool>());
  ASSERT_EQ(j["results"].size(), 15u);  // 64 B .. 1 MiB
  for (const auto& r : j["results"]) {
    EXPECT_GT(r["bw"]["avg_gbps"].get<double>(), 0) << r.dump();
    EXPECT_EQ(r["validate_errors"], 0);
  }
  EXPECT_EQ(j["client"]["host"], "10.213.7.1");
  EXPECT_EQ(j["server_endpoint"]["host"], "10.213.7.2");
  EXPECT_EQ(j["settings"]["transport"], "tcp");
}

TEST_F(NetnsTest, SeveralStreamsBidirectional) {
  auto j = Run("--test bw --size 256K --iters 300 --streams 4 --bidir --validate");
  ASSERT_TRUE(j.contains("results")) << j.dump();
  EXPECT_TRUE(j["ok"].get<bool>()) << j.dump();
  const auto& r = j["results"][0];
  EXPECT_EQ(r["bw_tx"]["bytes"], 262144ull * 300 * 4);
  EXPECT_EQ(r["bw_rx"]["bytes"], 262144ull * 300 * 4);
  EXPECT_GT(r["bw"]["avg_gbps"].get<double>(), r["bw_tx"]["avg_gbps"].get<double>());
  EXPECT_EQ(j["settings"]["streams"], 4);
}

TEST_F(NetnsTest, Latency) {
  auto j = Run("--test lat --size 64 --iters 2000 --validate");
  ASSERT_TRUE(j.contains("results")) << j.dump();
  EXPECT_TRUE(j["ok"].get<bool>());
  const auto& lat = j["results"][0]["lat"];
  EXPECT_EQ(lat["samples"], 2000 - 1 - 2);
  EXPECT_GT(lat["median_us"].get<double>(), 0);
  EXPECT_LE(lat["median_us"].get<double>(), lat["p99_us"].get<double>());
}

TEST_F(NetnsTest, ImpossibleRequestRefusedClearly) {
  auto j = Run("--test bw --size 512M --iters 2 --streams 4", 3);
  EXPECT_FALSE(j.value("ok", true));
  EXPECT_NE(j.value("error", "").find("--max-mem"), std::string::npos) << j.dump();
}

}  // namespace
