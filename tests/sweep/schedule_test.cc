#include "sweep/schedule.h"

#include <gtest/gtest.h>

#include <set>

namespace fabcheck::sweep {
namespace {

// Every pair exactly once, no node twice in a round, n-1 rounds (n for odd n).
TEST(ScheduleTest, PairwiseCoversEveryPairOnceForTwoToSixtyFive) {
  for (int n = 2; n <= 65; ++n) {
    Schedule s = PairwiseSchedule(n);
    ASSERT_TRUE(ValidateSchedule(s).ok()) << "n=" << n << ": " << ValidateSchedule(s).message();
    EXPECT_EQ(s.pair_count(), static_cast<size_t>(n) * (n - 1) / 2) << "n=" << n;
    EXPECT_EQ(s.rounds.size(), static_cast<size_t>(n % 2 == 0 ? n - 1 : n)) << "n=" << n;
    std::set<std::pair<int, int>> pairs;
    for (const auto& round : s.rounds) {
      std::set<int> in_round;
      // Even n: every node plays every round; odd n: exactly one sits out.
      EXPECT_EQ(round.size(), static_cast<size_t>(n / 2)) << "n=" << n;
      for (const Pair& p : round) {
        EXPECT_TRUE(in_round.insert(p.a).second) << "n=" << n << " node " << p.a << " twice";
        EXPECT_TRUE(in_round.insert(p.b).second) << "n=" << n << " node " << p.b << " twice";
        EXPECT_TRUE(pairs.insert({std::min(p.a, p.b), std::max(p.a, p.b)}).second);
      }
    }
    for (int a = 0; a < n; ++a) {
      for (int b = a + 1; b < n; ++b) EXPECT_TRUE(pairs.count({a, b})) << "n=" << n << " missing " << a << "," << b;
    }
  }
}

TEST(ScheduleTest, RingTestsEveryNeighbourOnce) {
  for (int n = 2; n <= 65; ++n) {
    Schedule s = RingSchedule(n);
    ASSERT_TRUE(ValidateSchedule(s).ok()) << "n=" << n << ": " << ValidateSchedule(s).message();
    EXPECT_EQ(s.pair_count(), static_cast<size_t>(n == 2 ? 1 : n)) << "n=" << n;
    EXPECT_LE(s.rounds.size(), 3u);
    std::set<std::pair<int, int>> pairs;
    for (const auto& r : s.rounds) {
      for (const Pair& p : r) pairs.insert({p.a, p.b});
    }
    for (int i = 0; i < n; ++i) {
      int j = (i + 1) % n;
      EXPECT_TRUE(pairs.count({std::min(i, j), std::max(i, j)})) << "n=" << n << " missing " << i;
    }
  }
}

TEST(ScheduleTest, RandomGivesEveryNodeKPeersAndIsReproducible) {
  for (int n : {2, 3, 7, 16, 65}) {
    for (int k : {1, 2, 3}) {
      if (k > n - 1) continue;
      auto s = RandomSchedule(n, k, 42);
      ASSERT_TRUE(s.ok());
      ASSERT_TRUE(ValidateSchedule(*s).ok()) << ValidateSchedule(*s).message();
      std::vector<int> degree(static_cast<size_t>(n), 0);
      for (const auto& r : s->rounds) {
        for (const Pair& p : r) {
          ++degree[static_cast<size_t>(p.a)];
          ++degree[static_cast<size_t>(p.b)];
        }
      }
      for (int d : degree) EXPECT_GE(d, k) << "n=" << n << " k=" << k;
      EXPECT_LE(s->rounds.size(), static_cast<size_t>(4 * k + 2));
      auto again = RandomSchedule(n, k, 42);
      ASSERT_TRUE(again.ok());
      EXPECT_EQ(again->rounds, s->rounds);
    }
  }
}

TEST(ScheduleTest, RejectsBadInput) {
  EXPECT_FALSE(MakeSchedule(Pattern::kPairwise, 1).ok());
  EXPECT_FALSE(RandomSchedule(4, 4, 1).ok());
  EXPECT_FALSE(RandomSchedule(4, 0, 1).ok());
  auto bad = ParsePattern("mesh");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("pairwise, ring, k-random"), std::string::npos);
  EXPECT_EQ(*ParsePattern("k-random"), Pattern::kRandom);
}

TEST(ScheduleTest, ValidateCatchesBrokenSchedules) {
  Schedule twice{Pattern::kPairwise, 4, {{{0, 1}, {1, 2}}}};
  EXPECT_FALSE(ValidateSchedule(twice).ok());
  Schedule repeated{Pattern::kPairwise, 4, {{{0, 1}}, {{1, 0}}}};
  EXPECT_FALSE(ValidateSchedule(repeated).ok());
  Schedule self{Pattern::kPairwise, 4, {{{2, 2}}}};
  EXPECT_FALSE(ValidateSchedule(self).ok());
  Schedule out{Pattern::kPairwise, 4, {{{0, 4}}}};
  EXPECT_FALSE(ValidateSchedule(out).ok());
}

}  // namespace
}  // namespace fabcheck::sweep
