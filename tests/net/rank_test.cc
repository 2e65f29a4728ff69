// The launcher rank detector shared by `coll` and `sweep`.
#include "net/rank.h"
#include "net/slurm.h"

#include <gtest/gtest.h>

#include <map>

namespace fabcheck::net {
namespace {

EnvLookup Env(std::map<std::string, std::string> vars) {
  return [vars](const char* name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST(DetectLaunchRank, EveryLauncher) {
  auto ompi = DetectLaunchRank(
      Env({{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "8"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "3"}}), 0);
  ASSERT_TRUE(ompi.ok() && ompi->has_value());
  EXPECT_EQ((*ompi)->rank, 3);
  EXPECT_EQ((*ompi)->size, 8);
  EXPECT_EQ((*ompi)->local_rank, 3);
  EXPECT_EQ((*ompi)->source, "OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE");
  auto slurm = DetectLaunchRank(Env({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "64"}, {"SLURM_LOCALID", "0"}}), 0);
  ASSERT_TRUE(slurm.ok() && slurm->has_value());
  EXPECT_EQ((*slurm)->size, 64);
  EXPECT_EQ((*slurm)->local_rank, 0);
  auto pmi = DetectLaunchRank(Env({{"PMI_RANK", "1"}, {"PMI_SIZE", "2"}}), 0);
  ASSERT_TRUE(pmi.ok() && pmi->has_value());
  EXPECT_EQ((*pmi)->local_rank, -1);  // not said: the rendezvous derives it
  auto pmix = DetectLaunchRank(Env({{"PMIX_RANK", "5"}, {"SLURM_NTASKS", "6"}, {"SLURM_LOCALID", "1"}}), 0);
  ASSERT_TRUE(pmix.ok() && pmix->has_value());
  EXPECT_EQ((*pmix)->size, 6);
  EXPECT_EQ((*pmix)->local_rank, 1);
  EXPECT_EQ((*pmix)->source, "PMIX_RANK + SLURM_NTASKS");
  auto k8s = DetectLaunchRank(Env({{"JOB_COMPLETION_INDEX", "2"}}), 4);
  ASSERT_TRUE(k8s.ok() && k8s->has_value());
  EXPECT_EQ((*k8s)->rank, 2);
  EXPECT_EQ((*k8s)->size, 4);
  auto none = DetectLaunchRank(Env({}), 0);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

TEST(DetectLaunchRank, FabcheckAndTorchrunComeFirst) {
  // Children of `srun ... coll --nprocs N` inherit SLURM_PROCID.
  auto own = DetectLaunchRank(Env({{"FABCHECK_RANK", "1"},
                                   {"FABCHECK_WORLD_SIZE", "2"},
                                   {"FABCHECK_LOCAL_RANK", "1"},
                                   {"SLURM_PROCID", "7"},
                                   {"SLURM_NTASKS", "16"}}),
                              0);
  ASSERT_TRUE(own.ok() && own->has_value());
  EXPECT_EQ((*own)->rank, 1);
  EXPECT_EQ((*own)->size, 2);
  EXPECT_EQ((*own)->local_rank, 1);
  auto torch = DetectLaunchRank(Env({{"RANK", "3"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "1"}}), 0);
  ASSERT_TRUE(torch.ok() && torch->has_value());
  EXPECT_EQ((*torch)->rank, 3);
  EXPECT_EQ((*torch)->local_rank, 1);
  EXPECT_EQ((*torch)->source, "RANK/WORLD_SIZE");
  // Without a local rank, fabcheck's and torchrun's ranks are local.
  auto no_local = DetectLaunchRank(Env({{"RANK", "2"}, {"WORLD_SIZE", "4"}}), 0);
  ASSERT_TRUE(no_local.ok() && no_local->has_value());
  EXPECT_EQ((*no_local)->local_rank, 2);
  // RANK alone is too common a name to mean a launch.
  auto alone = DetectLaunchRank(Env({{"RANK", "2"}, {"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "2"}}), 0);
  ASSERT_TRUE(alone.ok() && alone->has_value());
  EXPECT_EQ((*alone)->source, "SLURM_PROCID/SLURM_NTASKS");
}

TEST(DetectLaunchRank, BadValuesAreErrorsNamingTheVariable) {
  auto no_world = DetectLaunchRank(Env({{"JOB_COMPLETION_INDEX", "2"}}), 0);
  ASSERT_FALSE(no_world.ok());
  EXPECT_NE(no_world.status().message().find("--world"), std::string::npos);
  auto garbage = DetectLaunchRank(Env({{"SLURM_PROCID", "x"}, {"SLURM_NTASKS", "4"}}), 0);
  ASSERT_FALSE(garbage.ok());
  EXPECT_NE(garbage.status().message().find("SLURM_PROCID='x'"), std::string::npos) << garbage.status().message();
  EXPECT_FALSE(DetectLaunchRank(Env({{"SLURM_PROCID", "4"}, {"SLURM_NTASKS", "4"}}), 0).ok());
  EXPECT_FALSE(DetectLaunchRank(Env({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "4"}}), 5).ok());
  auto over = DetectLaunchRank(Env({{"FABCHECK_RANK", "3"}, {"FABCHECK_WORLD_SIZE", "2"}}), 0);
  ASSERT_FALSE(over.ok());
  EXPECT_NE(over.status().message().find("rank 3 of 2"), std::string::npos) << over.status().message();
  EXPECT_FALSE(DetectLaunchRank(Env({{"FABCHECK_RANK", "one"}, {"FABCHECK_WORLD_SIZE", "2"}}), 0).ok());
  EXPECT_FALSE(DetectLaunchRank(Env({{"PMI_RANK", "-1"}, {"PMI_SIZE", "2"}}), 0).ok());
  // A launch of one rank is valid here (coll); sweep asks for two itself.
  auto single = DetectLaunchRank(Env({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "1"}}), 0);
  ASSERT_TRUE(single.ok() && single->has_value());
  // A garbage local rank is only a hint lost, not an error.
  auto local = DetectLaunchRank(Env({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}, {"SLURM_LOCALID", "?"}}), 0);
  ASSERT_TRUE(local.ok() && local->has_value());
  EXPECT_EQ((*local)->local_rank, -1);
}

TEST(SlurmNodeList, TheFirstHostIsRankZerosNode) {
  EXPECT_EQ(*FirstSlurmHost("gpu01"), "gpu01");
  EXPECT_EQ(*FirstSlurmHost("gpu01,gpu02"), "gpu01");
  EXPECT_EQ(*FirstSlurmHost("gpu[003-010,012],login1"), "gpu003");
  EXPECT_EQ(*FirstSlurmHost("gpu[7,9-12]"), "gpu7");
  EXPECT_EQ(*FirstSlurmHost("rack[1-2]-n[07-08]"), "rack1-n07");
  EXPECT_EQ(*FirstSlurmHost("node-a.cluster.example,node-b"), "node-a.cluster.example");
  for (const char* bad : {"", "gpu[01-02", "[", "gpu]x", "a:b"}) {
    auto r = FirstSlurmHost(bad);
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << bad;
  }
  // The step's list wins over the job's (a step may run on part of the allocation).
  std::map<std::string, std::string> vars = {{"SLURM_JOB_NODELIST", "a[1-4]"}, {"SLURM_STEP_NODELIST", "a[3-4]"}};
  auto env = [&vars](const char* name) -> std::optional<std::string> {
    auto it = vars.find(name);
    return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
  EXPECT_EQ(**SlurmFirstHost(env), "a3");
  vars.erase("SLURM_STEP_NODELIST");
  EXPECT_EQ(**SlurmFirstHost(env), "a1");
  vars.clear();
  EXPECT_FALSE(SlurmFirstHost(env)->has_value());
}

}  // namespace
}  // namespace fabcheck::net
