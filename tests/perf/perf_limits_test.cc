// The perf engine under a pod's limits: a server whose cgroup allows few
// threads (pids.max) refuses a many-stream test and keeps serving (it used to
// abort: std::system_error unwinding past joinable threads), and a client
// given a memory budget refuses a test whose buffers exceed it before
// allocating anything.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

#include "../fixtures/pod_limits.h"
#include "../hostile/run.h"
#include "perf/engine.h"
#include "perf/server.h"

namespace fabcheck::perf {
namespace {

using namespace std::chrono_literals;

ClientOptions Bw(int port, int streams) {
  ClientOptions o;
  o.root = sys::SysRoot::Live();
  o.host = "127.0.0.1";
  o.port = port;
  o.params.op = model::PerfOp::kSend;
  o.params.sizes = {65536};
  o.params.iters = 50;
  o.params.warmup = 2;
  o.params.streams = streams;
  o.connect_timeout = 3s;
  o.io_timeout = 3s;
  return o;
}

TEST(PerfUnderPidsMax, AServerThatCannotStartItsStreamsRefusesTheTestAndGoesOn) {
  std::string why;
  auto limit = test_support::PodLimit::Create("pids", 12, &why);
  if (!limit) GTEST_SKIP() << "no pids cgroup to limit the server with: " << why;
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  pid_t server = ::fork();
  ASSERT_GE(server, 0);
  if (server == 0) {
    // The server's process, single-threaded until it serves: under pids.max
    // 12 it can run the connection's thread and a few streams, not 64.
    ::close(pipe_fds[0]);
    if (!limit->Add(::getpid())) ::_exit(90);
    ServeOptions o;
    o.root = sys::SysRoot::Live();
    o.bind = "127.0.0.1";
    o.port = 0;
    o.io_timeout = 3s;
    auto s = Server::Start(o);
    if (!s.ok()) ::_exit(91);
    int port = (*s)->port();
    if (::write(pipe_fds[1], &port, sizeof port) != sizeof port) ::_exit(92);
    (*s)->Run();
    ::_exit(0);
  }
  ::close(pipe_fds[1]);
  int port = 0;
  ASSERT_EQ(::read(pipe_fds[0], &port, sizeof port), static_cast<ssize_t>(sizeof port)) << "the server did not start";
  ::close(pipe_fds[0]);

  auto hungry = RunClient(Bw(port, 64));
  EXPECT_TRUE(!hungry.ok() || !hungry->error.empty()) << "64 streams under pids.max 12 cannot have run";
  std::this_thread::sleep_for(200ms);
  int status = 0;
  ASSERT_EQ(::waitpid(server, &status, WNOHANG), 0)
      << "the server died (" << (WIFSIGNALED(status) ? "signal " + std::to_string(WTERMSIG(status)) : "exited")
      << ") instead of refusing the test";
  // It still serves a test it can run.
  auto modest = RunClient(Bw(port, 1));
  ASSERT_TRUE(modest.ok()) << modest.status().ToString();
  EXPECT_TRUE(modest->ok()) << modest->error;
  ::kill(server, SIGKILL);
  ::waitpid(server, &status, 0);
}

TEST(PerfClientBudget, ATestWhoseBuffersExceedTheBudgetIsRefusedBeforeAllocating) {
  ServeOptions so;
  so.root = sys::SysRoot::Live();
  so.bind = "127.0.0.1";
  so.port = 0;
  auto server = Server::Start(so);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  std::thread serving([&] { (*server)->Run(); });
  base::Budget memory("test buffers", 1 << 20, nullptr, "bytes");
  ClientOptions o = Bw((*server)->port(), 4);
  o.params.sizes = {1 << 20};  // 4 streams x 1 MiB to send: 4 MiB against a 1 MiB budget
  o.memory = &memory;
  auto r = RunClient(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted) << r.status().ToString();
  EXPECT_NE(r.status().message().find("ceiling"), std::string::npos) << r.status().message();
  EXPECT_EQ(memory.in_use(), 0u);
  o.params.sizes = {65536};  // 256 KiB: within it, and given back afterwards
  auto ok = RunClient(o);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_TRUE(ok->ok()) << ok->error;
  EXPECT_EQ(memory.in_use(), 0u);
  (*server)->Stop();
  serving.join();
}

// A latency test of a billion iterations: the client reserved 8 GB of
// timestamps before its first ping and, under a pod's 1 GiB, aborted at once
// (bad_alloc, exit 134). Its samples now have a fixed budget: it measures
// until stopped.
TEST(PerfClientBudget, ALongLatencyTestRunsWithinItsMemory) {
  ServeOptions so;
  so.root = sys::SysRoot::Live();
  so.bind = "127.0.0.1";
  so.port = 0;
  auto server = Server::Start(so);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  std::thread serving([&] { (*server)->Run(); });
  hostile::RunOptions limited;
  limited.timeout_s = 3;
  limited.address_space_mib = 1024;
  hostile::RunResult r = hostile::RunFabcheck({"perf", "run", "127.0.0.1", "--port", std::to_string((*server)->port()),
                                               "--test", "lat", "--iters", "1000000000"},
                                              limited);
  EXPECT_TRUE(r.timed_out) << "it ended before the time limit: " << hostile::Describe(r);
  EXPECT_NE(r.signal, SIGABRT) << hostile::Describe(r);
  (*server)->Stop();
  serving.join();
}

// With a token, a server that answers auth: none proves nothing (an impostor
// on its address, or one started without the token): the client used to go on
// with a warning, now it refuses.
TEST(PerfTokenProof, AClientWithATokenRefusesAServerThatAsksForNone) {
  ServeOptions so;
  so.root = sys::SysRoot::Live();
  so.bind = "127.0.0.1";
  so.port = 0;
  auto server = Server::Start(so);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  std::thread serving([&] { (*server)->Run(); });
  ClientOptions o = Bw((*server)->port(), 1);
  o.token = "the-cluster-token";
  auto r = RunClient(o);
  (*server)->Stop();
  serving.join();
  ASSERT_FALSE(r.ok()) << "the test ran against a server that cannot prove the token";
  EXPECT_EQ(r.status().code(), StatusCode::kUnauthenticated) << r.status().ToString();
  EXPECT_NE(r.status().message().find("auth: none"), std::string::npos) << r.status().message();
}

}  // namespace
}  // namespace fabcheck::perf
