// The control API's auth and errors, and the MTU echo and probe, over loopback.
#include <gtest/gtest.h>

#include "control/client.h"
#include "control/server.h"
#include "sweep/mtu_probe.h"

namespace fabcheck::sweep {
namespace {

TEST(ControlTest, TokenGuardsEverythingButHealth) {
  control::AgentServerOptions o;
  o.bind = "127.0.0.1";
  o.port = 0;
  o.token = "t0ken";
  o.info.name = "node-a";
  o.info.perf_port = 1;
  o.info.mtu_port = 2;
  o.run_test = [](const control::PeerTestRequest& r) -> Result<control::PeerTestResponse> {
    control::PeerTestResponse resp;
    resp.bw_gbps = 42;
    resp.device = r.peer;
    return resp;
  };
  auto server = control::AgentServer::Start(o);
  ASSERT_TRUE(server.ok()) << server.status().message();
  control::HostPort at{"127.0.0.1", (*server)->port()};
  control::AgentClient anonymous(at, {});
  EXPECT_TRUE(anonymous.Health().ok());
  auto refused = anonymous.Info();
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kUnauthenticated);
  control::AgentClient wrong(at, {std::string("t0keN")});
  EXPECT_EQ(wrong.Info().status().code(), StatusCode::kUnauthenticated);
  control::AgentClient good(at, {std::string("t0ken")});
  auto info = good.Info();
  ASSERT_TRUE(info.ok()) << info.status().message();
  EXPECT_EQ(info->name, "node-a");
  EXPECT_EQ(info->control_port, at.port);
  EXPECT_TRUE(info->auth);
  control::PeerTestRequest req;
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

TEST(ControlTest, DeadAgentIsUnavailableQuickly) {
  control::AgentClient nobody({"127.0.0.1", 1}, {std::nullopt, std::chrono::milliseconds(500)});
  auto info = nobody.Info();
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(info.status().message().find("127.0.0.1:1"), std::string::npos);
}

TEST(ControlTest, HostPortParsing) {
  EXPECT_EQ(control::ParseHostPort("a", 7)->port, 7);
  EXPECT_EQ(control::ParseHostPort("[::1]:9", 7)->host, "::1");
  EXPECT_FALSE(control::ParseHostPort(":9", 7).ok());
  EXPECT_FALSE(control::ParseHostPort("[::1", 7).ok());
  EXPECT_FALSE(control::ParseHostPort("a:70000", 7).ok());
}

TEST(MtuProbeTest, FindsTheLargestSizeOnLoopback) {
  auto echo = MtuEcho::Start("127.0.0.1", 0);
  ASSERT_TRUE(echo.ok()) << echo.status().message();
  MtuProbeOptions o;
  o.host = "127.0.0.1";
  o.port = (*echo)->port();
  o.max_size = 9000;
  auto r = ProbePathMtu(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->path_mtu, 9000);
  EXPECT_FALSE(r->black_hole);
  EXPECT_GE((*echo)->answered(), 1u);
  o.max_size = 0;  // the route's own MTU (lo: 65536, capped at the largest IP packet)
  auto full = ProbePathMtu(o);
  ASSERT_TRUE(full.ok()) << full.status().message();
  EXPECT_EQ(full->path_mtu, 65535);
}

TEST(MtuProbeTest, NoEchoIsUnavailableWithinTheDeadline) {
  MtuProbeOptions o;
  o.host = "127.0.0.1";
  o.port = 9;  // discard: nobody answers
  o.max_size = 2000;
  o.reply_timeout = std::chrono::milliseconds(50);
  o.attempts = 2;
  auto t0 = std::chrono::steady_clock::now();
  auto r = ProbePathMtu(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable) << r.status().message();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(3));
}

}  // namespace
}  // namespace fabcheck::sweep
