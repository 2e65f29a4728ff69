#include "perf/verbs/plan.h"

#include <gtest/gtest.h>

#include <vector>

namespace fabcheck::perf::verbs {
namespace {

TEST(MtuTest, EnumRoundTrip) {
  for (int bytes : {256, 512, 1024, 2048, 4096}) {
    auto e = MtuEnumFromBytes(bytes);
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(MtuBytesFromEnum(*e), bytes);
  }
  EXPECT_FALSE(MtuEnumFromBytes(1500).has_value());
  EXPECT_EQ(MtuBytesFromEnum(0), 0);
  EXPECT_EQ(MtuBytesFromEnum(6), 0);
}

TEST(MtuTest, NegotiatesTheSmallerActiveMtu) {
  auto m = NegotiateMtu(4096, 1024, 0);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->bytes, 1024);
  EXPECT_NE(m->reason.find("local 4096, peer 1024"), std::string::npos);
  m = NegotiateMtu(4096, 4096, 0);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->bytes, 4096);
}

TEST(MtuTest, RequestedMtuBelowThePathIsUsed) {
  auto m = NegotiateMtu(4096, 4096, 1024);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->bytes, 1024);
}

TEST(MtuTest, RequestedMtuAboveThePathIsRefused) {
  auto m = NegotiateMtu(4096, 1024, 4096);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(m.status().message().find("local 4096, peer 1024"), std::string::npos);
  EXPECT_FALSE(NegotiateMtu(1024, 1024, 1500).ok());
  EXPECT_FALSE(NegotiateMtu(1500, 1024, 0).ok());
}

TEST(PlanTest, ReadDepth) {
  EXPECT_EQ(NegotiateReadDepth(128, 128), 16);
  EXPECT_EQ(NegotiateReadDepth(4, 128), 4);
  EXPECT_EQ(NegotiateReadDepth(128, 2), 2);
  EXPECT_EQ(NegotiateReadDepth(0, 0), 1);
}

TEST(PlanTest, SignallingFollowsPerftest) {
  EXPECT_EQ(SignalInterval(100, 128), 100);
  EXPECT_EQ(SignalInterval(100, 16), 16);
  EXPECT_EQ(SignalInterval(0, 16), 1);
  // 250 requests with interval 100: 99, 199 and the last one (249).
  std::vector<uint64_t> signalled;
  for (uint64_t n = 0; n < 250; ++n) {
    if (IsSignalled(n, 250, 100)) signalled.push_back(n);
  }
  EXPECT_EQ(signalled, (std::vector<uint64_t>{99, 199, 249}));
  EXPECT_TRUE(IsSignalled(0, 1, 100));
}

TEST(PlanTest, InlineDecision) {
  EXPECT_TRUE(UseInline(64, 220, 256, model::PerfOp::kWrite));
  EXPECT_FALSE(UseInline(64, 220, 32, model::PerfOp::kWrite));  // the QP granted less
  EXPECT_FALSE(UseInline(512, 220, 256, model::PerfOp::kSend));
  EXPECT_FALSE(UseInline(2, 220, 256, model::PerfOp::kRead));
  EXPECT_FALSE(UseInline(2, 0, 256, model::PerfOp::kSend));
}

TEST(PlanTest, RegionLayout) {
  EXPECT_EQ(SlotBytes(2), 64u);
  EXPECT_EQ(SlotBytes(65536), 65536u);
  EXPECT_EQ(RegionBytes(65536, 2), 4u * 65536u);
  EXPECT_EQ(RegionBytes(2, 1) % 4096, 0u);
}

TEST(PlanTest, PatternDetectsOneWrongByte) {
  std::vector<uint8_t> buf(4096);
  FillPattern(buf.data(), buf.size(), PatternSeed(4096, true), 3);
  EXPECT_FALSE(CheckPattern(buf.data(), buf.size(), PatternSeed(4096, true), 3).has_value());
  // Another QP, direction or size does not pass for this one.
  EXPECT_TRUE(CheckPattern(buf.data(), buf.size(), PatternSeed(4096, true), 2).has_value());
  EXPECT_TRUE(CheckPattern(buf.data(), buf.size(), PatternSeed(4096, false), 3).has_value());
  EXPECT_TRUE(CheckPattern(buf.data(), buf.size(), PatternSeed(2048, true), 3).has_value());
  buf[1234] ^= 0x10;
  auto m = CheckPattern(buf.data(), buf.size(), PatternSeed(4096, true), 3);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->offset, 1234u);
  EXPECT_EQ(m->got ^ m->want, 0x10);
}

TEST(PlanTest, PsnIs24Bits) {
  for (int i = 0; i < 100; ++i) EXPECT_LE(RandomPsn(), 0xffffffu);
}

TestParams VerbsParams() {
  TestParams p;
  p.transport = TransportKind::kVerbs;
  p.sizes = {2};
  p.iters = 1000;
  return p;
}

TEST(PlanTest, VerbsParamChecks) {
  TestParams p = VerbsParams();
  EXPECT_TRUE(ValidateVerbsParams(p).ok());
  p.test = model::PerfTest::kLat;
  p.client.mem.kind = MemorySpec::Kind::kCuda;
  Status s = ValidateVerbsParams(p);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("--op send"), std::string::npos);
  p.op = model::PerfOp::kSend;
  EXPECT_TRUE(ValidateVerbsParams(p).ok());
  p.iters = 0;
  p.duration_s = 5;
  EXPECT_TRUE(ValidateVerbsParams(p).ok());  // latency by duration: calibrated, see below
}

TEST(PlanTest, LatencyIterationsForADuration) {
  // 64 round trips in 6.4 ms = 100 us each: 2 s holds 20000.
  EXPECT_EQ(LatIterationsForDuration(2.0, 0.0064, 64), 20000u);
  // Slower than the whole duration: still the two round trips a figure needs.
  EXPECT_EQ(LatIterationsForDuration(0.001, 1.0, 64), 2u);
  // Very fast: capped so the client's time stamps stay bounded.
  EXPECT_EQ(LatIterationsForDuration(3600, 0.000001, 64), kMaxLatIterations);
  // Nonsense calibration never divides by zero.
  EXPECT_EQ(LatIterationsForDuration(2.0, 0.0, 64), 2u);
  EXPECT_EQ(LatIterationsForDuration(2.0, 0.01, 0), 2u);
}

}  // namespace
}  // namespace fabcheck::perf::verbs
