// The engine end to end over loopback, in one process: a Server on 127.0.0.1
// and RunClient against it, including misbehaving peers on either side.
#include <gtest/gtest.h>

#include <sys/socket.h>

#include <atomic>
#include <thread>
#include <vector>

#include "base/fd.h"
#include "perf/engine.h"
#include "perf/server.h"
#include "perf/tcp_internal.h"

namespace fabcheck::perf {
namespace {

using namespace std::chrono_literals;

// The data path reads no clock while calls complete; a peer that stops
// mid-message must still end the call at the idle timeout, naming the peer.
TEST(TcpIdleTest, APeerThatStopsMidMessageEndsTheCallAtTheIdleTimeout) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  UniqueFd ours(sv[0]), theirs(sv[1]);
  ASSERT_TRUE(SetIoTimeout(ours.get(), tcp::kIdleSlice).ok());
  tcp::WaitContext wait;
  wait.idle_timeout = 300ms;
  wait.peer = "peer-x";

  ASSERT_EQ(::send(theirs.get(), "abcd", 4, 0), 4);  // half a ping, then nothing
  char buf[8];
  auto start = std::chrono::steady_clock::now();
  Status received = tcp::RecvFull(ours.get(), buf, sizeof buf, wait, "lat pong");
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(received.code(), StatusCode::kDeadlineExceeded) << received.message();
  EXPECT_NE(received.message().find("peer-x during lat pong: no progress"), std::string::npos) << received.message();
  EXPECT_GE(took, 300ms - tcp::kIdleSlice);
  EXPECT_LT(took, 3s);

  // A reader that stops: the send fills the socket buffers, then times out.
  std::vector<char> big(64 << 20);
  start = std::chrono::steady_clock::now();
  Status sent = tcp::SendFull(ours.get(), big.data(), big.size(), wait, "bw send");
  took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(sent.code(), StatusCode::kDeadlineExceeded) << sent.message();
  EXPECT_NE(sent.message().find("peer-x during bw send: no progress"), std::string::npos) << sent.message();
  EXPECT_GE(took, 300ms - tcp::kIdleSlice);
  EXPECT_LT(took, 3s);
}

class LoopbackTest : public ::testing::Test {
 protected:
  void StartServer(std::optional<std::string> token = std::nullopt, ServerLimits limits = {}) {
    ServeOptions o;
    o.root = sys::SysRoot::Live();
    o.bind = "127.0.0.1";
    o.port = 0;
    o.token = std::move(token);
    o.limits = limits;
    o.limits.handshake_timeout = 400ms;
    o.io_timeout = 3s;
    o.connect_timeout = 3s;
    auto s = Server::Start(o);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    server_ = std::move(*s);
    thread_ = std::thread([this] { server_->Run(); });
  }
  void TearDown() override {
    if (server_) {
      server_->Stop();
      thread_.join();
    }
  }
  ClientOptions Client(TestParams p) {
    ClientOptions o;
    o.root = sys::SysRoot::Live();
    o.host = "127.0.0.1";
    o.port = server_->port();
    o.params = std::move(p);
    o.connect_timeout = 3s;
    o.io_timeout = 3s;
    return o;
  }
  static TestParams Bw(uint64_t size = 4096, uint64_t iters = 200) {
    TestParams p;
    p.op = model::PerfOp::kSend;
    p.sizes = {size};
    p.iters = iters;
    p.warmup = 4;
    return p;
  }
  // A good client still gets served: the server survived whatever came before.
  void ExpectServes() {
    auto r = RunClient(Client(Bw()));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_TRUE(r->ok()) << r->error;
  }
  UniqueFd Raw() {
    auto fd = ConnectTcp("127.0.0.1", server_->port(), 2s);
    EXPECT_TRUE(fd.ok());
    return std::move(*fd);
  }
  // True when the server closes the connection within `within`.
  static bool ClosedBy(int fd, std::chrono::milliseconds within) {
    char buf[4096];
    auto deadline = DeadlineAfter(within);
    while (Clock::now() < deadline) {
      Status s = RecvAllDeadline(fd, buf, 1, deadline, nullptr, "test");
      if (!s.ok()) return s.code() == StatusCode::kUnavailable || s.code() == StatusCode::kUnknown ||
                          s.code() == StatusCode::kAborted || s.code() == StatusCode::kInternal;
    }
    return false;
  }
  nlohmann::json Hello(int min = 1, int max = 1) {
    return {{"type", "hello"}, {"protocol_min", min}, {"protocol_max", max}, {"nonce", std::string(32, 'a')}};
  }

