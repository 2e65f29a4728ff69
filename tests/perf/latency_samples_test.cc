// A latency test's samples stay within their budget however long it runs,
// and what is kept past the budget is still a fair sample of every round trip.
#include "perf/latency_samples.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "fabcheck/model/perf.h"

namespace fabcheck::perf {
namespace {

TEST(LatencySamples, KeepsEverySampleUpToTheBudget) {
  LatencySamples s(100);
  for (int i = 0; i < 100; ++i) s.Add(i);
  EXPECT_EQ(s.seen(), 100u);
  std::vector<double> kept = std::move(s).Take();
  ASSERT_EQ(kept.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(kept[i], i);
}

TEST(LatencySamples, PastTheBudgetMemoryStaysFlatAndTheSampleIsFair) {
  // A billion-iteration test used to reserve 8 GB of timestamps before its
  // first ping; here 1,000,000 round trips go through a budget of 10,000.
  LatencySamples s(10'000);
  s.Reserve(1'000'000'000);
  const int n = 1'000'000;
  for (int i = 0; i < n; ++i) s.Add(i % 1000 == 999 ? 500.0 : 10.0 + (i % 100) / 100.0);  // 0.1% tail at 500 us
  EXPECT_EQ(s.seen(), static_cast<uint64_t>(n));
  std::vector<double> kept = std::move(s).Take();
  ASSERT_EQ(kept.size(), 10'000u);
  EXPECT_LE(kept.capacity(), 10'000u) << "reserved past the budget";
  // The median stays in the body, and the tail is still seen at about its rate.
  auto figures = model::MakeLatencyFigures(kept, /*half_round_trip=*/false);
  ASSERT_TRUE(figures.has_value());
  EXPECT_GT(figures->median_us, 10.0);
  EXPECT_LT(figures->median_us, 11.0);
  long tail = std::count(kept.begin(), kept.end(), 500.0);
  EXPECT_GT(tail, 3) << "the 0.1% tail vanished from the sample";
  EXPECT_LT(tail, 30) << "the sample over-weights the tail";
}

}  // namespace
}  // namespace fabcheck::perf
