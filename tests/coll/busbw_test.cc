// nccl-tests' arithmetic and layout, checked against values worked out by hand
// from its source (src/<op>.cu, src/common.cu, src/util.cu).
#include <gtest/gtest.h>

#include "coll/busbw.h"

namespace fabcheck::coll {
namespace {

TEST(BusBw, FactorsMatchNcclTests) {
  EXPECT_DOUBLE_EQ(BusBwFactor(CollOp::kAllReduce, 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(BusBwFactor(CollOp::kAllReduce, 2), 1.0);
  EXPECT_DOUBLE_EQ(BusBwFactor(CollOp::kAllReduce, 1), 0.0);
  EXPECT_DOUBLE_EQ(BusBwFactor(CollOp::kAllGather, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(BusBwFactor(CollOp::kReduceScatter, 4), 3.0 / 4);
  EXPECT_DOUBLE_EQ(BusBwFactor(CollOp::kAlltoAll, 2), 0.5);
  EXPECT_DOUBLE_EQ(BusBwFactor(CollOp::kBroadcast, 8), 1.0);
  EXPECT_DOUBLE_EQ(BusBwFactor(CollOp::kReduce, 8), 1.0);
  EXPECT_DOUBLE_EQ(BusBwFactor(CollOp::kSendRecv, 8), 1.0);
}

TEST(BusBw, AllGatherRoundsPerRankCountTo16Bytes) {
  // 1000 bytes of float over 3 ranks: 250 elements / 3 = 83, & ~3 = 80.
  CollCounts c = ComputeCollCounts(CollOp::kAllGather, 1000, 4, 3);
  EXPECT_EQ(c.param_count, 80u);
  EXPECT_EQ(c.send_count, 80u);
  EXPECT_EQ(c.recv_count, 240u);
  EXPECT_EQ(c.send_inplace_offset, 80u);
  EXPECT_EQ(c.recv_inplace_offset, 0u);
  EXPECT_EQ(PrintedSize(c, 4), 960u);  // max(send, recv) bytes
}

TEST(BusBw, ReduceScatterAndAlltoAllCounts) {
  CollCounts rs = ComputeCollCounts(CollOp::kReduceScatter, 8 << 20, 4, 8);
  EXPECT_EQ(rs.param_count, (2u << 20) / 8);
  EXPECT_EQ(rs.send_count, 2u << 20);
  EXPECT_EQ(rs.recv_inplace_offset, rs.param_count);
  EXPECT_EQ(PrintedSize(rs, 4), 8u << 20);
  CollCounts a2a = ComputeCollCounts(CollOp::kAlltoAll, 8, 1, 2);  // int8: & ~15
  EXPECT_EQ(a2a.param_count, 0u);
  CollCounts a2a_big = ComputeCollCounts(CollOp::kAlltoAll, 1024, 2, 3);  // half: 512/3 = 170 & ~7 = 168
  EXPECT_EQ(a2a_big.param_count, 168u);
  EXPECT_EQ(a2a_big.send_count, 504u);
  EXPECT_EQ(PrintedSize(a2a_big, 2), 1008u);
}

TEST(BusBw, AllReduceAndSendRecvUseTheWholeSize) {
  CollCounts ar = ComputeCollCounts(CollOp::kAllReduce, 1 << 20, 4, 8);
  EXPECT_EQ(ar.param_count, 1u << 18);
  EXPECT_EQ(PrintedSize(ar, 4), 1u << 20);
  CollCounts sr = ComputeCollCounts(CollOp::kSendRecv, 12, 8, 2);  // 12 B of double: 1 element
  EXPECT_EQ(sr.param_count, 1u);
  EXPECT_EQ(PrintedSize(sr, 8), 8u);
}

TEST(BusBw, BandwidthFromCountAndTime) {
  // all_reduce, 2 GPUs, 8 GiB of float in 49.6 ms: algbw 173.2, busbw x1.
  size_t count = (8ull << 30) / 4;
  Bandwidth ar = ComputeBandwidth(CollOp::kAllReduce, count, 4, 0.0496, 2);
  EXPECT_NEAR(ar.algbw_gbps, 8.0 * (1ull << 30) / 1e9 / 0.0496, 1e-9);
  EXPECT_DOUBLE_EQ(ar.busbw_gbps, ar.algbw_gbps);
  // all_gather counts every rank's share: param_count x nranks bytes.
  Bandwidth ag = ComputeBandwidth(CollOp::kAllGather, 1000, 4, 1e-3, 4);
  EXPECT_NEAR(ag.algbw_gbps, 1000.0 * 4 * 4 / 1e9 / 1e-3, 1e-12);
  EXPECT_NEAR(ag.busbw_gbps, ag.algbw_gbps * 0.75, 1e-12);
  EXPECT_EQ(ComputeBandwidth(CollOp::kAllReduce, 10, 4, 0, 2).algbw_gbps, 0);
}

// The table text (FormatFloatField, FormatCollRow, ...) is tested with the
// other renderers in tests/report/text_golden_test.cc.

TEST(BusBw, AverageOverBothHalves) {
  model::CollRow a, b;
  a.out_of_place.busbw_gbps = 10;
  a.in_place.busbw_gbps = 20;
  b.out_of_place.busbw_gbps = 30;
  b.in_place.busbw_gbps = 40;
  EXPECT_DOUBLE_EQ(AverageBusBw({a, b}), 25.0);
  EXPECT_DOUBLE_EQ(AverageBusBw({}), 0.0);
}

TEST(BusBw, ParsesOpsTypesAndRedops) {
  auto all = ParseCollOpList("all");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 7u);
  auto two = ParseCollOpList("allreduce,all-gather,all_reduce");
  ASSERT_TRUE(two.ok());
  ASSERT_EQ(two->size(), 2u);
  EXPECT_EQ((*two)[1], CollOp::kAllGather);
  auto bad = ParseCollOpList("all_reduce,allscatter");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("allscatter"), std::string::npos);
  EXPECT_EQ(*ParseNcclType("bf16"), dl::ncclBfloat16);
  EXPECT_EQ(NcclTypeName(dl::ncclFloat16), "half");
  EXPECT_FALSE(ParseNcclType("float128").ok());
  EXPECT_EQ(*ParseNcclRedOp("max"), dl::ncclMax);
  EXPECT_FALSE(ParseNcclRedOp("xor").ok());
}

}  // namespace
}  // namespace fabcheck::coll
