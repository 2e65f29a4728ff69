// End to end, as root: seven network-namespace hosts behind two bridges
// (control on eth0, data plane on eth1), an agent in each, a coordinator in
// its own namespace running the real `fabcheck ladder --rungs L1-L3
// --transport tcp`, and one planted fault per rung:
//   h1  its agent reads a capture whose mlx5_0 trained at PCIe Gen3 -> L1L2.node (pcie.downgraded)
//   h2  data-plane MTU 1500 among 9000                                -> L1L2.cluster (netdev_mtu outlier)
//   h3  its switch port on the data bridge at MTU 1500 (host says 9000) -> L2.path (MTU hole)
//   h4  data plane shaped to 100 Mbit/s both ways                     -> L3 (slow member)
//   h5  agent killed when L1L2.cluster starts                        -> unreachable, the rest completes
//   h0, h6 healthy: they reach the top (TCP: "RDMA not used", never an RDMA pass).
// Run 1 (no --keep-going) stops at L1L2.node naming h1; run 2 (--keep-going,
// --topology: h0 and h4 in rack r1, the others in r2) drops each faulty
// member at its rung and measures L3's baseline groups on h0 and h6. Skipped, with the reason, when not
// root or when namespaces cannot be made. Namespaces: fcsw<pid>-*, removed in
// the teardown (and by the next run's setup if this process dies first).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <thread>

#include "../sweep/netns_helpers.h"
#include "bundle/bundle.h"

namespace fabcheck::ladder {
namespace {

using netns_test::ReadFile;
using netns_test::Sh;
using netns_test::Spawn;

constexpr int kHosts = 7;
const std::string kScript = std::string(FABCHECK_SOURCE_DIR) + "/tests/sweep/netns_cluster.sh";

// FABCHECK_NETNS_PREFIX names the namespaces (default fcsw): runs on one
// machine stay apart by owner as well as by process.
const std::string& Prefix() {
  static const std::string kPrefix = [] {
    const char* owner = std::getenv("FABCHECK_NETNS_PREFIX");
    return std::string(owner && *owner ? owner : "fcsw") + std::to_string(::getpid()) + "-";
  }();
  return kPrefix;
}
std::string Ns(const std::string& name) { return Prefix() + name; }
std::string Ctl(int i) { return "10.77.0." + std::to_string(i + 1); }
std::string Data(int i) { return "10.78.0." + std::to_string(i + 1); }

struct LadderRun {
  int exit = -1;
  std::string stdout_text, stderr_text;
  std::optional<model::LadderManifest> manifest;
  std::vector<std::string> files;
  std::string error;

  const model::RungResult* Rung(const std::string& id) const {
    if (!manifest) return nullptr;
    for (const auto& r : manifest->rungs) {
      if (r.id == id) return &r;
    }
    return nullptr;
  }
  const model::LadderMember* Member(const std::string& id) const {
    if (!manifest) return nullptr;
    for (const auto& m : manifest->members) {
      if (m.id == id) return &m;
    }
    return nullptr;
  }
  std::string Describe() const {
    return "exit " + std::to_string(exit) + "\nstdout:\n" + stdout_text + "\nstderr:\n" + stderr_text + error;
  }
};

class NetnsLadderTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (::geteuid() != 0) {
      skip_ = "needs root to create network namespaces";
      return;
    }
    if (Sh("command -v ip && command -v tc && command -v tar") != 0) {
      skip_ = "needs iproute2 (ip, tc) and tar";
      return;
    }
    if (Sh(Script("up " + std::to_string(kHosts))) != 0) {
      skip_ = "cannot create network namespaces here (ip netns add failed)";
      Sh(Script("down"));
      return;
    }
    dir_ = ::testing::TempDir() + "/" + Prefix() + "ladder";
    Sh("rm -rf " + dir_ + " && mkdir -p " + dir_);
    std::ofstream(dir_ + "/token") << "fcld-e2e-token\n";
    ::chmod((dir_ + "/token").c_str(), 0600);  // the token policy refuses files others can read
    BuildDataPlane();
    PlantFaults();
    StartAgents();
    if (!error_.empty()) return;
    run1_ = RunLadder("run1", {}, /*kill_at=*/"");
    std::ofstream(dir_ + "/fabric.yaml") << "schema: fabcheck.fabric/v1\nrails: 1\nmembers:\n"
                                            "  - {name: h0, leaf: leaf-1, rack: r1}\n"
                                            "  - {name: h4, leaf: leaf-1, rack: r1}\n"
                                            "  - {name: h1, leaf: leaf-2, rack: r2}\n"
                                            "  - {name: h2, leaf: leaf-2, rack: r2}\n"
                                            "  - {name: h3, leaf: leaf-2, rack: r2}\n"
                                            "  - {name: h5, leaf: leaf-2, rack: r2}\n"
                                            "  - {name: h6, leaf: leaf-2, rack: r2}\n";
    run2_ = RunLadder("run2", {"--keep-going", "--topology", dir_ + "/fabric.yaml"}, /*kill_at=*/"L1L2.cluster]");
  }

