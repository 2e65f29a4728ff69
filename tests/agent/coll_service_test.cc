// The agent's side of L4 (POST /v1/coll): what it accepts, the command line
// it builds, and a real job whose rank starts, fails and is reported.
#include "agent/coll_service.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iterator>
#include <thread>

namespace fabcheck::agent {
namespace {

nlohmann::json Good() {
  return {{"first_rank", 0}, {"world", 1}, {"nprocs", 1}, {"coordinator", "127.0.0.1:18999"},
          {"token", "0123456789abcdef"}, {"ops", "all_reduce"}, {"sizes", "8:64"}, {"iters", 1}, {"warmup", 0},
          {"timeout_s", 60}};
}

TEST(CollService, EveryFieldIsCheckedWithItsName) {
  ASSERT_TRUE(ParseCollRankRequest(Good()).ok());
  struct Case {
    const char* field;
    nlohmann::json value;
  };
  for (const auto& c : std::vector<Case>{{"world", 0},
                                         {"world", "2"},
                                         {"nprocs", 65},
                                         {"first_rank", 1},  // ranks 1..1 of a world of 1
                                         {"coordinator", "no-port"},
                                         {"coordinator", 5},
                                         {"coordinator", "127.0.0.1:1023"},  // the agent may be root: no system port
                                         {"token", "short"},
                                         {"token", "has a space in it"},
                                         {"ops", "all_reduce; rm -rf /"},
                                         {"sizes", "lots"},
                                         {"iters", 0},
                                         {"timeout_s", -1},
                                         {"gdr_level", "OFF"},
                                         {"gdr_level", 0},
                                         {"ib_hca", "mlx5_0; reboot"},
                                         {"ib_hca", std::string(300, 'm')}}) {
    auto j = Good();
    j[c.field] = c.value;
    auto r = ParseCollRankRequest(j);
    ASSERT_FALSE(r.ok()) << c.field << " = " << c.value.dump();
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(c.field), std::string::npos) << r.status().message();
  }
  EXPECT_FALSE(ParseCollRankRequest(nlohmann::json::array()).ok());
}

TEST(CollService, ABaselineGroupsNcclSettingsReachTheRanksEnvironmentOnly) {
  // Without them NCCL chooses; with them the ranks get exactly NCCL's variables.
  auto plain = ParseCollRankRequest(Good());
  ASSERT_TRUE(plain.ok());
  for (const auto& [name, value] : CollRankEnv(*plain, {}, "/tmp/logs")) {
    EXPECT_NE(name, "NCCL_NET_GDR_LEVEL");
    EXPECT_NE(name, "NCCL_IB_HCA");
  }
  EXPECT_FALSE(ToJson(*plain).contains("gdr_level"));
  auto j = Good();
  j["gdr_level"] = "LOC";
  j["ib_hca"] = "=mlx5_0";
  auto r = ParseCollRankRequest(j);
  ASSERT_TRUE(r.ok()) << r.status().message();
  auto env = CollRankEnv(*r, {}, "/tmp/logs");
  EXPECT_NE(std::find(env.begin(), env.end(), std::pair<std::string, std::string>{"NCCL_NET_GDR_LEVEL", "LOC"}),
            env.end());
  EXPECT_NE(std::find(env.begin(), env.end(), std::pair<std::string, std::string>{"NCCL_IB_HCA", "=mlx5_0"}),
            env.end());
  // The request round-trips (the coordinator sends what the agent parses).
  auto again = ParseCollRankRequest(ToJson(*r));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->gdr_level, "LOC");
  EXPECT_EQ(again->ib_hca, "=mlx5_0");
  for (const auto& arg : CollRankArgv(*r)) EXPECT_EQ(arg.find("mlx5_0"), std::string::npos) << arg;
}

TEST(CollService, TheCommandLineIsBuiltFromCheckedValuesAndNeverHoldsTheToken) {
  auto r = ParseCollRankRequest(Good());
  ASSERT_TRUE(r.ok());
  auto argv = CollRankArgv(*r);
  ASSERT_GE(argv.size(), 3u);
  EXPECT_EQ(argv[1], "coll");
  EXPECT_NE(std::find(argv.begin(), argv.end(), "--json"), argv.end());
  EXPECT_NE(std::find(argv.begin(), argv.end(), "127.0.0.1:18999"), argv.end());
  EXPECT_EQ(std::find(argv.begin(), argv.end(), "0123456789abcdef"), argv.end());
}

