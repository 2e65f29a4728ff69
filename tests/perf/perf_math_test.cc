// Result math on known inputs: perftest's bandwidth and latency semantics.
#include <gtest/gtest.h>

#include "fabcheck/model/perf.h"
#include "perf/engine.h"
#include "perf/tcp_internal.h"

namespace fabcheck::perf {
namespace {

using model::MakeBwFigures;
using model::MakeLatencyFigures;

TEST(BwFigures, PerftestUnits) {
  // 65536 B x 5000 iterations in 0.1 s.
  auto f = MakeBwFigures(65536ull * 5000, 5000, 0.1);
  EXPECT_DOUBLE_EQ(f.avg_gbps, 65536.0 * 5000 * 8 / 0.1 / 1e9);  // 26.2144 Gb/s (1e9 bits)
  EXPECT_DOUBLE_EQ(f.avg_mibps, 3125.0);                          // MiB = 2^20 bytes
  EXPECT_DOUBLE_EQ(f.mpps, 0.05);
  EXPECT_DOUBLE_EQ(f.peak_gbps, f.avg_gbps);  // no peak measured: the average bounds it
  EXPECT_EQ(MakeBwFigures(100, 1, 0.1, 50).peak_gbps, 50);
  EXPECT_EQ(MakeBwFigures(100, 1, 0).avg_gbps, 0);  // no time, no rate (never inf)
}

TEST(BwFigures, SumOfDirections) {
  auto a = MakeBwFigures(1000000000, 10, 1.0);
  auto b = MakeBwFigures(500000000, 5, 2.0);
  auto s = model::SumBwFigures(a, b);
  EXPECT_DOUBLE_EQ(s.avg_gbps, 8 + 2);
  EXPECT_EQ(s.bytes, 1500000000u);
  EXPECT_EQ(s.messages, 15u);
  EXPECT_EQ(s.elapsed_s, 2.0);
}

TEST(LatencyFigures, DropsTwoLargestAndHalves) {
  std::vector<double> rtt = {10, 3, 1, 7, 2, 9, 4, 6, 5, 8};  // 10 deltas, unsorted
  auto f = MakeLatencyFigures(rtt, /*half_round_trip=*/true);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->samples, 8u);  // 9 and 10 dropped
  EXPECT_DOUBLE_EQ(f->min_us, 0.5);
  EXPECT_DOUBLE_EQ(f->max_us, 4.0);
  EXPECT_DOUBLE_EQ(f->median_us, 2.25);  // (4 + 5) / 2 / 2
  EXPECT_DOUBLE_EQ(f->avg_us, 2.25);
  EXPECT_NEAR(f->stdev_us, std::sqrt(5.25) / 2, 1e-12);  // population stdev of 1..8, halved
  EXPECT_DOUBLE_EQ(f->p99_us, 4.0);
  EXPECT_TRUE(f->half_round_trip);
}

TEST(LatencyFigures, PercentileRanksAsPerftest) {
  std::vector<double> rtt;
  for (int i = 1000; i >= 1; --i) rtt.push_back(i);
  auto f = MakeLatencyFigures(rtt, /*half_round_trip=*/false);  // read: full round trip
  ASSERT_TRUE(f);
  EXPECT_EQ(f->samples, 998u);
  EXPECT_DOUBLE_EQ(f->median_us, 499.5);  // even count: mean of the middle two
  EXPECT_DOUBLE_EQ(f->p90_us, 900);       // sorted[ceil(0.9 * 998)] = sorted[899]
  EXPECT_DOUBLE_EQ(f->p99_us, 990);       // sorted[ceil(0.99 * 998)] = sorted[989]
  EXPECT_DOUBLE_EQ(f->p999_us, 998);      // sorted[998] is past the end: the last kept
  EXPECT_DOUBLE_EQ(f->max_us, 998);
  EXPECT_FALSE(MakeLatencyFigures({}, true));
  auto one = MakeLatencyFigures({4}, true);  // too few to drop anything
  ASSERT_TRUE(one);
  EXPECT_DOUBLE_EQ(one->median_us, 2);
}

TEST(AssembleSize, UnidirectionalUsesReceiverPeak) {
  TestParams p;
  SideMeasurement c, s;
  c.iterations = 100;
  c.tx_bytes = 100 * 1000000;
  c.tx_messages = 100;
  c.tx_elapsed_s = 0.1;
  c.tx_peak_gbps = 100;  // inflated by socket buffers
  s.rx_peak_gbps = 9;
  auto r = AssembleSize(p, 1000000, c, s);
  ASSERT_TRUE(r.bw);
  EXPECT_DOUBLE_EQ(r.bw->avg_gbps, 8);
  EXPECT_DOUBLE_EQ(r.bw->peak_gbps, 9);
  EXPECT_FALSE(r.bw_tx);
  EXPECT_TRUE(r.error.empty());
}

TEST(AssembleSize, BidirectionalReportsEachDirectionAndSum) {
  TestParams p;
  p.bidir = true;
  SideMeasurement c, s;
  c.tx_bytes = 1000000000;
  c.tx_messages = 1000;
  c.tx_elapsed_s = 1;
  s.tx_bytes = 500000000;
  s.tx_messages = 500;
  s.tx_elapsed_s = 1;
  auto r = AssembleSize(p, 1000000, c, s);
  ASSERT_TRUE(r.bw && r.bw_tx && r.bw_rx);
  EXPECT_DOUBLE_EQ(r.bw_tx->avg_gbps, 8);
  EXPECT_DOUBLE_EQ(r.bw_rx->avg_gbps, 4);
  EXPECT_DOUBLE_EQ(r.bw->avg_gbps, 12);
}

TEST(AssembleSize, LatencyHalvesWriteNotRead) {
  TestParams p;
  p.test = model::PerfTest::kLat;
  SideMeasurement c;
  c.rtt_us = {2, 2, 2, 2, 2};
  p.op = model::PerfOp::kSend;
  EXPECT_DOUBLE_EQ(AssembleSize(p, 2, c, {}).lat->median_us, 1);
  p.op = model::PerfOp::kRead;
  EXPECT_DOUBLE_EQ(AssembleSize(p, 2, c, {}).lat->median_us, 2);
}

TEST(AssembleSize, ValidationMismatchIsAnError) {
  TestParams p;
  SideMeasurement c, s;
  c.tx_elapsed_s = 1;
  s.validate_errors = 3;
  s.validate_detail = "stream 0 message 7 byte 12: data differs from the pattern";
  auto r = AssembleSize(p, 64, c, s);
  EXPECT_EQ(r.validate_errors, 3u);
  EXPECT_NE(r.error.find("3 message(s)"), std::string::npos);
  EXPECT_NE(r.error.find("server: stream 0 message 7"), std::string::npos);
  model::PerfResult result;
  result.results.push_back(r);
  EXPECT_FALSE(result.ok());
}

TEST(PerfResult, JsonRoundTripKeepsSchemaAndFigures) {
  model::PerfResult r;
  r.settings.transport = "tcp";
  r.settings.sizes = {64, 65536};
  r.client.role = "client";
  r.client.numa_node = 1;
  r.server_side.gid_index = 3;
  model::PerfSizeResult s;
  s.bytes = 65536;
  s.bw = MakeBwFigures(65536 * 10, 10, 0.001);
  s.lat = MakeLatencyFigures({1, 2, 3, 4}, true);
  r.results.push_back(s);
  nlohmann::json j = r;
  EXPECT_EQ(j["schema"], "fabcheck.perf/v1");
  EXPECT_EQ(j["ok"], true);
  EXPECT_TRUE(j["client"]["gid_index"].is_null());
  auto back = j.get<model::PerfResult>();
  EXPECT_EQ(nlohmann::json(back), j);
}

TEST(Pattern, DetectsAFlippedByte) {
  std::vector<char> buf(1001);
  tcp::FillPattern(buf.data(), buf.size(), tcp::PatternSeed(2, 17));
  EXPECT_FALSE(tcp::CheckPattern(buf.data(), buf.size(), tcp::PatternSeed(2, 17)));
  EXPECT_TRUE(tcp::CheckPattern(buf.data(), buf.size(), tcp::PatternSeed(2, 18)));  // a reordered message
  buf[1000] ^= 1;
  EXPECT_EQ(tcp::CheckPattern(buf.data(), buf.size(), tcp::PatternSeed(2, 17)), 1000u);
}

TEST(PeakMeter, BestFullBucket) {
  auto t0 = Clock::now();
  PeakMeter m(t0);
  using std::chrono::milliseconds;
  m.Add(t0 + milliseconds(1), 999999);  // partial first bucket: ignored
  m.Add(t0 + milliseconds(15), 1250000);  // 1.25 MB in 10 ms = 1 Gb/s
  m.Add(t0 + milliseconds(25), 2500000);  // 2 Gb/s
  m.Add(t0 + milliseconds(35), 999999);   // partial last bucket: ignored
  EXPECT_NEAR(m.PeakGbps(), 2.0, 1e-9);
  PeakMeter short_run(t0);
  short_run.Add(t0 + milliseconds(1), 100);
  EXPECT_EQ(short_run.PeakGbps(), 0);  // too short to tell
}

TEST(PeakMeter, SpanIsSpreadOverTheTimeItTook) {
  auto t0 = Clock::now();
  auto at = [&](double s) { return t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s)); };
  // One moderated completion: 10 MB moved evenly over 100 ms = 0.8 Gb/s, not
  // 10 MB in one 10 ms bucket (8 Gb/s).
  PeakMeter spread(t0);
  spread.AddSpan(at(0.0), at(0.1), 10'000'000);
  EXPECT_NEAR(spread.PeakGbps(), 0.8, 0.01);
  PeakMeter piled(t0);
  piled.Add(at(0.005), 1);
  piled.Add(at(0.095), 10'000'000);
  piled.Add(at(0.2), 1);
  EXPECT_GT(piled.PeakGbps(), 7.9);
  // A span inside one bucket is a plain Add.
  PeakMeter inside(t0);
  inside.AddSpan(at(0.011), at(0.012), 1000);
  inside.AddSpan(at(0.021), at(0.022), 2000);
  inside.AddSpan(at(0.031), at(0.032), 3000);
  EXPECT_NEAR(inside.PeakGbps(), 2000 * 8 / 0.010 / 1e9, 1e-12);
}

}  // namespace
}  // namespace fabcheck::perf