  static void TearDownTestSuite() {
    for (pid_t pid : agents_) {
      if (pid > 0) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
      }
    }
    agents_.clear();
    Sh(Script("down"));
    const auto* suite = ::testing::UnitTest::GetInstance()->current_test_suite();
    if (!dir_.empty() && suite && suite->Passed()) Sh("rm -rf " + dir_);
  }

  void SetUp() override {
    if (!skip_.empty()) GTEST_SKIP() << skip_;
    ASSERT_TRUE(error_.empty()) << error_;
  }

  static std::string Script(const std::string& args) { return "FCSW_PREFIX=" + Prefix() + " " + kScript + " " + args; }

  static void Must(const std::string& cmd) {
    if (Sh(cmd) != 0) error_ += "failed: " + cmd + "\n";
  }

  // A second bridge for the data plane, eth1 in every host at 10.78.0.x.
  static void BuildDataPlane() {
    Must("ip -n " + Ns("sw") + " link add br1 type bridge");
    Must("ip -n " + Ns("sw") + " link set br1 mtu 9000 up");
    for (int i = 0; i < kHosts; ++i) {
      const std::string h = Ns("h" + std::to_string(i)), q = "q" + std::to_string(i);
      Must("ip link add eth1 netns " + h + " mtu 9000 type veth peer name " + q + " netns " + Ns("sw") + " mtu 9000");
      Must("ip -n " + h + " addr add " + Data(i) + "/24 dev eth1");
      Must("ip -n " + h + " link set eth1 up");
      Must("ip -n " + Ns("sw") + " link set " + q + " master br1 up");
    }
  }

  static void Tc(const std::string& ns, const std::string& args) { Must("ip netns exec " + ns + " tc " + args); }

  static void PlantFaults() {
    // h1: a capture of a DGX node with mlx5_0's link trained at 8 GT/s (Gen3) instead of 32.
    const std::string root = dir_ + "/h1-sysroot";
    Must("mkdir -p " + root + " && tar xzf " + std::string(FABCHECK_TESTDATA_DIR) +
         "/captures/dgx-h100-example.tar.gz -C " + root);
    std::ofstream(root + "/sys/devices/pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:00.0/0000:18:00.0/current_link_speed")
        << "8.0 GT/s PCIe\n";
    // h2: its data interface at 1500 while everyone says 9000.
    Must("ip -n " + Ns("h2") + " link set eth1 mtu 1500");
    // h3: the switch port of its data link at 1500; the host believes 9000.
    Must("ip -n " + Ns("sw") + " link set q3 mtu 1500");
    // h4: 100 Mbit/s both ways on the data plane.
    Tc(Ns("h4"), "qdisc add dev eth1 root tbf rate 100mbit burst 128kb latency 100ms");
    Tc(Ns("sw"), "qdisc add dev q4 root handle 1: htb default 10");
    Tc(Ns("sw"), "class add dev q4 parent 1: classid 1:10 htb rate 100mbit ceil 100mbit burst 128kb");
  }

  static void StartAgents() {
    for (int i = 0; i < kHosts; ++i) {
      std::vector<std::string> args = {"ip",       "netns",      "exec",        Ns("h" + std::to_string(i)),
                                       FABCHECK_BINARY, "agent",  "--listen",    Ctl(i) + ":18521",
                                       "--name",   "h" + std::to_string(i), "--data-iface", "eth1",
                                       "--token-file", dir_ + "/token"};
      if (i == 1) {
        args.push_back("--sysroot");
        args.push_back(dir_ + "/h1-sysroot");
      }
      agents_.push_back(Spawn(args, dir_ + "/agent" + std::to_string(i) + ".log"));
    }
    for (int i = 0; i < kHosts; ++i) {
      if (!netns_test::WaitForText(dir_ + "/agent" + std::to_string(i) + ".log", "serving", std::chrono::seconds(20))) {
        error_ += "agent h" + std::to_string(i) + " did not start (see " + dir_ + ")\n";
      }
    }
  }

  // Runs the ladder from the coordinator namespace; kills h5's agent when a
  // stderr line contains `kill_at`.
  static LadderRun RunLadder(const std::string& name, const std::vector<std::string>& extra, const std::string& kill_at) {
    LadderRun out;
    std::string agents;
    for (int i = 0; i < kHosts; ++i) agents += (i ? "," : "") + Ctl(i);
    const std::string bundle = dir_ + "/" + name;
    std::vector<std::string> args = {"ip", "netns", "exec", Ns("c"), FABCHECK_BINARY, "ladder", "--agents", agents,
                                     "--rungs", "L1-L3", "--transport", "tcp", "--duration", "0.5s",
                                     "--lat-duration", "0.2s", "--bw-size", "256K", "--token-file", dir_ + "/token",
                                     // One pair at a time: veth pairs share the CPU.
                                     "--parallel", "1", "-o", bundle};
    args.insert(args.end(), extra.begin(), extra.end());
    int err = -1;
    const auto t0 = std::chrono::steady_clock::now();
    pid_t pid = Spawn(args, dir_ + "/" + name + ".txt", &err);
    FILE* in = ::fdopen(err, "r");
    char line[2048];
    while (in && std::fgets(line, sizeof line, in)) {
      out.stderr_text += line;
      if (!kill_at.empty() && std::string(line).find(kill_at) != std::string::npos && agents_[5] > 0) {
        ::kill(agents_[5], SIGKILL);
        ::waitpid(agents_[5], nullptr, 0);
        agents_[5] = -1;
      }
      if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(240)) break;
    }
    if (in) std::fclose(in);
    out.exit = netns_test::WaitExit(pid, std::chrono::seconds(30));
    out.stdout_text = ReadFile(dir_ + "/" + name + ".txt");
    auto b = bundle::Bundle::Open(bundle);
    if (!b.ok()) {
      out.error = "\nbundle: " + b.status().message();
      return out;
    }
    out.manifest = b->manifest();
    out.files = b->Files();
    return out;
  }

  static inline std::string skip_, error_, dir_;
  static inline std::vector<pid_t> agents_;

 public:
  static inline LadderRun run1_, run2_;
};