  std::unique_ptr<Server> server_;
  std::thread thread_;
};

TEST_F(LoopbackTest, BandwidthSweepStreamsValidate) {
  StartServer();
  TestParams p = Bw();
  p.sizes = {1, 64, 4096, 65536, 1 << 20};
  p.iters = 100;
  p.streams = 3;
  p.validate = true;
  auto r = RunClient(Client(p));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->ok()) << r->error;
  ASSERT_EQ(r->results.size(), 5u);
  for (const auto& s : r->results) {
    ASSERT_TRUE(s.bw) << s.bytes;
    EXPECT_EQ(s.iterations, 100u);
    EXPECT_EQ(s.bw->bytes, s.bytes * 100 * 3);  // size x iters x streams
    EXPECT_GT(s.bw->avg_gbps, 0);
    EXPECT_EQ(s.validate_errors, 0u);
  }
  EXPECT_EQ(r->client.role, "client");
  EXPECT_EQ(r->server_side.role, "server");
  EXPECT_EQ(r->server_side.registration, "host");
  EXPECT_EQ(r->client.device, "lo");
  EXPECT_EQ(r->settings.transport, "tcp");
}

TEST_F(LoopbackTest, BidirectionalAndDuration) {
  StartServer();
  TestParams p = Bw(65536, 0);
  p.bidir = true;
  p.duration_s = 0.2;
  p.streams = 2;
  auto r = RunClient(Client(p));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->ok()) << r->error;
  const auto& s = r->results.at(0);
  ASSERT_TRUE(s.bw_tx && s.bw_rx && s.bw);
  EXPECT_GT(s.bw_tx->bytes, 0u);
  EXPECT_GT(s.bw_rx->bytes, 0u);
  EXPECT_NEAR(s.bw->avg_gbps, s.bw_tx->avg_gbps + s.bw_rx->avg_gbps, 1e-9);
}

TEST_F(LoopbackTest, LatencyPingPong) {
  StartServer();
  TestParams p = Bw(64, 300);
  p.test = model::PerfTest::kLat;
  p.validate = true;
  auto r = RunClient(Client(p));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->ok()) << r->error;
  const auto& l = r->results.at(0).lat;
  ASSERT_TRUE(l);
  EXPECT_EQ(l->samples, 300u - 1 - 2);  // iters-1 deltas, 2 largest dropped
  EXPECT_LE(l->min_us, l->median_us);
  EXPECT_LE(l->median_us, l->p99_us);
  EXPECT_LE(l->p99_us, l->max_us);
  EXPECT_TRUE(l->half_round_trip);
}

TEST_F(LoopbackTest, LatencyForADuration) {
  StartServer();
  TestParams p = Bw(32, 0);
  p.test = model::PerfTest::kLat;
  p.duration_s = 0.2;
  auto r = RunClient(Client(p));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->ok()) << r->error;
  EXPECT_GT(r->results.at(0).iterations, 10u);
}

TEST_F(LoopbackTest, GarbageThenServesOthers) {
  StartServer();
  UniqueFd fd = Raw();
  std::string junk = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
  ASSERT_TRUE(SendAll(fd.get(), junk.data(), junk.size(), "test").ok());
  EXPECT_TRUE(ClosedBy(fd.get(), 2s));
  ExpectServes();
}

TEST_F(LoopbackTest, TruncatedFrameThenServesOthers) {
  StartServer();
  UniqueFd fd = Raw();
  std::string f = EncodeFrame(Hello());
  ASSERT_TRUE(SendAll(fd.get(), f.data(), f.size() / 2, "test").ok());
  ::shutdown(fd.get(), SHUT_WR);
  EXPECT_TRUE(ClosedBy(fd.get(), 2s));
  ExpectServes();
}

TEST_F(LoopbackTest, OversizeFrameBeforeAuthIsRefused) {
  StartServer();
  UniqueFd fd = Raw();
  std::string f = EncodeFrame({{"type", "hello"}, {"pad", std::string(100000, 'x')}});
  (void)SendAll(fd.get(), f.data(), kFrameHeader, "test");  // the header alone says too much
  EXPECT_TRUE(ClosedBy(fd.get(), 2s));
  ExpectServes();
}

