// Framing, version negotiation, request validation and server limits (the
// HMAC and token policy are tested in tests/net).
#include <gtest/gtest.h>

#include "perf/protocol.h"

namespace fabcheck::perf {
namespace {

TEST(Frame, RoundTrip) {
  nlohmann::json m = {{"type", "hello"}, {"protocol_max", 1}};
  std::string f = EncodeFrame(m);
  EXPECT_EQ(f.substr(0, 4), "FCP1");
  auto back = DecodeFrame(f, kMaxFrame);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, m);
}

TEST(Frame, RejectsGarbageWithAHint) {
  auto r = DecodeFrame("GET / HTTP/1.1\r\n\r\n", kMaxFrame);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(r.status().message().find("looks like HTTP"), std::string::npos);
}

TEST(Frame, RejectsOversizeTruncatedAndNonJson) {
  std::string big = EncodeFrame({{"type", "x"}, {"pad", std::string(5000, 'a')}});
  auto over = DecodeFrame(big, kMaxPreAuthFrame);
  ASSERT_FALSE(over.ok());
  EXPECT_NE(over.status().message().find("above the limit"), std::string::npos);
  std::string f = EncodeFrame({{"type", "hello"}});
  EXPECT_FALSE(DecodeFrame(f.substr(0, f.size() - 1), kMaxFrame).ok());
  EXPECT_FALSE(DecodeFrame(f.substr(0, 5), kMaxFrame).ok());
  std::string not_json = f.substr(0, kFrameHeader);
  not_json[7] = 3;
  not_json += "{{{";
  EXPECT_FALSE(DecodeFrame(not_json, kMaxFrame).ok());
  auto no_type = DecodeFrame(EncodeFrame({{"kind", "hello"}}), kMaxFrame);
  ASSERT_FALSE(no_type.ok());
  EXPECT_NE(no_type.status().message().find("\"type\""), std::string::npos);
}

TEST(Version, Negotiation) {
  EXPECT_EQ(*NegotiateVersion(1, 3, 1, 2), 2);
  EXPECT_EQ(*NegotiateVersion(2, 2, 1, 5), 2);
  auto old_client = NegotiateVersion(1, 1, 2, 3);
  ASSERT_FALSE(old_client.ok());
  EXPECT_NE(old_client.status().message().find("upgrade fabcheck on the client"), std::string::npos);
  auto old_server = NegotiateVersion(3, 4, 1, 2);
  ASSERT_FALSE(old_server.ok());
  EXPECT_NE(old_server.status().message().find("upgrade fabcheck on the server"), std::string::npos);
  EXPECT_FALSE(NegotiateVersion(0, 0, 1, 1).ok());
}

TestParams Good() {
  TestParams p;
  p.sizes = {65536};
  p.iters = 100;
  p.op = model::PerfOp::kSend;
  return p;
}

TEST(Params, JsonRoundTrip) {
  TestParams p = Good();
  p.transport = TransportKind::kVerbs;
  p.op = model::PerfOp::kWriteImm;
  p.bidir = true;
  p.tclass = 106;
  p.client.gid_index = 3;
  p.server.mem = *MemorySpec::Parse("cuda:1");
  p.server.numa = *NumaSpec::Parse("off");
  auto back = ParseTestParams(nlohmann::json(p));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(nlohmann::json(*back), nlohmann::json(p));
  EXPECT_EQ(back->server.mem.cuda_device, 1);
  EXPECT_FALSE(ParseTestParams(nlohmann::json::array()).ok());
  auto bad = ParseTestParams({{"transport", "carrier-pigeon"}, {"test", "bw"}, {"op", "send"}, {"sizes", {1}}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("carrier-pigeon"), std::string::npos);
}

TEST(Params, Validation) {
  EXPECT_TRUE(ValidateTestParams(Good()).ok());
  auto expect_bad = [](TestParams p, std::string_view needle) {
    Status s = ValidateTestParams(p);
    EXPECT_FALSE(s.ok()) << needle;
    EXPECT_NE(s.message().find(needle), std::string::npos) << s.message();
  };
  TestParams p = Good();
  p.sizes = {};
  expect_bad(p, "no message size");
  p = Good();
  p.sizes = {0};
  expect_bad(p, "out of range");
  p = Good();
  p.duration_s = 5;
  expect_bad(p, "exactly one of --iters");
  p = Good();
  p.iters = 0;
  expect_bad(p, "exactly one of --iters");
  p = Good();
  p.test = model::PerfTest::kLat;
  p.bidir = true;
  expect_bad(p, "--bidir applies to bandwidth");
  p = Good();
  p.test = model::PerfTest::kLat;
  p.streams = 2;
  expect_bad(p, "one ping-pong");
  p = Good();
  p.op = model::PerfOp::kRead;
  expect_bad(p, "RDMA operation");
  p = Good();
  p.mtu = 1500;
  expect_bad(p, "not an IB MTU");
  p = Good();
  p.streams = 0;
  expect_bad(p, "--streams/--qps 0");
  p = Good();
  p.sl = 3;
  expect_bad(p, "--sl applies to verbs");
}

TEST(Capabilities, RefusesWhatTheSideCannotDo) {
  Capabilities caps;
  caps.ops = {model::PerfOp::kSend};
  caps.max_streams = 4;
  caps.max_message = 1 << 20;
  caps.notes = {"CUDA memory unavailable: no libcudart"};
  TestParams p = Good();
  EXPECT_TRUE(CheckCapabilities(p, caps).ok());
  p.streams = 8;
  EXPECT_FALSE(CheckCapabilities(p, caps).ok());
  p = Good();
  p.server.mem = *MemorySpec::Parse("cuda:0");
  EXPECT_TRUE(CheckCapabilities(p, caps, Role::kClient).ok());  // only the server's memory is GPU
  Status s = CheckCapabilities(p, caps, Role::kServer);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("no libcudart"), std::string::npos);
}

TEST(Limits, RefusedNotAttempted) {
  ServerLimits l;
  l.max_mem_per_client = 1 << 20;
  l.max_mem_total = 3 << 20;
  l.max_duration_s = 10;
  TestParams p = Good();
  EXPECT_TRUE(CheckLimits(p, l, 1 << 20, 0).ok());
  Status per = CheckLimits(p, l, (1 << 20) + 1, 0);
  EXPECT_EQ(per.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(per.message().find("--max-mem"), std::string::npos);
  EXPECT_FALSE(CheckLimits(p, l, 1 << 20, 5 << 19).ok());  // total
  p.iters = 0;
  p.duration_s = 4;
  p.sizes = {1, 2, 4};
  Status too_long = CheckLimits(p, l, 1, 0);
  EXPECT_NE(too_long.message().find("12 s"), std::string::npos) << too_long.message();
  p.streams = 100;
  EXPECT_FALSE(CheckLimits(p, l, 1, 0).ok());
}

TEST(MemoryAndNuma, Parse) {
  EXPECT_EQ(MemorySpec::Parse("cuda:3")->ToString(), "cuda:3");
  EXPECT_EQ(MemorySpec::Parse("host")->ToString(), "host");
  EXPECT_FALSE(MemorySpec::Parse("gpu").ok());
  EXPECT_FALSE(MemorySpec::Parse("cuda:x").ok());
  EXPECT_EQ(NumaSpec::Parse("1")->node, 1);
  EXPECT_EQ(NumaSpec::Parse("off")->ToString(), "off");
  EXPECT_FALSE(NumaSpec::Parse("near").ok());
}

}  // namespace
}  // namespace fabcheck::perf