bool Has(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

void CheckStopsAtTheFirstFailingRungNamingTheMember(const LadderRun& r) {
  ASSERT_TRUE(r.manifest) << r.Describe();
  EXPECT_EQ(r.exit, 2) << r.Describe();
  EXPECT_FALSE(r.manifest->verdict.go);
  EXPECT_EQ(r.manifest->verdict.first_failing_rung, "L1L2.node") << r.Describe();
  const auto* node = r.Rung("L1L2.node");
  ASSERT_NE(node, nullptr);
  EXPECT_EQ(node->verdict, model::RungVerdict::kFail);
  EXPECT_FALSE(Has(node->members_passed, "h1")) << r.Describe();
  EXPECT_EQ(node->members_passed.size(), 6u) << r.Describe();
  bool pcie = false;
  for (const auto& f : node->findings) pcie |= f.id == "pcie.downgraded" && f.object.rfind("h1 ", 0) == 0;
  EXPECT_TRUE(pcie) << r.Describe();
  // Nothing above ran, and says why.
  for (const char* id : {"L1L2.cluster", "L2.path", "L3"}) {
    const auto* rung = r.Rung(id);
    ASSERT_NE(rung, nullptr);
    EXPECT_EQ(rung->verdict, model::RungVerdict::kNotRun) << id;
    EXPECT_NE(rung->reason.find("L1L2.node failed"), std::string::npos) << rung->reason;
  }
  EXPECT_EQ(r.Rung("L4")->reason, "not asked for (--rungs)");
  // The verdict on stdout names the member, the evidence and the fix.
  EXPECT_NE(r.stdout_text.find("NO-GO"), std::string::npos) << r.Describe();
  EXPECT_NE(r.stdout_text.find("h1"), std::string::npos) << r.Describe();
  EXPECT_NE(r.stdout_text.find("fix:"), std::string::npos) << r.Describe();
  // Evidence: every member's inventory, doctor and snapshot, counters before/after.
  for (int i = 0; i < kHosts; ++i) {
    const std::string m = "members/h" + std::to_string(i);
    EXPECT_TRUE(Has(r.files, m + "/inventory.json")) << m;
    EXPECT_TRUE(Has(r.files, m + "/doctor.json")) << m;
    EXPECT_TRUE(Has(r.files, m + "/snapshot.tar.gz")) << m;
    EXPECT_TRUE(Has(r.files, m + "/counters/L1L2.node-before.json")) << m;
    EXPECT_TRUE(Has(r.files, m + "/counters/L1L2.node-after.json")) << m;
  }
  EXPECT_NE(r.stderr_text.find("[1/4 L1L2.node]"), std::string::npos) << r.stderr_text;
}

void CheckKeepGoingDropsEachFaultyMemberAtItsRung(const LadderRun& r) {
  ASSERT_TRUE(r.manifest) << r.Describe();
  EXPECT_EQ(r.exit, 2) << r.Describe();
  auto dropped = [&](const std::string& id) {
    const auto* m = r.Member(id);
    return m ? m->dropped_at : std::string("(no such member)");
  };
  EXPECT_EQ(dropped("h1"), "L1L2.node") << r.Describe();
  EXPECT_EQ(dropped("h2"), "L1L2.cluster") << r.Describe();
  EXPECT_EQ(dropped("h3"), "L2.path") << r.Describe();
  EXPECT_EQ(dropped("h4"), "L3") << r.Describe();
  EXPECT_EQ(dropped("h0"), "") << r.Describe();
  EXPECT_EQ(dropped("h6"), "") << r.Describe();

  const auto* cluster = r.Rung("L1L2.cluster");
  ASSERT_NE(cluster, nullptr);
  bool mtu = false;
  for (const auto& c : cluster->consistency) {
    if (c.setting == "netdev_mtu") mtu = c.outliers == std::vector<std::string>{"h2"} && c.majority == "1 x 9000";
  }
  EXPECT_TRUE(mtu) << r.Describe();

  const auto* path = r.Rung("L2.path");
  ASSERT_NE(path, nullptr);
  EXPECT_EQ(path->verdict, model::RungVerdict::kFail);
  bool hole = false;
  for (const auto& p : path->pairs) {
    hole |= p.b == "h3" && p.path_mtu && *p.path_mtu <= 1504 && p.local_mtu == 9000 &&
            p.verdict == model::RungVerdict::kFail;
  }
  EXPECT_TRUE(hole) << r.Describe();

  const auto* perf = r.Rung("L3");
  ASSERT_NE(perf, nullptr);
  EXPECT_EQ(perf->verdict, model::RungVerdict::kFail) << r.Describe();
  EXPECT_EQ(perf->members_passed, (std::vector<std::string>{"h0", "h6"})) << r.Describe();
  EXPECT_EQ(perf->parameters.value("rdma_tested", true), false);
  for (const auto& p : perf->pairs) {
    EXPECT_FALSE(p.rdma);
    EXPECT_EQ(p.transport, "tcp");
    if (p.verdict == model::RungVerdict::kWarn) {
      EXPECT_NE(p.reason.find("RDMA not used"), std::string::npos);
    }
    if (p.a == "h4" || p.b == "h4") {
      EXPECT_EQ(p.verdict, model::RungVerdict::kFail) << p.a << "->" << p.b;
    }
    if (!p.evidence_file.empty()) {
      EXPECT_TRUE(Has(r.files, p.evidence_file)) << p.evidence_file;
    }
  }
  // Baseline groups, after L3 on the members that passed it (h0 in r1, h6 in
  // r2): one pair per scope over TCP (never an RDMA baseline), and the scopes
  // this run cannot form recorded with the reason.
  EXPECT_EQ(r.Member("h0") ? r.Member("h0")->rack : "", "r1");
  ASSERT_EQ(perf->baselines.size(), 6u) << r.Describe();
  for (const auto& g : perf->baselines) {
    if (g.scope == "two-nodes") {
      EXPECT_EQ(g.members, (std::vector<std::string>{"h0", "h6"}));
      ASSERT_EQ(g.pairs.size(), 2u);
      for (const auto& p : g.pairs) {
        EXPECT_EQ(p.transport, "tcp");
        EXPECT_TRUE(p.bw_gbps.has_value()) << p.reason;
        EXPECT_TRUE(Has(r.files, p.evidence_file)) << p.evidence_file;
      }
      EXPECT_EQ(g.verdict, model::RungVerdict::kWarn) << g.reason;
    } else if (g.scope == "cross-rack" || g.scope == "one-rail") {
      EXPECT_EQ(g.same_as, "two-nodes") << g.scope;
    } else if (g.scope == "same-rack") {
      EXPECT_FALSE(g.applicable);
      EXPECT_EQ(g.reason, "no rack holds two members that passed L3: r1 (h0); r2 (h6)");
    } else if (g.scope == "single-node") {
      EXPECT_EQ(g.members, (std::vector<std::string>{"h0"}));
      EXPECT_EQ(g.pairs.size(), 1u);
    }
  }
  // Counter deltas: the data interfaces moved bytes during L3.
  bool bytes = false;
  for (const auto& d : perf->counter_deltas) bytes |= d.object == "eth1" && d.counter == "tx_bytes" && d.delta > 0;
  EXPECT_TRUE(bytes) << r.Describe();

  // h5 died: named, dropped where it died, and the rest completed.
  const auto* h5 = r.Member("h5");
  ASSERT_NE(h5, nullptr);
  EXPECT_FALSE(h5->reachable) << r.Describe();
  EXPECT_TRUE(h5->dropped_at == "L1L2.cluster" || h5->dropped_at == "L2.path") << h5->dropped_at;
  bool named = false;
  for (const auto& rung : r.manifest->rungs) {
    for (const auto& f : rung.findings) named |= f.id == "ladder.member.unreachable" && f.object == "h5";
  }
  EXPECT_TRUE(named) << r.Describe();
  EXPECT_FALSE(r.manifest->interrupted);
  EXPECT_NE(r.stdout_text.find("h5"), std::string::npos);
}

// One TEST: ctest runs each TEST of a binary in its own process, and the
// cluster and both runs cost about half a minute.
TEST_F(NetnsLadderTest, EachPlantedFaultIsCaughtAtItsRungAndNamed) {
  {
    SCOPED_TRACE("run 1: stops at L1L2.node naming h1");
    CheckStopsAtTheFirstFailingRungNamingTheMember(run1_);
  }
  {
    SCOPED_TRACE("run 2 (--keep-going): h1, h2, h3, h4 dropped at their rungs, h5 dead, h0 and h6 on top");
    CheckKeepGoingDropsEachFaultyMemberAtItsRung(run2_);
  }
}

}  // namespace
}  // namespace fabcheck::ladder
