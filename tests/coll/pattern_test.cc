// The --check data: exact element encodings and where each output block's
// expected values come from.
#include <gtest/gtest.h>

#include <cstring>

#include "coll/pattern.h"

namespace fabcheck::coll {
namespace {

TEST(Pattern, ValuesAreSmallAndPeriodic) {
  for (int r = 0; r < 8; ++r) {
    for (size_t k = 0; k < 3000; ++k) {
      int v = PatternValue(r, k);
      EXPECT_GE(v, 0);
      EXPECT_LE(v, 12);
      EXPECT_EQ(v, PatternValue(r, k + kPatternPeriod));
    }
  }
  EXPECT_NE(PatternValue(0, 0), PatternValue(1, 0));  // ranks differ
}

TEST(Pattern, StoresExactElements) {
  uint8_t buffer[8];
  StoreElement(dl::ncclFloat16, 1, buffer);
  uint16_t half = 0;
  std::memcpy(&half, buffer, 2);
  EXPECT_EQ(half, 0x3c00);
  StoreElement(dl::ncclFloat16, 12, buffer);
  std::memcpy(&half, buffer, 2);
  EXPECT_EQ(half, 0x4a00);
  StoreElement(dl::ncclFloat16, 0, buffer);
  std::memcpy(&half, buffer, 2);
  EXPECT_EQ(half, 0);
  StoreElement(dl::ncclBfloat16, 3, buffer);
  uint16_t bf = 0;
  std::memcpy(&bf, buffer, 2);
  EXPECT_EQ(bf, 0x4040);
  StoreElement(dl::ncclFloat32, 7, buffer);
  float f = 0;
  std::memcpy(&f, buffer, 4);
  EXPECT_EQ(f, 7.0f);
  StoreElement(dl::ncclInt64, 96, buffer);
  int64_t i = 0;
  std::memcpy(&i, buffer, 8);
  EXPECT_EQ(i, 96);
}

TEST(Pattern, SupportedChecks) {
  EXPECT_TRUE(CheckSupported(dl::ncclFloat32, dl::ncclSum, 8));
  EXPECT_TRUE(CheckSupported(dl::ncclBfloat16, dl::ncclMax, 8));
  EXPECT_FALSE(CheckSupported(dl::ncclFloat32, dl::ncclProd, 2));
  EXPECT_FALSE(CheckSupported(dl::ncclFloat32, dl::ncclAvg, 2));
  EXPECT_FALSE(CheckSupported(dl::ncclFloat8e4m3, dl::ncclSum, 2));
}

TEST(Pattern, SegmentsPerCollective) {
  const int n = 4;
  CollCounts ag = ComputeCollCounts(CollOp::kAllGather, 4096, 4, n);
  auto segments = ExpectedSegments(CollOp::kAllGather, ag, 1, n, 0);
  ASSERT_EQ(segments.size(), 4u);
  EXPECT_EQ(segments[2].offset, 2 * ag.param_count);
  EXPECT_EQ(segments[2].source, 2);

  CollCounts rs = ComputeCollCounts(CollOp::kReduceScatter, 1 << 20, 4, n);
  segments = ExpectedSegments(CollOp::kReduceScatter, rs, 3, n, 0);
  ASSERT_EQ(segments.size(), 1u);
  EXPECT_EQ(segments[0].source, -1);
  EXPECT_EQ(segments[0].phase, (3 * rs.param_count) % kPatternPeriod);

  CollCounts a2a = ComputeCollCounts(CollOp::kAlltoAll, 1 << 20, 4, n);
  segments = ExpectedSegments(CollOp::kAlltoAll, a2a, 2, n, 0);
  ASSERT_EQ(segments.size(), 4u);
  EXPECT_EQ(segments[1].source, 1);
  EXPECT_EQ(segments[1].phase, (2 * a2a.param_count) % kPatternPeriod);

  CollCounts sr = ComputeCollCounts(CollOp::kSendRecv, 1024, 4, n);
  EXPECT_EQ(ExpectedSegments(CollOp::kSendRecv, sr, 0, n, 0)[0].source, 3);
  EXPECT_TRUE(ExpectedSegments(CollOp::kReduce, sr, 1, n, 0).empty());  // only the root is checked
  EXPECT_EQ(ExpectedSegments(CollOp::kBroadcast, sr, 1, n, 2)[0].source, 2);
}

}  // namespace
}  // namespace fabcheck::coll
