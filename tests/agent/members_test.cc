#include "agent/members.h"

#include <gtest/gtest.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <thread>

#include "../fixtures/hostile_http.h"
#include "../fixtures/in_child.h"
#include "../net/test_certs.h"
#include "control/client.h"

namespace fabcheck::agent {
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

TEST(FindMembersTest, OneSourceOfMembers) {
  MemberOptions o;
  o.command = "sweep";
  o.agents = "a,b:7";
  o.agents_file = "/etc/fabcheck/agents";
  auto both = FindMembers(o, Env({}));
  EXPECT_EQ(both.status().code(), StatusCode::kInvalidArgument);
  o.agents_file.clear();
  auto listed = FindMembers(o, Env({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "4"}}));
  ASSERT_TRUE(listed.ok()) << listed.status().message();
  ASSERT_EQ(listed->agents.size(), 2u);  // a list wins over the launcher's variables
  EXPECT_EQ(listed->agents[0].port, control::kDefaultControlPort);
  EXPECT_EQ(listed->agents[1].port, 7);
  EXPECT_EQ(listed->own_agent, nullptr);
  o.agents = "a,a";
  EXPECT_EQ(FindMembers(o, Env({})).status().code(), StatusCode::kInvalidArgument);
  o.agents.clear();
  o.agents_file = "/nonexistent/agents";
  auto missing = FindMembers(o, Env({}));
  ASSERT_FALSE(missing.ok());
  // An input that cannot be read: the command could not run (exit 3), not usage (64).
  EXPECT_NE(missing.status().code(), StatusCode::kInvalidArgument) << missing.status().ToString();
  EXPECT_NE(missing.status().message().find("/nonexistent/agents"), std::string::npos) << missing.status().ToString();
}

