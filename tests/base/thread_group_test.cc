#include "base/thread_group.h"

#include <gtest/gtest.h>

#include <atomic>
#include <latch>

#include "../fixtures/in_child.h"
#include "../fixtures/pod_limits.h"
#include "base/parallel.h"

namespace fabcheck::base {
namespace {

TEST(Budget, ALeaseCountsAgainstItsBudgetAndEveryParentUntilItEnds) {
  Budget all("all", 10, nullptr, "bytes");
  Budget one("one request", 6, &all);
  auto a = one.Take(4, "a");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(one.in_use(), 4u);
  EXPECT_EQ(all.in_use(), 4u);
  auto b = one.Take(3, "b");  // 7 > 6: the request's share is spent
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(b.status().message().find("one request"), std::string::npos) << b.status().message();
  Budget other("another request", 8, &all);
  auto c = other.Take(5, "c");  // 4 + 5 = 9 <= 10
  ASSERT_TRUE(c.ok());
  auto d = other.Take(1, "d");
  ASSERT_TRUE(d.ok());
  auto e = other.Take(1, "e");  // the process's ceiling: nothing taken from the request either
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("all"), std::string::npos) << e.status().message();
  EXPECT_EQ(other.in_use(), 6u);
  *a = Budget::Lease();
  EXPECT_EQ(one.in_use(), 0u);
  EXPECT_EQ(all.in_use(), 6u);
}

TEST(ThreadGroup, StartsWithinItsBudgetAndRefusesPastIt) {
  Budget three("three threads", 3, nullptr, "threads");
  std::atomic<int> ran{0};
  std::latch hold(1);
  {
    ThreadGroup group("test work", &three);
    Status s = group.StartEach(5, [&](size_t) {
      hold.wait();
      ++ran;
    });
    EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s.ToString();
    EXPECT_EQ(group.started(), 3u);
    hold.count_down();
  }  // joins the three
  EXPECT_EQ(ran.load(), 3);
  EXPECT_EQ(three.in_use(), 0u);
}

TEST(ThreadGroup, UnderPidsMaxARefusedThreadIsAnErrorNotAnAbort) {
  std::string why;
  auto limit = test_support::PodLimit::Create("pids", 8, &why);
  if (!limit) GTEST_SKIP() << "no pids cgroup: " << why;
  auto outcome = test_support::RunInChild(1ll << 40, [&] {
    if (!limit->Add(::getpid())) return 2;
    std::latch hold(1);
    int code = 0;
    {
      ThreadGroup group("many threads");
      Status s = group.StartEach(64, [&](size_t) { hold.wait(); });
      if (s.code() != StatusCode::kResourceExhausted) code = 3;
      if (s.message().find("pids.max") == std::string::npos) code = 4;
      if (group.started() == 0 || group.started() >= 64) code = 5;
      hold.count_down();
    }
    // The work of a fan-out still gets done under the limit.
    std::atomic<int> done{0};
    ParallelFor(100, 64, [&](size_t) { ++done; });
    if (done != 100) code = 6;
    return code;
  });
  EXPECT_EQ(outcome.code, 0) << outcome.Describe();
}

}  // namespace
}  // namespace fabcheck::base