TEST_F(LoopbackTest, SlowClientTimesOutWhileOthersAreServed) {
  StartServer();
  UniqueFd slow = Raw();  // connects and says nothing
  ExpectServes();         // not blocked by the silent one
  EXPECT_TRUE(ClosedBy(slow.get(), 3s));
  ExpectServes();
}

TEST_F(LoopbackTest, WrongVersionIsRefusedWithTheFix) {
  StartServer();
  FramedConnection conn(Raw(), "server");
  ASSERT_TRUE(conn.Send(Hello(99, 99), "handshake", 1s).ok());
  auto reply = conn.Expect("hello", "handshake", 2s, kMaxFrame);
  ASSERT_FALSE(reply.ok());
  EXPECT_NE(reply.status().message().find("upgrade fabcheck on the server"), std::string::npos)
      << reply.status().message();
  ExpectServes();
}

TEST_F(LoopbackTest, DisconnectAfterAcceptThenServesOthers) {
  StartServer();
  {
    FramedConnection conn(Raw(), "server");
    ASSERT_TRUE(conn.Send(Hello(), "handshake", 1s).ok());
    ASSERT_TRUE(conn.Expect("hello", "handshake", 2s, kMaxFrame).ok());
    ASSERT_TRUE(conn.Send({{"type", "request"}, {"params", Bw()}}, "request", 1s).ok());
    ASSERT_TRUE(conn.Expect("accept", "request", 2s, kMaxFrame).ok());
  }  // gone in the middle of the test setup
  ExpectServes();
  for (int i = 0; i < 50 && server_->tests_failed() == 0; ++i) std::this_thread::sleep_for(20ms);
  EXPECT_EQ(server_->tests_failed(), 1u);
}

TEST_F(LoopbackTest, TokenRequiredWrongTokenRefused) {
  StartServer("correct-horse-battery");
  auto no_token = RunClient(Client(Bw()));
  ASSERT_FALSE(no_token.ok());
  EXPECT_EQ(no_token.status().code(), StatusCode::kUnauthenticated);
  EXPECT_NE(no_token.status().message().find("requires a token"), std::string::npos);

  auto o = Client(Bw());
  o.token = "wrong-horse-battery";
  auto wrong = RunClient(o);
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().code(), StatusCode::kUnauthenticated);
  EXPECT_NE(wrong.status().message().find("wrong token"), std::string::npos) << wrong.status().message();

  // A request before the proof is refused, and nothing was admitted.
  FramedConnection conn(Raw(), "server");
  ASSERT_TRUE(conn.Send(Hello(), "handshake", 1s).ok());
  auto hello = conn.Expect("hello", "handshake", 2s, kMaxFrame);
  ASSERT_TRUE(hello.ok());
  EXPECT_EQ((*hello)["auth"], "hmac-sha256");
  ASSERT_TRUE(conn.Send({{"type", "request"}, {"params", Bw()}}, "request", 1s).ok());
  EXPECT_TRUE(ClosedBy(conn.fd(), 2s));
  EXPECT_EQ(server_->active_tests(), 0);

  o.token = "correct-horse-battery";
  auto right = RunClient(o);
  ASSERT_TRUE(right.ok()) << right.status().ToString();
  EXPECT_TRUE(right->ok());
}

TEST_F(LoopbackTest, OverLimitsRefusedNotAttempted) {
  ServerLimits l;
  l.max_mem_per_client = 1 << 20;
  l.max_duration_s = 1;
  StartServer(std::nullopt, l);
  auto big = RunClient(Client(Bw(8 << 20, 10)));
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.status().message().find("--max-mem"), std::string::npos) << big.status().message();
  TestParams p = Bw(4096, 0);
  p.duration_s = 0.6;
  p.sizes = {1, 2};
  auto long_run = RunClient(Client(p));
  ASSERT_FALSE(long_run.ok());
  EXPECT_NE(long_run.status().message().find("--max-duration"), std::string::npos);
  ExpectServes();
}

TEST_F(LoopbackTest, WatchdogStopsAnOverrunningTest) {
  ServerLimits l;
  l.max_duration_s = 0.5;
  StartServer(std::nullopt, l);
  auto r = RunClient(Client(Bw(65536, 100000000)));  // would run for minutes
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->ok());
  EXPECT_NE(r->error.find("max-duration"), std::string::npos) << r->error;
  ExpectServes();
}

