// A whole sweep between in-process agents over loopback (perf server, MTU
// echo and control API each), one of which dies mid-sweep. No root needed.
#include <gtest/gtest.h>

#include "agent/local_agent.h"
#include "sweep/runner.h"

namespace fabcheck::sweep {
namespace {

TEST(LoopbackSweepTest, ThreeAgentsOneDiesMidSweep) {
  std::vector<std::unique_ptr<agent::LocalAgent>> agents;
  std::vector<control::HostPort> endpoints;
  for (int i = 0; i < 3; ++i) {
    agent::AgentConfig c;
    c.root = sys::SysRoot::Live();
    c.bind = "127.0.0.1";
    c.control_port = 0;
    c.perf_port = 0;
    c.token = "tok";
    c.name = "lo" + std::to_string(i);
    auto a = agent::LocalAgent::Start(c);
    ASSERT_TRUE(a.ok()) << a.status().message();
    endpoints.push_back({"127.0.0.1", (*a)->control_port()});
    agents.push_back(std::move(a).value());
  }
  SweepOptions o;
  o.token = "tok";
  o.test.bw_duration_s = 0.1;
  o.test.lat_duration_s = 0.05;
  o.test.bw_size = 64 << 10;
  int rounds_seen = 0;
  o.on_progress = [&](const Progress& p) {
    rounds_seen = p.round;
    EXPECT_EQ(p.rounds, 3);
  };
  // Round 1 is {1, 2} (0 sits out); after it, agent 2 dies: its pair with 0
  // in a later round is skipped and it is reported unreachable.
  o.on_round = [&](int round) {
    if (round == 1) agents[2].reset();
  };
  auto r = RunSweep(endpoints, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(rounds_seen, 3);
  EXPECT_EQ(r->rounds_completed, 3);
  EXPECT_FALSE(r->interrupted);
  EXPECT_TRUE(r->members[0].reachable);
  EXPECT_TRUE(r->members[1].reachable);
  EXPECT_FALSE(r->members[2].reachable) << "agent 2 was stopped";
  EXPECT_EQ(r->members[0].name, "lo0");
  const auto& m = r->matrices.at(0);
  EXPECT_TRUE(m.bw_gbps.has(0, 1));
  EXPECT_TRUE(m.bw_gbps.has(1, 0));
  EXPECT_TRUE(m.bw_gbps.has(1, 2)) << "round 1 ran before the agent died";
  EXPECT_GT(m.bw_gbps.at(0, 1), 0);
  EXPECT_TRUE(m.lat_median_us.has(0, 1));
  EXPECT_EQ(m.path_mtu.at(0, 1), 65535);
  EXPECT_EQ(r->transport, "tcp");
  bool unreachable = false;
  for (const auto& c : r->verdict.culprits) unreachable |= c.kind == model::CulpritKind::kUnreachable;
  EXPECT_TRUE(unreachable) << r->verdict.summary;
}

TEST(LoopbackSweepTest, StopFlagGivesAPartialResult) {
  std::vector<std::unique_ptr<agent::LocalAgent>> agents;
  std::vector<control::HostPort> endpoints;
  for (int i = 0; i < 4; ++i) {
    agent::AgentConfig c;
    c.root = sys::SysRoot::Live();
    c.bind = "127.0.0.1";
    c.control_port = 0;
    auto a = agent::LocalAgent::Start(c);
    ASSERT_TRUE(a.ok()) << a.status().message();
    endpoints.push_back({"127.0.0.1", (*a)->control_port()});
    agents.push_back(std::move(a).value());
  }
  std::atomic<bool> stop{false};
  SweepOptions o;
  o.test.bandwidth = false;
  o.test.latency = false;
  o.stop = &stop;
  o.on_round = [&](int round) {
    if (round == 1) stop = true;  // as Ctrl-C after the first round
  };
  auto r = RunSweep(endpoints, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->interrupted);
  EXPECT_EQ(r->rounds_completed, 1);
  EXPECT_EQ(r->rounds_planned, 3);
  EXPECT_EQ(r->matrices[0].path_mtu.measured(), 4u);  // two pairs, both directions
}

TEST(LoopbackSweepTest, TooFewAgentsIsAnError) {
  auto r = RunSweep({{"127.0.0.1", 1}, {"127.0.0.1", 2}}, SweepOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("only 0 of 2 agents answer"), std::string::npos) << r.status().message();
}

}  // namespace
}  // namespace fabcheck::sweep
