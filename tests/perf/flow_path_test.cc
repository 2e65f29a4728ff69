// Flow path tracing over loopback (no router there, so the routed case with
// real ICMP answers is tests/sweep/netns_leaves_test.cc): a probe that reaches
// the peer ends its flow's trace without leaving a connection behind, the flow
// then connects from the very port its probes used, and the engine reports
// each stream's figure and traced path.
#include "perf/flow_path.h"

#include <gtest/gtest.h>

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <thread>

#include "perf/engine.h"
#include "perf/server.h"
#include "perf/socket.h"

namespace fabcheck::perf {
namespace {

using namespace std::chrono_literals;

TEST(FlowPath, ProbesThatReachThePeerEndTheTraceAndTheFlowKeepsItsPort) {
  auto listener = ListenTcp("127.0.0.1", 0, 16);
  ASSERT_TRUE(listener.ok()) << listener.status().ToString();
  const int port = LocalPort(listener->get());
  auto peer = ResolveFlowPeer("127.0.0.1", port);
  ASSERT_TRUE(peer.ok()) << peer.status().ToString();
  std::vector<UniqueFd> bound;
  std::vector<int> ports;
  for (int i = 0; i < 3; ++i) {
    auto fd = BindFlowSocket(*peer);
    ASSERT_TRUE(fd.ok()) << fd.status().ToString();
    ports.push_back(LocalPort(fd->get()));
    EXPECT_GT(ports.back(), 0);
    bound.push_back(std::move(*fd));
  }
  PathProbeOptions o;
  o.max_ttl = 3;
  auto hops = TraceFlowPaths(*peer, ports, o);
  ASSERT_TRUE(hops.ok()) << hops.status().ToString();
  ASSERT_EQ(hops->size(), 3u);
  for (const auto& h : *hops) EXPECT_TRUE(h.empty()) << "loopback has no router, got " << h.size() << " hops";
  for (size_t i = 0; i < bound.size(); ++i) {
    auto fd = ConnectFlowSocket(std::move(bound[i]), *peer, 2s, "connect");
    ASSERT_TRUE(fd.ok()) << fd.status().ToString();
    EXPECT_EQ(LocalPort(fd->get()), ports[i]);  // the 5-tuple the probes carried
  }
}

TEST(FlowPath, NotANumericAddressIsRefusedByName) {
  auto peer = ResolveFlowPeer("not-an-address", 80);
  ASSERT_FALSE(peer.ok());
  EXPECT_NE(peer.status().message().find("not-an-address"), std::string::npos);
}

TEST(FlowPath, EngineReportsEachStreamAndItsTracedPath) {
  ServeOptions so;
  so.root = sys::SysRoot::Live();
  so.bind = "127.0.0.1";
  so.port = 0;
  so.io_timeout = 3s;
  so.connect_timeout = 3s;
  auto server = Server::Start(so);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  std::thread serving([&] { (*server)->Run(); });
  ClientOptions o;
  o.root = sys::SysRoot::Live();
  o.host = "127.0.0.1";
  o.port = (*server)->port();
  o.connect_timeout = 3s;
  o.io_timeout = 3s;
  o.trace_hops = 2;
  o.params.op = model::PerfOp::kSend;
  o.params.sizes = {65536};
  o.params.iters = 50;
  o.params.streams = 3;
  auto r = RunClient(o);
  (*server)->Stop();
  serving.join();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->ok()) << r->error;
  const auto& size = r->results.at(0);
  ASSERT_EQ(size.stream_gbps.size(), 3u);
  double sum = 0;
  for (double g : size.stream_gbps) {
    EXPECT_GT(g, 0);
    sum += g;
  }
  // Streams run at once, so their rates add up to about the total (each
  // stream's time is its own, so not exactly).
  EXPECT_GT(sum, 0.5 * size.bw->avg_gbps);
  ASSERT_EQ(r->client.flows.size(), 3u);
  for (const auto& f : r->client.flows) {
    EXPECT_GT(f.local_port, 0);
    EXPECT_TRUE(f.hops.empty());
  }
  // The result survives its JSON.
  nlohmann::json j = *r;
  auto back = j.get<model::PerfResult>();
  EXPECT_EQ(back.results.at(0).stream_gbps, size.stream_gbps);
  ASSERT_EQ(back.client.flows.size(), 3u);
  EXPECT_EQ(back.client.flows[1].local_port, r->client.flows[1].local_port);
}

}  // namespace
}  // namespace fabcheck::perf
