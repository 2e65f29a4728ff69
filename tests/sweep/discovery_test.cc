#include "sweep/discovery.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <thread>

namespace fabcheck::sweep {
namespace {

net::EnvLookup Env(std::map<std::string, std::string> vars) {
  return [vars](const char* name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

net::LaunchRank Rank(int rank, int size) {
  net::LaunchRank r;
  r.rank = rank;
  r.size = size;
  return r;
}

TEST(DiscoveryTest, AgentListWithDefaultsAndIpv6) {
  auto l = ParseAgentList("n1,n2:9000,[fd00::1]:7,10.0.0.4", 18521);
  ASSERT_TRUE(l.ok()) << l.status().message();
  ASSERT_EQ(l->size(), 4u);
  EXPECT_EQ((*l)[0].ToString(), "n1:18521");
  EXPECT_EQ((*l)[1].port, 9000);
  EXPECT_EQ((*l)[2].host, "fd00::1");
  EXPECT_EQ((*l)[2].ToString(), "[fd00::1]:7");
  EXPECT_FALSE(ParseAgentList("n1,n1:18521", 18521).ok());
  auto bad = ParseAgentList("n1:http", 18521);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("n1:http"), std::string::npos);
  EXPECT_FALSE(ParseAgentList("fd00::1:7", 1).ok());
}

TEST(DiscoveryTest, AgentsFileNamesTheBadLine) {
  std::string path = ::testing::TempDir() + "/agents.txt";
  {
    std::ofstream f(path);
    f << "# rack 1\nnode1:18521\n\n  node2   # spare\n";
  }
  auto l = ReadAgentsFile(path, 18521);
  ASSERT_TRUE(l.ok()) << l.status().message();
  EXPECT_EQ(l->size(), 2u);
  {
    std::ofstream f(path);
    f << "node1\nnode2:99999\n";
  }
  auto bad = ReadAgentsFile(path, 18521);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find(":2:"), std::string::npos) << bad.status().message();
  EXPECT_FALSE(ReadAgentsFile("/nonexistent/agents", 1).ok());
  std::remove(path.c_str());
}

TEST(DiscoveryTest, ASweepNeedsTwoRanks) {
  auto one = DetectSweepRank(Env({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "1"}}), 0);
  ASSERT_FALSE(one.ok());
  EXPECT_NE(one.status().message().find("at least two"), std::string::npos) << one.status().message();
  auto two = DetectSweepRank(Env({{"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "2"}}), 0);
  ASSERT_TRUE(two.ok() && two->has_value());
  EXPECT_EQ((*two)->rank, 1);
  auto none = DetectSweepRank(Env({}), 0);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

TEST(DiscoveryTest, AgentRegistryOnLoopback) {
  auto r = AgentRegistry::Start("127.0.0.1", 0, 3, std::string("s3cret"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  control::HostPort at{"127.0.0.1", (*r)->port()};
  (*r)->AddSelf(0, {"127.0.0.1", 1000});
  std::atomic<bool> stop{false};
  // A wrong token is refused at once, not retried until the timeout.
  Status wrong = JoinRendezvous(at, Rank(1, 3), 1001, std::string("nope"), std::chrono::seconds(5), &stop);
  EXPECT_EQ(wrong.code(), StatusCode::kInvalidArgument) << wrong.message();
  EXPECT_TRUE(JoinRendezvous(at, Rank(1, 3), 1001, std::string("s3cret"), std::chrono::seconds(5), &stop).ok());
  auto partial = (*r)->WaitForAll(std::chrono::milliseconds(300), &stop);
  ASSERT_FALSE(partial.ok());
  EXPECT_NE(partial.status().message().find("missing ranks 2"), std::string::npos) << partial.status().message();
  std::thread late([&] {
    EXPECT_TRUE(JoinRendezvous(at, Rank(2, 3), 1002, std::string("s3cret"), std::chrono::seconds(5), &stop).ok());
  });
  auto all = (*r)->WaitForAll(std::chrono::seconds(5), &stop);
  late.join();
  ASSERT_TRUE(all.ok()) << all.status().message();
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[2].port, 1002);
  (*r)->SetState("done");
  EXPECT_TRUE(WaitForFinish(at, std::string("s3cret"), std::chrono::seconds(5), &stop).ok());
}

TEST(DiscoveryTest, JoinGivesUpAtItsDeadline) {
  std::atomic<bool> stop{false};
  // Port 1 on loopback: nobody listens; the join must end at its timeout.
  auto t0 = std::chrono::steady_clock::now();
  Status s = JoinRendezvous({"127.0.0.1", 1}, Rank(1, 2), 5, std::nullopt, std::chrono::milliseconds(800), &stop);
  EXPECT_EQ(s.code(), StatusCode::kDeadlineExceeded);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
}

}  // namespace
}  // namespace fabcheck::sweep
