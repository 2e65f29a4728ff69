// Rank discovery from launcher variables and the file rendezvous.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <thread>

#include "coll/rendezvous.h"

namespace fabcheck::coll {
namespace {

class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    if (old) old_ = old, had_ = true;
    if (value) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (had_) {
      ::setenv(name_, old_.c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

RankExchangeConfig FileConfig(int rank, int size, double timeout) {
  RankExchangeConfig c;
  c.rank = rank;
  c.world_size = size;
  c.timeout_seconds = timeout;
  return c;
}

TEST(FileRankExchange, PassesRankZerosIdAndGathersResults) {
  std::string path = ::testing::TempDir() + "/fc-coll-id-" + std::to_string(::getpid());
  std::remove(path.c_str());
  auto r0 = MakeRankExchange("file:" + path, FileConfig(0, 2, 10));
  auto r1 = MakeRankExchange("file:" + path, FileConfig(1, 2, 10));
  ASSERT_TRUE(r0.ok() && r1.ok());
  dl::ncclUniqueId id{};
  std::memset(id.internal, 0x5a, sizeof(id.internal));
  Result<Meeting> got = InternalError("not run");
  std::thread waiter([&] {
    got = (*r1)->Exchange(1, "h", dl::ncclUniqueId{});
    RankOutcome o;
    o.rank = 1;
    o.host = "h";
    o.cuda_device = 1;
    ASSERT_TRUE((*r1)->Report(o).ok());
  });
  ASSERT_TRUE((*r0)->Exchange(0, "h", id).ok());
  RankOutcome own;
  own.host = "h";
  auto all = (*r0)->Gather(own);
  waiter.join();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(std::memcmp(got->id.internal, id.internal, sizeof(id.internal)), 0);
  EXPECT_EQ(got->local_rank, -1);  // a file cannot tell
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[1].cuda_device, 1);
  EXPECT_EQ((*all)[1].error, "");
  std::remove(path.c_str());
  std::remove((path + ".rank1.json").c_str());
}

TEST(FileRankExchange, TimesOutWithAClearMessage) {
  auto r = MakeRankExchange("file:" + ::testing::TempDir() + "/fc-coll-never", FileConfig(3, 4, 0.1));
  ASSERT_TRUE(r.ok());
  auto got = (*r)->Exchange(3, "h", dl::ncclUniqueId{});
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_NE(got.status().message().find("rank 3"), std::string::npos);
  // Rank 0 names a rank that never wrote its result.
  auto r0 = MakeRankExchange("file:" + ::testing::TempDir() + "/fc-coll-never", FileConfig(0, 2, 0.1));
  ASSERT_TRUE(r0.ok());
  auto all = (*r0)->Gather(RankOutcome{});
  ASSERT_TRUE(all.ok());
  EXPECT_NE((*all)[1].error.find("rank 1 never wrote"), std::string::npos);
}

}  // namespace
}  // namespace fabcheck::coll
