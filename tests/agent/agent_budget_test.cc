// POST /v1/test names its peer, so the peer's --max-mem does not protect the
// agent: one request for 2 streams x 768 MiB took 1.5 GiB of the agent's
// memory before it had a budget of its own. Now the request is refused before
// the buffers exist, and the agent's peak memory stays where it was.
#include <gtest/gtest.h>

#include <unistd.h>

#include <thread>

#include "../fixtures/pod_limits.h"
#include "control/budgets.h"
#include "perf/server.h"
#include "agent/peer_test.h"

namespace fabcheck::agent {
namespace {

TEST(AgentClientBudget, AMemoryHungryTestRequestIsRefusedBeforeItsBuffersExist) {
  // A peer that would take the test (its own limits raised): only the
  // agent's budget stands between the request and the agent's memory.
  perf::ServeOptions so;
  so.root = sys::SysRoot::Live();
  so.bind = "127.0.0.1";
  so.port = 0;
  so.limits.max_mem_per_client = 8ull << 30;
  so.limits.max_mem_total = 8ull << 30;
  auto server = perf::Server::Start(so);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  std::thread serving([&] { (*server)->Run(); });

  control::PeerTestRequest r;
  r.peer = "127.0.0.1";
  r.peer_name = "hungry";
  r.perf_port = (*server)->port();
  r.latency = false;
  r.mtu = false;
  r.streams = 2;
  r.bw_size = 768ull << 20;  // 1.5 GiB of send buffers on the agent, above its 1 GiB per request
  r.bw_duration_s = 0.2;
  r.timeout_ms = 5000;
  const long before_kib = test_support::PeakRssKib(::getpid());
  auto out = RunPeerTest(r, PeerTestEnv{std::nullopt, nullptr, sys::SysRoot::Live(), nullptr});
  const long after_kib = test_support::PeakRssKib(::getpid());
  (*server)->Stop();
  serving.join();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_FALSE(out->bw_gbps) << "the test ran with 1.5 GiB of buffers";
  ASSERT_EQ(out->errors.size(), 1u);
  EXPECT_NE(out->errors[0].find("ceiling"), std::string::npos) << out->errors[0];
  EXPECT_LT(after_kib - before_kib, 256 * 1024) << "peak RSS grew by " << (after_kib - before_kib) / 1024 << " MiB";
  EXPECT_EQ(control::AgentClientMemory().in_use(), 0u) << "the request's memory was not given back";
}

}  // namespace
}  // namespace fabcheck::agent
