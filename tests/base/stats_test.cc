#include "base/stats.h"

#include <gtest/gtest.h>

#include <cmath>

namespace fabcheck::stats {
namespace {

TEST(StatsTest, EmptyGivesNothing) {
  EXPECT_FALSE(Mean({}).has_value());
  EXPECT_FALSE(Median({}).has_value());
  EXPECT_FALSE(Percentile({}, 0.99).has_value());
  EXPECT_FALSE(Summarize({}).has_value());
}

TEST(StatsTest, CentreAndSpread) {
  std::vector<double> v{1, 2, 3, 4, 100};
  EXPECT_DOUBLE_EQ(*Mean(v), 22);
  EXPECT_DOUBLE_EQ(*Median(v), 3);
  EXPECT_DOUBLE_EQ(*Median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(*Mad(v), 1);  // deviations 2,1,0,1,97
  EXPECT_NEAR(*ScaledMad(v), 1.4826, 1e-12);
  EXPECT_NEAR(*StdDev({2, 4, 4, 4, 5, 5, 7, 9}), 2.138, 1e-3);
}

TEST(StatsTest, NearestRankPercentiles) {
  std::vector<double> v;
  for (int i = 1; i <= 1000; ++i) v.push_back(i);
  EXPECT_DOUBLE_EQ(*Percentile(v, 0.99), 990);
  EXPECT_DOUBLE_EQ(*Percentile(v, 0.999), 999);
  EXPECT_DOUBLE_EQ(*Percentile(v, 0.5), 500);
  EXPECT_DOUBLE_EQ(*Percentile(v, 0), 1);
  EXPECT_DOUBLE_EQ(*Percentile(v, 1), 1000);
  EXPECT_DOUBLE_EQ(*Percentile({7}, 0.99), 7);
}

TEST(StatsTest, RobustZ) {
  EXPECT_DOUBLE_EQ(RobustZ(10, 20, 2), -5);
  EXPECT_DOUBLE_EQ(RobustZ(20, 20, 0), 0);
  EXPECT_TRUE(std::isinf(RobustZ(1, 20, 0)));
}

TEST(StatsTest, Summary) {
  auto s = Summarize({5, 1, 3});
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->count, 3u);
  EXPECT_DOUBLE_EQ(s->min, 1);
  EXPECT_DOUBLE_EQ(s->max, 5);
  EXPECT_DOUBLE_EQ(s->median, 3);
  EXPECT_DOUBLE_EQ(s->p99, 5);
}

}  // namespace
}  // namespace fabcheck::stats
