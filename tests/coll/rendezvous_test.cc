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

TEST(RankFromEnvironment, ReadsFabcheckThenSlurm) {
  ScopedEnv a("FABCHECK_RANK", "1"), b("FABCHECK_WORLD_SIZE", "2"), c("FABCHECK_LOCAL_RANK", "1");
  auto env = RankFromEnvironment();
  ASSERT_TRUE(env.ok());
  EXPECT_EQ(env->rank, 1);
  EXPECT_EQ(env->world_size, 2);
  EXPECT_EQ(env->source, "FABCHECK_RANK");
}

TEST(RankFromEnvironment, RejectsBadNumbers) {
  ScopedEnv a("FABCHECK_RANK", "3"), b("FABCHECK_WORLD_SIZE", "2");
  auto env = RankFromEnvironment();
  ASSERT_FALSE(env.ok());
  EXPECT_NE(env.status().message().find("FABCHECK_RANK=3"), std::string::npos);
  ScopedEnv c("FABCHECK_RANK", "one");
  EXPECT_FALSE(RankFromEnvironment().ok());
}

TEST(FileRendezvous, PassesRankZerosId) {
  std::string path = ::testing::TempDir() + "/fc-coll-id-" + std::to_string(::getpid());
  std::remove(path.c_str());
  auto r0 = MakeRendezvous("file:" + path, 10);
  auto r1 = MakeRendezvous("file:" + path, 10);
  ASSERT_TRUE(r0.ok() && r1.ok());
  dl::ncclUniqueId id{};
  std::memset(id.internal, 0x5a, sizeof(id.internal));
  Result<dl::ncclUniqueId> got = InternalError("not run");
  std::thread waiter([&] { got = (*r1)->Exchange(1, dl::ncclUniqueId{}); });
  ASSERT_TRUE((*r0)->Exchange(0, id).ok());
  waiter.join();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(std::memcmp(got->internal, id.internal, sizeof(id.internal)), 0);
  std::remove(path.c_str());
}

TEST(FileRendezvous, TimesOutWithAClearMessage) {
  auto r = MakeRendezvous("file:" + ::testing::TempDir() + "/fc-coll-never", 0.1);
  ASSERT_TRUE(r.ok());
  auto got = (*r)->Exchange(3, dl::ncclUniqueId{});
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_NE(got.status().message().find("rank 3"), std::string::npos);
  EXPECT_FALSE(MakeRendezvous("tcp:host:1", 1).ok());
}

}  // namespace
}  // namespace fabcheck::coll
