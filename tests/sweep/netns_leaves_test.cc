// End to end, as root: the topology-aware adaptive sweep of real agents over
// a routed two-tier Clos in namespaces (tests/sweep/netns_leaves.sh): two
// leaves of four hosts, two spines, ECMP on the 5-tuple at the leaves.
//   the uplink leaf-0 ~ spine-1 shaped to 25 Mbit/s both ways -> only the flows
//       ECMP hashes through spine-1 crawl; the agents trace each flow's
//       routers on its own 5-tuple, so the sweep names the path through
//       spine-1 (with two leaves its two uplinks cannot be told apart), not
//       the hosts and not spine-0
//   h6 shaped to 100 Mbit/s                    -> named as the node
// Every host sends at most 500 Mbit/s (tbf), so the figures do not depend on
// how busy the machine's CPUs are. Every agent reports the same name ("gpu",
// as clones of one image do): the fabric file tells them apart by address and
// so must every output. Skipped, with the reason, when not root or namespaces
// cannot be made.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <fstream>
#include <iostream>
#include <map>
#include <set>

#include "fabcheck/model/sweep.h"
#include "netns_helpers.h"

namespace fabcheck::sweep {
namespace {

using netns_test::Sh;
using netns_test::Spawn;

const std::string kScript = std::string(FABCHECK_SOURCE_DIR) + "/tests/sweep/netns_leaves.sh";
const std::string& Prefix() {
  static const std::string kPrefix = "s16" + std::to_string(::getpid()) + "-";
  return kPrefix;
}
std::string Ns(const std::string& name) { return Prefix() + name; }
std::string Addr(int i) { return "10.78." + std::to_string(i / 4 + 1) + "." + std::to_string(i + 1); }
std::string Script(const std::string& args) { return "S16_PREFIX=" + Prefix() + " " + kScript + " " + args; }

TEST(NetnsLeaves, AdaptiveSweepNamesTheShapedUplinkByItsFlowsAndTheSlowHost) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to create network namespaces";
  if (Sh("command -v ip && command -v tc") != 0) GTEST_SKIP() << "needs iproute2 (ip, tc)";
  if (Sh(Script("up")) != 0) {
    Sh(Script("down"));
    GTEST_SKIP() << "cannot create network namespaces here (ip netns add failed)";
  }
  const std::string dir = ::testing::TempDir() + "/" + Prefix() + "leaves";
  Sh("mkdir -p " + dir);
  std::ofstream(dir + "/token") << "s16-e2e-token\n";
  ::chmod((dir + "/token").c_str(), 0600);
  std::string errors;
  auto tc = [&](const std::string& ns, const std::string& args) {
    if (Sh("ip netns exec " + Ns(ns) + " tc " + args) != 0) errors += "failed: tc " + args + "\n";
  };
  // Every host's egress; bursts above the 9000-byte MTU so jumbo frames pass.
  for (int i = 0; i < 8; ++i) {
    const char* rate = i == 6 ? "100mbit" : "500mbit";
    tc("h" + std::to_string(i), std::string("qdisc add dev eth0 root tbf rate ") + rate + " burst 256kb latency 50ms");
  }
  tc("l1", "qdisc add dev ph6 root tbf rate 100mbit burst 256kb latency 50ms");  // into h6
  // The uplink leaf-0 ~ spine-1, both ways.
  tc("l0", "qdisc add dev s1 root tbf rate 25mbit burst 64kb latency 50ms");
  tc("s1", "qdisc add dev l0 root tbf rate 25mbit burst 64kb latency 50ms");
  std::ofstream fabric(dir + "/fabric.yaml");
  fabric << "schema: fabcheck.fabric/v1\n"
         << "spines:\n  - [{name: spine-0, addresses: [10.78.10.2, 10.78.20.2]},\n"
         << "     {name: spine-1, addresses: [10.78.11.2, 10.78.21.2]}]\nmembers:\n";
  for (int i = 0; i < 8; ++i) fabric << "  - {name: gpu, address: " << Addr(i) << ", leaf: leaf-" << i / 4 << "}\n";
  fabric.close();
  std::vector<pid_t> agents;
  for (int i = 0; i < 8; ++i) {
    agents.push_back(Spawn({"ip", "netns", "exec", Ns("h" + std::to_string(i)), FABCHECK_BINARY, "agent", "--listen",
                            Addr(i) + ":18521", "--name", "gpu", "--data-iface", "eth0", "--token-file",
                            dir + "/token"},
                           dir + "/agent" + std::to_string(i) + ".log"));
  }
  for (int i = 0; i < 8; ++i) {
    if (!netns_test::WaitForText(dir + "/agent" + std::to_string(i) + ".log", "serving", std::chrono::seconds(20))) {
      errors += "agent h" + std::to_string(i) + " did not start\n";
    }
  }
  std::string list;
  for (int i = 0; i < 8; ++i) list += (i ? "," : "") + Addr(i);
  int exit_code = -1;
  if (errors.empty()) {
    pid_t sweep = Spawn({"ip", "netns", "exec", Ns("c"), FABCHECK_BINARY, "sweep", "--agents", list, "--strategy",
                         "adaptive", "--topology", dir + "/fabric.yaml", "--duration", "0.5s", "--lat-duration", "0.1s",
                         "--bw-size", "64K", "--token-file", dir + "/token", "--parallel", "2", "--quiet",
                         "--output", dir + "/sweep.json"},
                        dir + "/sweep.txt");
    exit_code = netns_test::WaitExit(sweep, std::chrono::seconds(240));
  }
  for (pid_t pid : agents) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
  Sh(Script("down"));
  ASSERT_TRUE(errors.empty()) << errors;
  ASSERT_EQ(exit_code, 2) << netns_test::ReadFile(dir + "/sweep.txt");
  std::ifstream in(dir + "/sweep.json");
  auto j = nlohmann::json::parse(in, nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  auto r = j.get<model::SweepResult>();
  std::set<std::string> displays;
  for (const auto& m : r.members) displays.insert(m.display);
  EXPECT_EQ(displays.size(), 8u);
  EXPECT_TRUE(displays.count("gpu@10.78.2.7"));
  // The agents reported each flow's figure and the spine its traced path crossed.
  std::set<int> spines_seen;
  size_t traced = 0;
  for (const auto& p : r.pairs) {
    for (int16_t s : p.flow_spine) {
      if (s >= 0) spines_seen.insert(s), ++traced;
    }
  }
  EXPECT_EQ(spines_seen, (std::set<int>{0, 1}));
  EXPECT_GT(traced, 20u);
  std::map<std::string, std::string> named;  // element -> kind
  for (const auto& e : r.verdict.elements) named[e.element] = e.kind;
  const std::string text = netns_test::ReadFile(dir + "/sweep.txt");
  EXPECT_EQ(named["gpu@10.78.2.7"], "node") << text;
  EXPECT_EQ(named["leaf-0~spine-1~leaf-1"], "uplink") << text;
  EXPECT_EQ(named.size(), 2u) << text;  // no other host, no NIC behind the slow uplink, not spine-0
  EXPECT_NE(text.find("gpu@10.78.2.7"), std::string::npos);
  if (::testing::Test::HasFailure()) {
    std::cerr << "netns_leaves: the sweep's output is kept in " << dir << "\n";
  } else {
    Sh("rm -rf " + dir);
  }
}

}  // namespace
}  // namespace fabcheck::sweep
