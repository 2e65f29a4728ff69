// The agent's control API over loopback: auth, errors, and clients that
// misbehave (idle and half-open connections, oversized headers).
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string_view>
#include <thread>
#include <vector>

#include "base/fd.h"
#include "control/client.h"
#include "control/server.h"

namespace fabcheck::control {
namespace {

using namespace std::chrono_literals;

UniqueFd Connect(int port) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) fd.Reset();
  return fd;
}

long RssKiB() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return 0;
}

std::unique_ptr<AgentServer> StartAgent() {
  AgentServerOptions o;
  o.bind = "127.0.0.1";
  o.port = 0;
  o.token = "t0ken-t0ken";
  o.info.name = "node-a";
  auto server = AgentServer::Start(o);
  EXPECT_TRUE(server.ok()) << server.status().message();
  return server.ok() ? std::move(server).value() : nullptr;
}

// Issue: 16 idle sockets and the agent's health check stopped answering; 500
// half-open ones, nothing for 120 s; slowloris at 1 byte / 2 s.
TEST(AgentServerTest, IdleHalfOpenAndSlowClientsDoNotLockOutHealthChecks) {
  auto agent = StartAgent();
  ASSERT_TRUE(agent);
  std::vector<UniqueFd> hostile;
  for (int i = 0; i < 500; ++i) {
    UniqueFd fd = Connect(agent->port());
    if (!fd.valid()) break;
    static constexpr std::string_view kUnfinished = "GET /v1/health HTTP/1.1\r\nX: ";  // never finished
    if (i % 40 == 0) (void)::send(fd.get(), kUnfinished.data(), kUnfinished.size(), MSG_NOSIGNAL);
    hostile.push_back(std::move(fd));
  }
  ASSERT_GT(hostile.size(), 400u);
  AgentClient client({"127.0.0.1", agent->port()}, {std::nullopt, 1s});
  for (int i = 0; i < 5; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    auto health = client.Health();
    EXPECT_TRUE(health.ok()) << health.status().message();
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s);
  }
}

// Issue: one 600 MB header took the agent to 1.29 GB before a 400.
TEST(AgentServerTest, AnEndlessHeaderIsCutOffWithoutMemoryGrowth) {
  auto agent = StartAgent();
  ASSERT_TRUE(agent);
  long before = RssKiB();
  UniqueFd fd = Connect(agent->port());
  std::string head = "GET /v1/health HTTP/1.1\r\nX-Big: ";
  (void)::send(fd.get(), head.data(), head.size(), MSG_NOSIGNAL);
  std::string chunk(1 << 16, 'a');
  size_t sent = 0;
  while (sent < (600u << 20)) {
    ssize_t n = ::send(fd.get(), chunk.data(), chunk.size(), MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
  EXPECT_LT(sent, 64u << 20);
  EXPECT_LT(RssKiB() - before, 32 * 1024);
  EXPECT_TRUE(AgentClient({"127.0.0.1", agent->port()}, {}).Health().ok());
}

TEST(AgentServerTest, TokenGuardsEverythingButHealth) {
  AgentServerOptions o;
  o.bind = "127.0.0.1";
  o.port = 0;
  o.token = "t0ken";
  o.info.name = "node-a";
  o.info.perf_port = 1;
  o.info.mtu_port = 2;
  o.run_test = [](const PeerTestRequest& r) -> Result<PeerTestResponse> {
    PeerTestResponse resp;
    resp.bw_gbps = 42;
    resp.device = r.peer;
    return resp;
  };
  auto server = AgentServer::Start(o);
  ASSERT_TRUE(server.ok()) << server.status().message();
  HostPort at{"127.0.0.1", (*server)->port()};
  AgentClient anonymous(at, {});
  EXPECT_TRUE(anonymous.Health().ok());
  auto refused = anonymous.Info();
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kUnauthenticated);
  AgentClient wrong(at, {std::string("t0keN")});
  EXPECT_EQ(wrong.Info().status().code(), StatusCode::kUnauthenticated);
  AgentClient good(at, {std::string("t0ken")});
  auto info = good.Info();
  ASSERT_TRUE(info.ok()) << info.status().message();
  EXPECT_EQ(info->name, "node-a");
  EXPECT_EQ(info->control_port, at.port);
  EXPECT_TRUE(info->auth);
  PeerTestRequest req;
  req.peer = "10.1.2.3";
  req.perf_port = 5;
  req.mtu_port = 6;
  auto resp = good.RunTest(req, std::chrono::seconds(5));
  ASSERT_TRUE(resp.ok()) << resp.status().message();
  EXPECT_EQ(*resp->bw_gbps, 42);
  EXPECT_EQ(resp->device, "10.1.2.3");
  req.peer = "";
  auto bad = good.RunTest(req, std::chrono::seconds(5));
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument) << bad.status().message();
  EXPECT_EQ(good.Inventory().status().code(), StatusCode::kUnimplemented);
}

TEST(AgentServerTest, DeadAgentIsUnavailableQuickly) {
  AgentClient nobody({"127.0.0.1", 1}, {std::nullopt, std::chrono::milliseconds(500)});
  auto info = nobody.Info();
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(info.status().message().find("127.0.0.1:1"), std::string::npos);
}

TEST(AgentServerTest, HostPortParsing) {
  EXPECT_EQ(ParseHostPort("a", 7)->port, 7);
  EXPECT_EQ(ParseHostPort("[::1]:9", 7)->host, "::1");
  EXPECT_FALSE(ParseHostPort(":9", 7).ok());
  EXPECT_FALSE(ParseHostPort("[::1", 7).ok());
  EXPECT_FALSE(ParseHostPort("a:70000", 7).ok());
}


}  // namespace
}  // namespace fabcheck::control
