// End to end, as root: the topology-aware adaptive sweep of real agents over
// two leaves (bridges) joined by one spine path (tests/sweep/netns_leaves.sh):
//   the spine path shaped to 300 Mbit/s both ways  -> an uplink finding between the leaves, no host named
//   h6 shaped to 100 Mbit/s                          -> named as the node
// Every agent reports the same name ("gpu", as clones of one image do): the
// fabric file tells them apart by address and so must every output.
// Skipped, with the reason, when not root or namespaces cannot be made.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <fstream>
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
std::string Addr(int i) { return "10.78.0." + std::to_string(i + 1); }
std::string Script(const std::string& args) { return "S16_PREFIX=" + Prefix() + " " + kScript + " " + args; }

TEST(NetnsLeaves, AdaptiveSweepNamesTheSpinePathAndTheSlowHost) {
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
  // The spine path, both ways; bursts above the 9000-byte MTU so jumbo frames pass.
  tc("l0", "qdisc add dev up0 root tbf rate 300mbit burst 128kb latency 100ms");
  tc("l1", "qdisc add dev up1 root tbf rate 300mbit burst 128kb latency 100ms");
  // h6, both ways: its egress and its bridge port.
  tc("h6", "qdisc add dev eth0 root tbf rate 100mbit burst 128kb latency 100ms");
  tc("l1", "qdisc add dev ph6 root tbf rate 100mbit burst 128kb latency 100ms");
  std::ofstream fabric(dir + "/fabric.yaml");
  fabric << "schema: fabcheck.fabric/v1\nmembers:\n";
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
                         "adaptive", "--topology", dir + "/fabric.yaml", "--duration", "0.5s", "--lat-duration", "0.2s",
                         "--bw-size", "256K", "--token-file", dir + "/token", "--parallel", "1", "--quiet",
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
  EXPECT_TRUE(displays.count("gpu@10.78.0.7"));
  std::map<std::string, std::string> named;  // element -> kind
  for (const auto& e : r.verdict.elements) named[e.element] = e.kind;
  const std::string text = netns_test::ReadFile(dir + "/sweep.txt");
  EXPECT_EQ(named["gpu@10.78.0.7"], "node") << text;
  EXPECT_EQ(named["leaf-0~?~leaf-1"], "uplink") << text;
  EXPECT_EQ(named.size(), 2u) << text;  // no other host, and no NIC of the hosts behind the slow path
  EXPECT_NE(text.find("gpu@10.78.0.7"), std::string::npos);
  Sh("rm -rf " + dir);
}

}  // namespace
}  // namespace fabcheck::sweep
