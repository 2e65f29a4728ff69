// The host rung (irq.affinity, cpu.frequency, mem.hugepages, pcie.devctl,
// cpu.pinning) on generated node fixtures: quiet on the tuned node, each
// planted fault named with what was read, unreadable input unknown, and the
// same findings from a snapshot of the fixture as from the fixture itself.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fmt/format.h>

#include <memory>

#include "checks/registry.h"
#include "checks/runner.h"
#include "inventory/inventory.h"
#include "inventory/snapshot.h"
#include "../report/golden.h"
#include "node_fixture.h"
#include "report/doctor_text.h"

namespace fabcheck::checks {
namespace {

namespace fs = std::filesystem;
using model::Severity;
using fixtures::NodeFixture;
using fixtures::NodeSpec;

const std::vector<std::string> kHostChecks = {"irq.affinity", "cpu.frequency", "mem.hugepages", "pcie.devctl",
                                              "cpu.pinning"};

std::vector<model::Finding> RunOn(const sys::SysRoot& root, const Profile* profile = nullptr,
                                  const NcclEnv* env = nullptr, const std::vector<std::string>& only = {"host"}) {
  inventory::ReadOptions options;
  options.query_libraries = false;
  model::Inventory inv = inventory::ReadInventory(root, options);
  NcclEnv empty;
  Context ctx;
  ctx.root = &root;
  ctx.inventory = &inv;
  ctx.profile = profile;
  ctx.env = env ? env : &empty;
  ctx.evidence_complete = EvidenceComplete(root);
  ctx.host_evidence_complete = HostEvidenceComplete(root);
  auto checks = SelectChecks(only);
  EXPECT_TRUE(checks.ok());
  return RunChecks(ctx, *checks);
}

std::vector<model::Finding> RunOn(const NodeFixture& node, const Profile* profile = nullptr,
                                  const NcclEnv* env = nullptr) {
  auto root = sys::SysRoot::Open(node.root());
  EXPECT_TRUE(root.ok()) << root.status().ToString();
  return RunOn(*root, profile, env);
}

std::string Dump(const std::vector<model::Finding>& findings) {
  std::string out;
  for (const auto& f : findings) {
    out += std::string(model::SeverityName(f.severity)) + " " + f.id + " [" + f.object + "] " + f.message + "\n";
    for (const auto& e : f.evidence) out += "      " + e + "\n";
    if (!f.remedy.empty()) out += "      fix: " + f.remedy + "\n";
  }
  return out;
}

Severity Worst(const std::vector<model::Finding>& findings, const std::string& id) {
  Severity worst = Severity::kPass;
  for (const auto& f : findings) {
    if (f.id == id && static_cast<int>(f.severity) > static_cast<int>(worst)) worst = f.severity;
  }
  return worst;
}

const model::Finding* FindingOf(const std::vector<model::Finding>& findings, const std::string& id, Severity s) {
  for (const auto& f : findings) {
    if (f.id == id && f.severity == s) return &f;
  }
  return nullptr;
}

Profile ParseOrDie(const std::string& yaml) {
  auto p = ParseProfile(yaml, "test.yaml");
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return p.ok() ? *p : Profile{};
}

class HostChecksTest : public ::testing::Test {
 protected:
  fs::path Dir(const std::string& name) {
    return fixtures::FixtureTempDir() / ("fchost-" + name + "-" + std::to_string(::getpid()));
  }
  std::unique_ptr<NodeFixture> Ib(NodeSpec spec = {}) { return std::make_unique<NodeFixture>(Dir("ib"), spec); }
};

TEST_F(HostChecksTest, TunedNodeIsQuietAndSaysWhatItRead) {
  auto node = Ib();
  auto f = RunOn(*node);
  for (const auto& id : kHostChecks) {
    Severity s = Worst(f, id);
    EXPECT_TRUE(s == Severity::kPass || s == Severity::kInfo) << id << "\n" << Dump(f);
  }
  const auto* irq = FindingOf(f, "irq.affinity", Severity::kPass);
  ASSERT_NE(irq, nullptr) << Dump(f);
  EXPECT_NE(irq->message.find("mlx5_0"), std::string::npos) << irq->message;
  EXPECT_NE(Dump(f).find("irqbalance is not running"), std::string::npos) << Dump(f);
  EXPECT_EQ(Worst(f, "cpu.frequency"), Severity::kPass) << Dump(f);
  EXPECT_NE(Dump(f).find("C6 (170 us, disabled)"), std::string::npos) << Dump(f);
  EXPECT_EQ(Worst(f, "pcie.devctl"), Severity::kPass) << Dump(f);
  EXPECT_NE(Dump(f).find("MaxPayload 256/512 supported, MaxReadReq 4096, RlxdOrd+"), std::string::npos) << Dump(f);
  EXPECT_NE(Dump(f).find("ATS capability at 0x150: disabled"), std::string::npos) << Dump(f);
  EXPECT_EQ(Worst(f, "cpu.pinning"), Severity::kPass) << Dump(f);
  // Facts without a profile: info, with the files they came from.
  const auto* huge = FindingOf(f, "mem.hugepages", Severity::kInfo);
  ASSERT_NE(huge, nullptr) << Dump(f);
  EXPECT_NE(Dump(f).find("2 MiB pages: 4096 total, 4000 free"), std::string::npos) << Dump(f);
  EXPECT_NE(Dump(f).find("node0 2048/2000, node1 2048/2000"), std::string::npos) << Dump(f);
  EXPECT_NE(Dump(f).find("transparent hugepages: madvise"), std::string::npos) << Dump(f);
  EXPECT_NE(Dump(f).find("automatic NUMA balancing is off"), std::string::npos) << Dump(f);
}

TEST_F(HostChecksTest, IrqVectorsOnTheFarSocketAreNamed) {
  auto node = Ib();
  // mlx5_1 (NUMA node 0): comp2 served by CPU 60 (node 1), async by every CPU.
  node->SetIrqAffinity(node->NicIrq(1, 3), "60");
  node->SetIrqAffinity(node->NicIrq(1, 0), "0-223");
  auto f = RunOn(*node);
  EXPECT_EQ(Worst(f, "irq.affinity"), Severity::kWarn) << Dump(f);
  const auto* w = FindingOf(f, "irq.affinity", Severity::kWarn);
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->object, "mlx5_1 (" + node->NicBdf(1) + ")");
  EXPECT_NE(w->message.find("2 of 5 interrupt vectors"), std::string::npos) << w->message;
  EXPECT_NE(w->message.find(fmt::format("mlx5_comp2 (IRQ {}) -> CPUs 60", node->NicIrq(1, 3))), std::string::npos)
      << w->message;
  EXPECT_NE(w->message.find("mlx5_async0"), std::string::npos) << w->message;
  EXPECT_NE(Dump(f).find(fmt::format("/proc/irq/{}/smp_affinity_list = 60 (outside: 60)", node->NicIrq(1, 3))),
            std::string::npos)
      << Dump(f);
  EXPECT_NE(w->remedy.find("set_irq_affinity_cpulist.sh 0-55,112-167 " + node->Netdev(1)), std::string::npos)
      << w->remedy;
  // Only mlx5_1 is named: the other NICs stay in the pass line.
  for (const auto& x : f) {
    if (x.id == "irq.affinity" && x.severity == Severity::kWarn) {
      EXPECT_EQ(x.object, w->object);
    }
  }
}

TEST_F(HostChecksTest, IrqbalanceRunningIsReportedAndJoinsTheRemedy) {
  auto node = Ib();
  node->Write("proc/2211/comm", "irqbalance\n");
  node->Write("sys/fs/cgroup/system.slice/irqbalance.service/cgroup.procs", "2211\n");
  node->SetIrqAffinity(node->NicIrq(6, 1), "3");  // mlx5_6 is on node 1
  auto f = RunOn(*node);
  const auto* info = FindingOf(f, "irq.affinity", Severity::kInfo);
  ASSERT_NE(info, nullptr) << Dump(f);
  EXPECT_EQ(info->object, "irqbalance");
  EXPECT_NE(info->message.find("irqbalance is running (pid 2211)"), std::string::npos) << info->message;
  EXPECT_NE(info->remedy.find("systemctl disable --now irqbalance"), std::string::npos) << info->remedy;
}

TEST_F(HostChecksTest, IrqInputMissingOrGarbageIsUnknown) {
  auto node = Ib();
  node->Remove("proc/irq/" + std::to_string(node->NicIrq(2, 2)));
  auto f = RunOn(*node);
  EXPECT_EQ(Worst(f, "irq.affinity"), Severity::kUnknown) << Dump(f);
  node->Write("proc/interrupts", "garbage\x01\x02\n");
  f = RunOn(*node);
  EXPECT_EQ(Worst(f, "irq.affinity"), Severity::kUnknown) << Dump(f);
  node->Remove("proc/interrupts");
  f = RunOn(*node);
  EXPECT_EQ(Worst(f, "irq.affinity"), Severity::kUnknown) << Dump(f);
  EXPECT_NE(Dump(f).find("/proc/interrupts"), std::string::npos) << Dump(f);
}

TEST_F(HostChecksTest, PowersaveOnTheNicsNodeIsAWarningWithTheFix) {
  auto node = Ib();
  node->SetGovernor(56, 111, "powersave");
  node->SetGovernor(168, 223, "schedutil");
  auto f = RunOn(*node);
  const auto* w = FindingOf(f, "cpu.frequency", Severity::kWarn);
  ASSERT_NE(w, nullptr) << Dump(f);
  EXPECT_EQ(w->object, "CPUs 56-111,168-223");
  EXPECT_NE(w->message.find("112 CPU(s) of NUMA node 1"), std::string::npos) << w->message;
  EXPECT_NE(w->message.find("powersave on CPUs 56-111; schedutil on CPUs 168-223"), std::string::npos) << w->message;
  EXPECT_NE(w->remedy.find("cpupower frequency-set -g performance"), std::string::npos);
}

TEST_F(HostChecksTest, DeepCStatesAreReportedNoCpufreqIsInfo) {
  auto node = Ib();
  for (int cpu = 0; cpu < NodeFixture::kCpus; ++cpu) {
    node->Write(fmt::format("sys/devices/system/cpu/cpu{}/cpuidle/state2/disable", cpu), "0\n");
    node->Remove(fmt::format("sys/devices/system/cpu/cpu{}/cpufreq", cpu));
  }
  auto f = RunOn(*node);
  EXPECT_EQ(Worst(f, "cpu.frequency"), Severity::kInfo) << Dump(f);
  EXPECT_NE(Dump(f).find("deep C-states are enabled"), std::string::npos) << Dump(f);
  EXPECT_NE(Dump(f).find("C6 (170 us) on CPUs 0-223"), std::string::npos) << Dump(f);
  EXPECT_NE(Dump(f).find("no frequency governor to check"), std::string::npos) << Dump(f);
}

TEST_F(HostChecksTest, MemoryWarnsOnlyAgainstAProfile) {
  auto node = Ib();
  node->Write("proc/sys/kernel/numa_balancing", "1\n");
  node->Write("sys/kernel/mm/transparent_hugepage/enabled", "[always] madvise never\n");
  auto facts = RunOn(*node);
  EXPECT_EQ(Worst(facts, "mem.hugepages"), Severity::kInfo) << Dump(facts);
  Profile p = ParseOrDie(
      "schema: fabcheck.profile/v1\nname: inference\nmemory:\n  hugepages: {2M: 8192, 1G: 16}\n  thp: madvise\n"
      "  numa_balancing: false\n");
  auto f = RunOn(*node, &p);
  std::string d = Dump(f);
  EXPECT_EQ(Worst(f, "mem.hugepages"), Severity::kWarn) << d;
  EXPECT_NE(d.find("warn mem.hugepages [hugepages-2048kB] 2 MiB pages: 4096 total, 4000 free, below the 8192"),
            std::string::npos)
      << d;
  EXPECT_NE(d.find("warn mem.hugepages [hugepages-1048576kB]"), std::string::npos) << d;
  EXPECT_NE(d.find("warn mem.hugepages [thp] transparent hugepages are 'always', profile inference expects 'madvise'"),
            std::string::npos)
      << d;
  EXPECT_NE(d.find("warn mem.hugepages [numa-balancing]"), std::string::npos) << d;
  EXPECT_NE(d.find("sysctl -w kernel.numa_balancing=0"), std::string::npos) << d;
  Profile met = ParseOrDie("memory:\n  hugepages: {2M: 4096}\n  thp: always\n  numa_balancing: true\n");
  auto g = RunOn(*node, &met);
  EXPECT_EQ(Worst(g, "mem.hugepages"), Severity::kInfo) << Dump(g);  // 1 GiB pool fact stays info
  EXPECT_NE(FindingOf(g, "mem.hugepages", Severity::kPass), nullptr) << Dump(g);
}

TEST_F(HostChecksTest, PcieDeviceControlAgainstTheNodeAndTheProfile) {
  auto node = Ib();
  // mlx5_3: MRRS 256 (far below line rate's needs), relaxed ordering off.
  node->Write(node->NicPci(3) + "/config",
              NodeFixture::EndpointConfigSpace(0x15b3, 0x1021, 512, NodeFixture::DevCtl(256, 256, false), 0x8000));
  auto f = RunOn(*node);
  const auto* w = FindingOf(f, "pcie.devctl", Severity::kWarn);
  ASSERT_NE(w, nullptr) << Dump(f);
  EXPECT_EQ(w->object, "mlx5_3 (" + node->NicBdf(3) + ")");
  EXPECT_NE(w->message.find("Max Read Request Size 256 bytes, below the 512"), std::string::npos) << w->message;
  EXPECT_NE(Dump(f).find("MaxReadReq 256 bytes, RlxdOrd-"), std::string::npos) << Dump(f);
  EXPECT_NE(Dump(f).find("ATS capability at 0x150: enabled"), std::string::npos) << Dump(f);
  // The profile asks for more: MPS 512 and RO on every compute NIC.
  Profile p = ParseOrDie("nics:\n  max_payload: 512\n  max_read_request: 4096\n  relaxed_ordering: true\n");
  auto g = RunOn(*node, &p);
  int warned = 0;
  for (const auto& x : g) warned += x.id == "pcie.devctl" && x.severity == Severity::kWarn;
  EXPECT_EQ(warned, 8) << Dump(g);  // every NIC runs MPS 256
  EXPECT_NE(Dump(g).find("Relaxed Ordering is disabled, the profile expects it enabled"), std::string::npos) << Dump(g);
  EXPECT_NE(Dump(g).find("the profile's 4096"), std::string::npos) << Dump(g);
}

TEST_F(HostChecksTest, ShortConfigSpaceIsUnknownNotACrash) {
  auto node = Ib();
  std::string full = NodeFixture::EndpointConfigSpace(0x10de, 0x2335, 256, NodeFixture::DevCtl(256, 4096, true));
  node->Write(node->GpuPci(5) + "/config", full.substr(0, 64));  // what a non-root read returns
  node->Write(node->NicPci(5) + "/config", "");
  auto f = RunOn(*node);
  const auto* u = FindingOf(f, "pcie.devctl", Severity::kUnknown);
  ASSERT_NE(u, nullptr) << Dump(f);
  EXPECT_NE(u->message.find("2 device(s)"), std::string::npos) << u->message;
  EXPECT_NE(u->remedy.find("run as root"), std::string::npos);
  EXPECT_NE(FindingOf(f, "pcie.devctl", Severity::kPass), nullptr) << Dump(f);  // the other 14 still judged
}

TEST_F(HostChecksTest, PinnedToTheFarSocketIsNamed) {
  auto node = Ib();
  NcclEnv env;
  env.Set("NCCL_IB_HCA", "=mlx5_0,mlx5_1", "job.env line 1");
  node->SetCpusAllowed("56-63");  // node 1; the job's NICs are on node 0
  auto f = RunOn(*node, nullptr, &env);
  const auto* w = FindingOf(f, "cpu.pinning", Severity::kWarn);
  ASSERT_NE(w, nullptr) << Dump(f);
  EXPECT_NE(w->message.find("CPUs 56-63 (8 CPU(s), NUMA node 1)"), std::string::npos) << w->message;
  EXPECT_NE(w->message.find("mlx5_0, mlx5_1 on NUMA node 0"), std::string::npos) << w->message;
  EXPECT_NE(Dump(f).find("NCCL_IB_HCA"), std::string::npos) << Dump(f);
  EXPECT_NE(Dump(f).find("cpuset.cpus.effective = 56-63"), std::string::npos) << Dump(f);
  // Without NCCL_IB_HCA the job could use mlx5_4..7, local to its CPUs: info, not a warning.
  auto g = RunOn(*node);
  EXPECT_EQ(Worst(g, "cpu.pinning"), Severity::kInfo) << Dump(g);
  node->Write("proc/self/status", "Name:\tfabcheck\n");
  EXPECT_EQ(Worst(RunOn(*node), "cpu.pinning"), Severity::kUnknown);
}

TEST_F(HostChecksTest, NodeWithoutTheHostFilesIsUnknownOrInfoNeverAWarning) {
  auto node = Ib(NodeSpec{.with_host = false});
  auto f = RunOn(*node);
  for (const auto& x : f) {
    EXPECT_NE(x.severity, Severity::kWarn) << Dump(f);
    EXPECT_NE(x.severity, Severity::kFail) << Dump(f);
  }
  EXPECT_EQ(Worst(f, "irq.affinity"), Severity::kUnknown) << Dump(f);
  EXPECT_EQ(Worst(f, "pcie.devctl"), Severity::kUnknown) << Dump(f);
  // Such a tree is a capture from before the host checks: absence proves nothing.
  EXPECT_EQ(Worst(f, "cpu.frequency"), Severity::kUnknown) << Dump(f);
  EXPECT_EQ(Worst(f, "mem.hugepages"), Severity::kUnknown) << Dump(f);
}

// A capture of the fixture carries what the host checks read: the same findings offline.
// The whole host rung as doctor prints it, against goldens: the tuned node,
// and one with every planted fault (far-socket vectors, powersave, short
// HugePages against a profile, MRRS 256 with relaxed ordering off, a process
// pinned to the far socket). A change in what the checks say shows as a diff.
TEST_F(HostChecksTest, DoctorTextOfATunedAndADetunedNodeMatchesTheGoldens) {
  Profile profile = ParseOrDie(
      "schema: fabcheck.profile/v1\nname: golden\nmemory:\n  hugepages: {2M: 8192}\n"
      "nics:\n  max_read_request: 4096\n  relaxed_ordering: true\n");
  auto render = [&](const std::vector<model::Finding>& findings) {
    model::DoctorReport report;
    report.fabcheck_version = "golden";
    report.hostname = "fixture";
    report.kernel = "6.1.0";
    report.sysroot = "fixture";
    report.profile = "golden.yaml";
    report.findings = findings;
    for (const auto& f : findings) {
      if (report.checks.empty() || report.checks.back() != f.id) report.checks.push_back(f.id);
    }
    report.summary = model::Summarize(findings, {"host"});
    return report::RenderDoctorText(report, /*verbose=*/true);
  };
  auto tuned = Ib();
  EXPECT_EQ(report::testing::CheckGolden("text/doctor-host-tuned.txt", render(RunOn(*tuned))), "");

  auto detuned = Ib();
  detuned->SetIrqAffinity(detuned->NicIrq(1, 3), "60");
  detuned->SetGovernor(0, 55, "powersave");
  detuned->SetCpusAllowed("56-111");
  detuned->Write(detuned->NicPci(3) + "/config", NodeFixture::EndpointConfigSpace(
                                                     0x15b3, 0x1021, 512, NodeFixture::DevCtl(256, 256, false), 0x8000));
  auto root = sys::SysRoot::Open(detuned->root());
  ASSERT_TRUE(root.ok());
  EXPECT_EQ(report::testing::CheckGolden("text/doctor-host-detuned.txt", render(RunOn(*root, &profile))), "");
}

TEST_F(HostChecksTest, SnapshotCarriesTheHostEvidence) {
  auto node = Ib();
  node->SetIrqAffinity(node->NicIrq(4, 2), "1");
  node->SetGovernor(0, 3, "powersave");
  auto root = sys::SysRoot::Open(node->root());
  ASSERT_TRUE(root.ok());
  ASSERT_TRUE(inventory::RegisterSnapshotReader("doctor-test", [](const sys::SysRoot& r) { ReadEvidence(r); }));
  std::string capture = (Dir("capture").string() + ".tar.gz");
  auto snap = inventory::TakeSnapshot(*root, capture, "test");
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  auto offline = sys::SysRoot::Open(capture);
  ASSERT_TRUE(offline.ok()) << offline.status().ToString();
  for (const char* path : {"/proc/interrupts", "/proc/irq/0/smp_affinity_list", "/proc/sys/kernel/numa_balancing",
                           "/sys/kernel/mm/transparent_hugepage/enabled",
                           "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages",
                           "/sys/devices/system/cpu/cpu5/cpufreq/scaling_governor",
                           "/sys/devices/system/cpu/cpu5/cpuidle/state2/latency"}) {
    EXPECT_TRUE(offline->Exists(path)) << path;
  }
  EXPECT_TRUE(offline->Exists("/sys/bus/pci/devices/" + node->NicBdf(0) + "/config"));
  EXPECT_TRUE(offline->Exists("/sys/bus/pci/devices/" + node->GpuBdf(7) + "/config"));
  auto live = RunOn(*root);
  auto replay = RunOn(*offline);
  EXPECT_EQ(Dump(live), Dump(replay));
  EXPECT_EQ(Worst(replay, "irq.affinity"), Severity::kWarn) << Dump(replay);
  EXPECT_EQ(Worst(replay, "cpu.frequency"), Severity::kWarn) << Dump(replay);
  fs::remove(capture);
}

}  // namespace
}  // namespace fabcheck::checks
