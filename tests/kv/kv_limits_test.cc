// POST /v1/kv under a pod's limits: a request that asks for more data
// connections than an agent allows is refused before anything starts, a pool
// larger than an agent's perf server takes is refused, and under pids.max an
// agent whose transfers cannot all start answers with an error and lives on
// (it used to abort on the first thread the system refused).
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

#include "../fixtures/pod_limits.h"
#include "control/budgets.h"
#include "kv/fan.h"
#include "kv/sizing.h"
#include "perf/server.h"

namespace fabcheck::kv {
namespace {

using namespace std::chrono_literals;

nlohmann::json Spec(int inflight) {
  model::KvModel m;
  m.name = "tiny";
  m.attention = "gqa";
  m.layers = 4;
  m.kv_heads = 2;
  m.head_dim = 64;
  m.dtype = "bfloat16";
  m.dtype_bytes = 2;
  RunOptions o;
  o.sizing = *ComputeSizing(m, 1, 16, 256);
  o.requests = 4;
  o.warmup = 1;
  o.inflight = inflight;
  o.l3_duration_s = 0.2;
  o.client.io_timeout = 3s;
  o.client.connect_timeout = 3s;
  return RunSpecToJson(o);
}

nlohmann::json Targets(size_t n, int port) {
  nlohmann::json t = nlohmann::json::array();
  for (size_t i = 0; i < n; ++i) t.push_back({{"host", "127.0.0.1"}, {"port", port}, {"name", "t" + std::to_string(i)}});
  return t;
}

TEST(KvRouteLimits, TooManyConnectionsPerRequestAreRefusedBeforeAnythingStarts) {
  auto handler = AgentKvHandler({std::nullopt, nullptr, sys::SysRoot::Live()});
  // 64 targets x inflight 256 = 16,384 connections, 32,768 threads: refused
  // at once (nothing listens on port 1, so before the bound each target
  // failed alone and the request "succeeded").
  auto r = handler({{"run", Spec(256)}, {"targets", Targets(kMaxFanTargets, 1)}});
  ASSERT_FALSE(r.ok()) << "the request was run";
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted) << r.status().ToString();
  EXPECT_NE(r.status().message().find("data connections"), std::string::npos) << r.status().message();
  // Within the bound it runs (each target's error, named).
  auto fine = handler({{"run", Spec(4)}, {"targets", Targets(2, 1)}});
  ASSERT_TRUE(fine.ok()) << fine.status().ToString();
  EXPECT_EQ((*fine)["results"].size(), 2u);
}

TEST(KvRouteLimits, APoolLargerThanAnAgentTakesIsRefused) {
  auto handler = AgentKvHandler({std::nullopt, nullptr, sys::SysRoot::Live()});
  nlohmann::json spec = Spec(1);
  spec["pool_bytes"] = 64ull << 30;
  auto r = handler({{"run", spec}, {"targets", Targets(1, 1)}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("pool_bytes"), std::string::npos) << r.status().message();
}

TEST(KvRouteLimits, UnderPidsMaxTheAgentAnswersAnErrorAndLivesOn) {
  std::string why;
  auto limit = test_support::PodLimit::Create("pids", 24, &why);
  if (!limit) GTEST_SKIP() << "no pids cgroup to limit the agent with: " << why;
  int to_child[2], from_child[2];
  ASSERT_EQ(::pipe(to_child), 0);
  ASSERT_EQ(::pipe(from_child), 0);
  pid_t agent = ::fork();
  ASSERT_GE(agent, 0);
  if (agent == 0) {
    // The agent's side, alone in a cgroup of 24 tasks: 8 targets x inflight
    // 16 need some 400 threads here.
    if (!limit->Add(::getpid())) ::_exit(90);
    int port = 0;
    if (::read(to_child[0], &port, sizeof port) != sizeof port) ::_exit(91);
    auto handler = AgentKvHandler({std::nullopt, nullptr, sys::SysRoot::Live()});
    auto r = handler({{"run", Spec(16)}, {"targets", Targets(8, port)}});
    // Refused outright, or every transfer that could not start says so.
    int verdict = 3;
    if (!r.ok()) {
      verdict = r.status().code() == StatusCode::kResourceExhausted ? 0 : 4;
    } else {
      // Each target's error (or its result's, for the L3 or kv step that
      // could not start its streams) names the threads it lacked.
      verdict = r->dump().find("another thread") != std::string::npos ? 0 : 5;
    }
    // And the process can still serve the next, modest request.
    auto again = handler({{"run", Spec(1)}, {"targets", Targets(1, port)}});
    if (verdict == 0 && !(again.ok() && !(*again)["results"][0].contains("error"))) verdict = 6;
    if (::write(from_child[1], &verdict, sizeof verdict) != sizeof verdict) ::_exit(93);
    ::_exit(0);
  }
  // The target perf server, outside the limit (started after the fork: the
  // child must not inherit a process with threads).
  perf::ServeOptions so;
  so.root = sys::SysRoot::Live();
  so.bind = "127.0.0.1";
  so.port = 0;
  so.limits.max_clients = 16;
  auto server = perf::Server::Start(so);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  std::thread serving([&] { (*server)->Run(); });
  int port = (*server)->port();
  ASSERT_EQ(::write(to_child[1], &port, sizeof port), static_cast<ssize_t>(sizeof port));
  int verdict = -1;
  const ssize_t got = ::read(from_child[0], &verdict, sizeof verdict);
  int status = 0;
  ::waitpid(agent, &status, 0);
  (*server)->Stop();
  serving.join();
  ASSERT_EQ(got, static_cast<ssize_t>(sizeof verdict))
      << "the agent's process died ("
      << (WIFSIGNALED(status) ? "signal " + std::to_string(WTERMSIG(status)) : "exit " + std::to_string(WEXITSTATUS(status)))
      << ") instead of answering";
  EXPECT_EQ(verdict, 0) << "4: wrong error; 5: no transfer said it lacked threads; 6: no modest request after";
}

}  // namespace
}  // namespace fabcheck::kv