// The board rank 0 serves used to bind 0.0.0.0 and speak plain HTTP even on a
// mutual-TLS agent: the job's token and results crossed the network in
// clear text. The ranks now get the agent's address and TLS files.
TEST(CollService, TheRanksServeTheBoardOnTheAgentsAddressWithItsTls) {
  const std::string out = ::testing::TempDir() + "/rank-saw.txt";
  const std::string rank = ::testing::TempDir() + "/print-rank.sh";
  {
    std::ofstream script(rank);
    script << "#!/bin/sh\necho \"bind=$FABCHECK_RENDEZVOUS_BIND args=$*\" > " << out << "\n";
  }
  ASSERT_EQ(::chmod(rank.c_str(), 0700), 0);
  CollAgentSide side{"10.0.0.5", net::TlsFiles{"/etc/fabcheck/tls.crt", "/etc/fabcheck/tls.key", "/etc/fabcheck/ca.crt"}};
  CollService service(rank, side);
  ASSERT_TRUE(service.Run(Good()).ok());
  std::ifstream in(out);
  std::string saw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(saw.find("bind=10.0.0.5 "), std::string::npos) << saw;
  EXPECT_NE(saw.find("--tls-cert /etc/fabcheck/tls.crt --tls-key /etc/fabcheck/tls.key --tls-ca /etc/fabcheck/ca.crt"),
            std::string::npos)
      << saw;
  // An agent on every address: the ranks need no bind (they listen where the agent does).
  auto r = ParseCollRankRequest(Good());
  ASSERT_TRUE(r.ok());
  for (const auto& [name, value] : CollRankEnv(*r, CollAgentSide{"0.0.0.0", std::nullopt}, "/tmp/x")) {
    EXPECT_NE(name, "FABCHECK_RENDEZVOUS_BIND");
  }
  auto plain = CollRankArgv(*r, CollAgentSide{"0.0.0.0", std::nullopt});
  EXPECT_EQ(std::find(plain.begin(), plain.end(), "--tls-cert"), plain.end());
}

TEST(CollService, TheRankRunsAndWhatItSaidComesBack) {
  // The real binary as rank 0 of 1. Without a GPU (CI) it stops at once
  // with exit 3 and says why on stderr; with one it measures and prints its
  // report. Either way the answer carries it.
  CollService service(FABCHECK_BINARY);
  auto answer = service.Run(Good());
  ASSERT_TRUE(answer.ok()) << answer.status().message();
  ASSERT_EQ((*answer)["exit_codes"].size(), 1u);
  EXPECT_FALSE((*answer)["timed_out"].get<bool>());
  if ((*answer)["exit_codes"][0] == 0) {
    ASSERT_TRUE(answer->contains("report")) << answer->dump();
    EXPECT_EQ((*answer)["report"]["schema"], "fabcheck.coll/v1");
  } else {
    ASSERT_EQ((*answer)["errors"].size(), 1u) << answer->dump();
    const std::string said = (*answer)["errors"][0].get<std::string>();
    EXPECT_NE(said.find("rank 0: exit 3: fabcheck coll: "), std::string::npos) << said;
    EXPECT_FALSE(answer->contains("report"));
  }
}

TEST(CollService, OneJobAtATime) {
  // A "rank" that takes two seconds, so the first job still runs when the
  // second request arrives.
  const std::string slow = ::testing::TempDir() + "/slow-rank.sh";
  {
    std::ofstream script(slow);
    script << "#!/bin/sh\nsleep 2\n";
  }
  ASSERT_EQ(::chmod(slow.c_str(), 0700), 0);
  CollService service(slow);
  std::thread first([&] { EXPECT_TRUE(service.Run(Good()).ok()); });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  auto second = service.Run(Good());
  first.join();
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(second.status().message().find("busy"), std::string::npos);
  EXPECT_TRUE(service.Run(Good()).ok());  // free again once the first is done
}

TEST(CollService, ABadRequestStartsNothing) {
  CollService service;
  auto j = Good();
  j["world"] = -3;
  auto answer = service.Run(j);
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace fabcheck::agent
