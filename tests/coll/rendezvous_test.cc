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

TEST(RankFromEnvironment, ReadsFabcheckFirst) {
  ScopedEnv a("FABCHECK_RANK", "1"), b("FABCHECK_WORLD_SIZE", "2"), c("FABCHECK_LOCAL_RANK", "1");
  auto env = RankFromEnvironment();
  ASSERT_TRUE(env.ok());
  EXPECT_EQ(env->rank, 1);
  EXPECT_EQ(env->world_size, 2);
  EXPECT_EQ(env->source, "FABCHECK_RANK");
}

TEST(RankFromEnvironment, TorchrunHereBatchLaunchersThroughSweepsDetection) {
  ScopedEnv a("FABCHECK_RANK", nullptr), b("FABCHECK_WORLD_SIZE", nullptr), c("RANK", nullptr),
      d("WORLD_SIZE", nullptr), e("SLURM_PROCID", "1"), f("SLURM_NTASKS", "2");
  auto env = RankFromEnvironment();
  ASSERT_TRUE(env.ok());
  EXPECT_EQ(env->source, "");  // `coll` then asks sweep::DetectSpmd
  ScopedEnv g("RANK", "3"), h("WORLD_SIZE", "4"), i("LOCAL_RANK", "1");
  env = RankFromEnvironment();
  ASSERT_TRUE(env.ok());
  EXPECT_EQ(env->source, "RANK");
  EXPECT_EQ(env->rank, 3);
  EXPECT_EQ(env->local_rank, 1);
}

TEST(RankFromEnvironment, RejectsBadNumbers) {
  ScopedEnv a("FABCHECK_RANK", "3"), b("FABCHECK_WORLD_SIZE", "2");
  auto env = RankFromEnvironment();
  ASSERT_FALSE(env.ok());
  EXPECT_NE(env.status().message().find("FABCHECK_RANK=3"), std::string::npos);
  ScopedEnv c("FABCHECK_RANK", "one");
  EXPECT_FALSE(RankFromEnvironment().ok());
}

RendezvousConfig FileConfig(int rank, int size, double timeout) {
  RendezvousConfig c;
  c.rank = rank;
  c.world_size = size;
  c.timeout_seconds = timeout;
  return c;
}

TEST(FileRendezvous, PassesRankZerosIdAndGathersResults) {
  std::string path = ::testing::TempDir() + "/fc-coll-id-" + std::to_string(::getpid());
  std::remove(path.c_str());
  auto r0 = MakeRendezvous("file:" + path, FileConfig(0, 2, 10));
  auto r1 = MakeRendezvous("file:" + path, FileConfig(1, 2, 10));
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

TEST(FileRendezvous, TimesOutWithAClearMessage) {
  auto r = MakeRendezvous("file:" + ::testing::TempDir() + "/fc-coll-never", FileConfig(3, 4, 0.1));
  ASSERT_TRUE(r.ok());
  auto got = (*r)->Exchange(3, "h", dl::ncclUniqueId{});
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_NE(got.status().message().find("rank 3"), std::string::npos);
  // Rank 0 names a rank that never wrote its result.
  auto r0 = MakeRendezvous("file:" + ::testing::TempDir() + "/fc-coll-never", FileConfig(0, 2, 0.1));
  ASSERT_TRUE(r0.ok());
  auto all = (*r0)->Gather(RankOutcome{});
  ASSERT_TRUE(all.ok());
  EXPECT_NE((*all)[1].error.find("rank 1 never wrote"), std::string::npos);
}

TEST(LocalRankFromEnvironment, ReadsTheLaunchersLocalRank) {
  ScopedEnv a("FABCHECK_LOCAL_RANK", nullptr), b("OMPI_COMM_WORLD_LOCAL_RANK", nullptr), c("MPI_LOCALRANKID", nullptr),
      d("LOCAL_RANK", nullptr), e("SLURM_LOCALID", "5");
  EXPECT_EQ(LocalRankFromEnvironment(), 5);
  ScopedEnv f("SLURM_LOCALID", nullptr);
  EXPECT_EQ(LocalRankFromEnvironment(), std::nullopt);
}

}  // namespace
}  // namespace fabcheck::coll