TEST(FindMembersTest, WhatAnSpmdLaunchMustSay) {
  MemberOptions o;
  o.command = "sweep";
  o.min_ranks = 2;
  auto none = FindMembers(o, Env({}));
  ASSERT_EQ(none.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(none.status().message().find("no members"), std::string::npos) << none.status().message();
  auto one = FindMembers(o, Env({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "1"}}));
  ASSERT_EQ(one.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(one.status().message().find("at least 2"), std::string::npos) << one.status().message();
  auto no_coordinator = FindMembers(o, Env({{"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "2"}}));
  ASSERT_EQ(no_coordinator.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(no_coordinator.status().message().find("--coordinator"), std::string::npos);
  o.coordinator = "head:99999";
  auto bad = FindMembers(o, Env({{"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "2"}}));
  ASSERT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("--coordinator"), std::string::npos) << bad.status().message();
  auto garbage = FindMembers(o, Env({{"SLURM_PROCID", "x"}, {"SLURM_NTASKS", "2"}}));
  EXPECT_EQ(garbage.status().code(), StatusCode::kInvalidArgument);
}

TEST(DiscoveryTest, AgentRegistryOnLoopback) {
  auto r = AgentRegistry::Start("127.0.0.1", 0, 3, std::string("s3cret"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  RendezvousClient at{{"127.0.0.1", (*r)->port()}, std::string("s3cret")};
  RendezvousClient wrong_token{at.coordinator, std::string("nope")};
  (*r)->AddSelf(0, {"127.0.0.1", 1000});
  std::atomic<bool> stop{false};
  // A wrong token is refused at once (401: Unauthenticated, as every client maps it), not retried until the timeout.
  Status wrong = JoinRendezvous(wrong_token, Rank(1, 3), 1001, "", std::chrono::seconds(5), &stop);
  EXPECT_EQ(wrong.code(), StatusCode::kUnauthenticated) << wrong.message();
  EXPECT_TRUE(JoinRendezvous(at, Rank(1, 3), 1001, "", std::chrono::seconds(5), &stop).ok());
  auto partial = (*r)->WaitForAll(std::chrono::milliseconds(300), &stop);
  ASSERT_FALSE(partial.ok());
  EXPECT_NE(partial.status().message().find("missing ranks 2"), std::string::npos) << partial.status().message();
  std::thread late([&] {
    EXPECT_TRUE(JoinRendezvous(at, Rank(2, 3), 1002, "", std::chrono::seconds(5), &stop).ok());
  });
  auto all = (*r)->WaitForAll(std::chrono::seconds(5), &stop);
  late.join();
  ASSERT_TRUE(all.ok()) << all.status().message();
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[2].port, 1002);
  (*r)->SetState("done");
  EXPECT_TRUE(WaitForFinish(at, std::chrono::seconds(5), &stop).ok());
}

TEST(DiscoveryTest, JoinGivesUpAtItsDeadline) {
  std::atomic<bool> stop{false};
  // Port 1 on loopback: nobody listens; the join must end at its timeout.
  auto t0 = std::chrono::steady_clock::now();
  Status s = JoinRendezvous({{"127.0.0.1", 1}}, Rank(1, 2), 5, "", std::chrono::milliseconds(800), &stop);
  EXPECT_EQ(s.code(), StatusCode::kDeadlineExceeded);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
}

int FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    port = ntohs(a.sin_port);
  }
  ::close(fd);
  return port;
}

net::TlsFiles Files(const net::testing::Certs& c, const std::string& cert) {
  return {c.Path(cert + ".crt"), c.Path(cert + ".key"), c.Path("ca.crt")};
}

SpmdOptions RankOptions(int rank, int port, std::optional<net::TlsFiles> tls) {
  SpmdOptions o;
  o.me = Rank(rank, 2);
  o.coordinator = {"127.0.0.1", port};
  o.agent.bind = "127.0.0.1";
  o.agent.control_port = 0;
  o.agent.perf_port = 0;
  o.agent.root = sys::SysRoot::Live();
  o.token = std::string("s3cret-s3cret");
  o.tls = std::move(tls);
  o.rendezvous_timeout = std::chrono::seconds(10);
  return o;
}

TEST(DiscoveryTest, SpmdRanksMeetOverMutualTls) {
  const auto& certs = net::testing::Certs::Get();
  if (!certs.ok) GTEST_SKIP() << certs.skip_reason;
  const int port = FreePort();
  ASSERT_GT(port, 0);
  std::atomic<bool> stop{false};
  Status rank1_status = InternalError("rank 1 did not run");
  std::thread rank1([&] {
    auto o = RankOptions(1, port, Files(certs, "server"));
    o.stop = &stop;
    auto met = MeetSpmd(std::move(o));
    rank1_status = met.status();
    if (met.ok()) {
      EXPECT_TRUE(met->agents.empty());  // only rank 0 learns the members
      EXPECT_EQ(met->registry, nullptr);
    }
  });
  auto o = RankOptions(0, port, Files(certs, "server"));
  o.stop = &stop;
  auto met = MeetSpmd(std::move(o));
  if (!met.ok()) {
    stop = true;
    rank1.join();
    FAIL() << met.status().message() << "; rank 1: " << rank1_status.message();
  }
  ASSERT_EQ(met->agents.size(), 2u);
  // Rank 1 came from 127.0.0.1 and said its certificate names localhost.
  EXPECT_EQ(met->agents[1].host, "127.0.0.1");
  EXPECT_EQ(met->agents[1].tls_name, "localhost");
  // Its agent serves HTTPS only, and answers a client of the job's CA that checks that name.
  control::ClientOptions client;
  client.token = std::string("s3cret-s3cret");
  client.tls = Files(certs, "client");
  auto info = control::AgentClient(met->agents[1], client).Info();
  EXPECT_TRUE(info.ok()) << info.status().message();
  control::ClientOptions plain;
  plain.token = client.token;
  EXPECT_FALSE(control::AgentClient(met->agents[1], plain).Info().ok());
  met->registry->SetState("done");
  rank1.join();
  EXPECT_TRUE(rank1_status.ok()) << rank1_status.message();
}

// Two ranks as srun starts them (SLURM_PROCID / SLURM_NTASKS), each with its
// own agent, meeting at rank 0 the way `sweep` and `ladder` do.
TEST(FindMembersTest, SrunRanksMeetAtRankZero) {
  const int port = FreePort();
  ASSERT_GT(port, 0);
  std::atomic<bool> stop{false};
  auto options = [&] {
    MemberOptions o;
    o.command = "ladder";
    o.coordinator = "127.0.0.1:" + std::to_string(port);
    o.token = std::string("s3cret-s3cret");
    o.rendezvous_timeout = std::chrono::seconds(10);
    o.stop = &stop;
    o.own_agent = []() -> Result<AgentConfig> {
      AgentConfig c;
      c.bind = "127.0.0.1";
      c.control_port = 0;
      c.root = sys::SysRoot::Live();
      return c;
    };
    return o;
  };
  Result<Members> rank1 = InternalError("rank 1 did not run");
  std::thread other([&] { rank1 = FindMembers(options(), Env({{"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "2"}})); });
  auto rank0 = FindMembers(options(), Env({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}}));
  if (!rank0.ok()) {
    stop = true;
    other.join();
    FAIL() << rank0.status().message();
  }
  EXPECT_FALSE(rank0->rank_done);
  ASSERT_EQ(rank0->agents.size(), 2u);
  ASSERT_NE(rank0->own_agent, nullptr);
  EXPECT_EQ(rank0->agents[0].port, rank0->own_agent->control_port());
  ASSERT_NE(rank0->registry, nullptr);
  rank0->registry->SetState("done");
  other.join();
  ASSERT_TRUE(rank1.ok()) << rank1.status().message();
  EXPECT_TRUE(rank1->rank_done);
  EXPECT_TRUE(rank1->agents.empty());
}

TEST(DiscoveryTest, SpmdTlsRefusesRanksOutsideTheJob) {
  const auto& certs = net::testing::Certs::Get();
  if (!certs.ok) GTEST_SKIP() << certs.skip_reason;
  // Half the files: TLS among the ranks is mutual or nothing.
  net::TlsFiles half{certs.Path("server.crt"), certs.Path("server.key"), ""};
  Status s = CheckSpmdTls(half);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("--tls-ca"), std::string::npos) << s.message();

  auto tls = net::TlsContext::ForServer(Files(certs, "server"));
  ASSERT_TRUE(tls.ok()) << tls.status().message();
  auto r = AgentRegistry::Start("127.0.0.1", 0, 2, std::string("s3cret"), *tls);
  ASSERT_TRUE(r.ok()) << r.status().message();
  std::atomic<bool> stop{false};
  const control::HostPort at{"127.0.0.1", (*r)->port()};
  // A plain rank is told the registry speaks HTTPS, at once.
  auto t0 = std::chrono::steady_clock::now();
  Status plain = JoinRendezvous({at, std::string("s3cret")}, Rank(1, 2), 1001, "", std::chrono::seconds(8), &stop);
  EXPECT_EQ(plain.code(), StatusCode::kInvalidArgument) << plain.message();
  EXPECT_NE(plain.message().find("HTTPS"), std::string::npos) << plain.message();
  // A rank with a certificate of another CA is cut off, and told why it may be.
  net::TlsFiles stranger{certs.Path("stranger.crt"), certs.Path("stranger.key"), certs.Path("ca.crt")};
  Status outsider = JoinRendezvous({at, std::string("s3cret"), stranger}, Rank(1, 2), 1001, "localhost",
                                   std::chrono::seconds(2), &stop);
  EXPECT_FALSE(outsider.ok());
  EXPECT_NE(outsider.message().find("accept this rank's certificate"), std::string::npos) << outsider.message();
  // A tls_name that is not a name is a bad join.
  Status odd = JoinRendezvous({at, std::string("s3cret"), Files(certs, "client")}, Rank(1, 2), 1001, "a b/c",
                              std::chrono::seconds(8), &stop);
  EXPECT_EQ(odd.code(), StatusCode::kInvalidArgument) << odd.message();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(8));
  EXPECT_TRUE(JoinRendezvous({at, std::string("s3cret"), Files(certs, "client")}, Rank(1, 2), 1001, "localhost",
                             std::chrono::seconds(8), &stop)
                  .ok());
}

// An impostor at the coordinator's address that answers a rank with an
// endless body: the rank used to read it until bad_alloc aborted it (the
// join and the state poll read whole bodies); now the answer has a cap.
TEST(DiscoveryTest, AnEndlessRendezvousAnswerEndsTheJoinNotTheRank) {
  for (auto shape : {test_support::EndlessHttpServer::Shape::kFlood, test_support::EndlessHttpServer::Shape::kHugeLength}) {
    test_support::EndlessHttpServer impostor(shape);
    auto outcome = test_support::RunInChild(1ll << 30, [&] {
      RendezvousClient at{{"127.0.0.1", impostor.port()}, std::string("s3cret")};
      std::atomic<bool> stop{false};
      auto start = std::chrono::steady_clock::now();
      Status joined = JoinRendezvous(at, Rank(1, 3), 1001, "", std::chrono::seconds(20), &stop);
      if (joined.ok()) return 3;
      if (joined.code() != StatusCode::kResourceExhausted) return 4;
      if (std::chrono::steady_clock::now() - start > std::chrono::seconds(15)) return 5;
      // The state poll of a rank that joined reads through the same cap.
      Status waited = WaitForFinish(at, std::chrono::seconds(8), &stop);
      return waited.code() == StatusCode::kDeadlineExceeded || waited.ok() ? 0 : 6;
    });
    EXPECT_EQ(outcome.code, 0) << outcome.Describe() << " (3: joined; 4: other error; 5: too slow; 6: state poll)";
  }
}

}  // namespace
}  // namespace fabcheck::agent
