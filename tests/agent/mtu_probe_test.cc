// The path-MTU probe against the agent's UDP echo, over loopback.
#include <gtest/gtest.h>

#include "agent/mtu_probe.h"

namespace fabcheck::agent {
namespace {

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
}  // namespace fabcheck::agent
