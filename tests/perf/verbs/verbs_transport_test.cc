// The verbs transport on a machine without RDMA: it must fail cleanly, with a
// message that says why and what to do, never crash or hang. (On the lab's
// soft-RoCE devices the same code runs for real: tests/lab.)
#include <gtest/gtest.h>

#include "perf/transport.h"
#include "perf/verbs/device.h"
#include "perf/verbs/verbs_transport.h"

namespace fabcheck::perf::verbs {
namespace {

TEST(VerbsTransportTest, NoRdmaHereFailsCleanly) {
  auto devices = ListDevices();
  if (devices.ok()) GTEST_SKIP() << "this machine has RDMA devices; the lab covers the live path";
  EXPECT_EQ(devices.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(devices.status().message().find("--transport tcp"), std::string::npos) << devices.status().message();
  auto t = CreateTransport(TransportKind::kVerbs);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(t.status().message(), devices.status().message());
  auto dev = OpenDevice("mlx5_0", 1, "10.0.0.1");
  ASSERT_FALSE(dev.ok());
  EXPECT_EQ(dev.status().code(), StatusCode::kUnavailable);
}

TEST(VerbsTransportTest, CapabilitiesExplainWhyNothingIsSupported) {
  if (ListDevices().ok()) GTEST_SKIP() << "this machine has RDMA devices";
  VerbsTransport t;
  Capabilities caps = t.GetCapabilities();
  EXPECT_TRUE(caps.ops.empty());
  ASSERT_FALSE(caps.notes.empty());
  TestParams p;
  p.transport = TransportKind::kVerbs;
  p.sizes = {65536};
  p.iters = 10;
  Status s = CheckCapabilities(p, caps);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("RDMA"), std::string::npos) << s.message();
}

TEST(VerbsTransportTest, MemoryNeededFollowsTheLayout) {
  VerbsTransport t;
  TestParams p;
  p.transport = TransportKind::kVerbs;
  p.sizes = {2, 65536, 4096};
  p.streams = 4;
  EXPECT_EQ(t.MemoryNeeded(p, Role::kServer), 4u * 2u * 65536u);
}

}  // namespace
}  // namespace fabcheck::perf::verbs