// A fake server: does the handshake, then misbehaves as `act` says.
class FakeServer {
 public:
  template <typename Act>
  explicit FakeServer(Act act) {
    auto l = ListenTcp("127.0.0.1", 0, 4);
    listener_ = std::move(*l);
    port_ = LocalPort(listener_.get());
    thread_ = std::thread([this, act] {
      auto fd = AcceptWithDeadline(listener_.get(), DeadlineAfter(5s), nullptr);
      if (!fd.ok()) return;
      FramedConnection conn(std::move(*fd), "client");
      if (!conn.Expect("hello", "handshake", 2s, kMaxFrame).ok()) return;
      (void)conn.Send({{"type", "hello"}, {"protocol", 1}, {"auth", "none"}, {"nonce", std::string(32, 'b')}},
                      "handshake", 1s);
      if (!conn.Expect("request", "request", 2s, kMaxFrame).ok()) return;
      (void)conn.Send({{"type", "accept"}, {"protocol", 1}}, "request", 1s);
      act(conn);
    });
  }
  ~FakeServer() { thread_.join(); }
  int port() const { return port_; }

 private:
  UniqueFd listener_;
  int port_ = 0;
  std::thread thread_;
};

ClientOptions FakeClient(int port) {
  ClientOptions o;
  o.root = sys::SysRoot::Live();
  o.host = "127.0.0.1";
  o.port = port;
  o.params.op = model::PerfOp::kSend;
  o.params.sizes = {64};
  o.params.iters = 10;
  o.connect_timeout = 1s;
  o.io_timeout = 700ms;
  return o;
}

TEST(FakeServerTest, StalledServerTimesOutNamingPeerAndPhase) {
  FakeServer fake([](FramedConnection&) { std::this_thread::sleep_for(2500ms); });
  auto r = RunClient(FakeClient(fake.port()));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded) << r.status().ToString();
  EXPECT_NE(r.status().message().find("server 127.0.0.1:"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("tcp.listen"), std::string::npos) << r.status().message();
}

TEST(FakeServerTest, GarbageFromServerIsDataLoss) {
  FakeServer fake([](FramedConnection& c) {
    std::string junk(64, '\x7f');
    (void)SendAll(c.fd(), junk.data(), junk.size(), "fake");
    std::this_thread::sleep_for(300ms);
  });
  auto r = RunClient(FakeClient(fake.port()));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss) << r.status().ToString();
  EXPECT_NE(r.status().message().find("not a fabcheck perf frame"), std::string::npos);
}

TEST(FakeServerTest, ServerGoneMidTest) {
  FakeServer fake([](FramedConnection&) {});  // closes right after accept
  auto r = RunClient(FakeClient(fake.port()));
  ASSERT_FALSE(r.ok());
  // EOF or a reset (the fake closes with our message unread): either way the
  // error names the server and the phase.
  const std::string& m = r.status().message();
  EXPECT_TRUE(m.find("closed by the peer") != std::string::npos || m.find("ECONNRESET") != std::string::npos) << m;
  EXPECT_NE(m.find("server 127.0.0.1:"), std::string::npos) << m;
  EXPECT_NE(m.find("tcp.listen"), std::string::npos) << m;
}

// Issue: 24 idle sockets reopened as fast as the server closed them locked out
// every `perf run`. Idle ones now make room for real clients.
TEST_F(LoopbackTest, IdleConnectionsReopenedDoNotLockOutClients) {
  StartServer();
  std::atomic<bool> done{false};
  std::thread attacker([&] {
    std::vector<UniqueFd> idle;
    while (!done.load()) {
      // Keep 24 connections open that never say hello (the server allows 20 in
      // progress), reopening the closed ones every 20 ms.
      for (auto it = idle.begin(); it != idle.end();) {
        char c;
        ssize_t n = ::recv(it->get(), &c, 1, MSG_DONTWAIT);
        it = n == 0 || (n < 0 && errno != EAGAIN) ? idle.erase(it) : it + 1;
      }
      while (idle.size() < 24) {
        auto fd = ConnectTcp("127.0.0.1", server_->port(), 1s);
        if (!fd.ok()) break;
        idle.push_back(std::move(*fd));
      }
      std::this_thread::sleep_for(20ms);
    }
  });
  std::this_thread::sleep_for(600ms);
  int served = 0;
  for (int i = 0; i < 12; ++i) {
    auto r = RunClient(Client(Bw(4096, 20)));
    if (r.ok() && r->ok()) ++served;
  }
  done = true;
  attacker.join();
  EXPECT_EQ(served, 12);
  EXPECT_GT(server_->connections_evicted(), 0u);
}

}  // namespace
}  // namespace fabcheck::perf
