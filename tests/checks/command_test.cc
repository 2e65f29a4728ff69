// `fabcheck doctor` as a user runs it: exit codes, JSON schema, --only,
// --env-file, bad input, and a run on this machine (which has no RDMA).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "node_fixture.h"

namespace fabcheck::checks {
namespace {

namespace fs = std::filesystem;

struct Output {
  int code = -1;
  std::string out;
};

// Runs the binary with stdout captured (stderr goes to the test log).
Output RunFabcheck(const std::string& args, const std::string& env = "") {
  std::string cmd = env + " " + std::string(FABCHECK_BINARY) + " " + args;
  Output o;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return o;
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) o.out.append(buf.data(), n);
  int status = ::pclose(p);
  o.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return o;
}

fs::path Dir(const std::string& name) {
  return fixtures::FixtureTempDir() / ("fcdoctor-cmd-" + name + "-" + std::to_string(::getpid()));
}

TEST(DoctorCommandTest, HealthyFixtureExitsZero) {
  fixtures::NodeFixture node(Dir("healthy"), {});
  auto o = RunFabcheck("doctor --sysroot " + node.root() + " --no-process-env");
  EXPECT_EQ(o.code, 0) << o.out;
  EXPECT_NE(o.out.find("== L1"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("0 fail, 0 warn"), std::string::npos) << o.out;
}

TEST(DoctorCommandTest, FailureExitsTwoAndJsonCarriesTheFinding) {
  fixtures::NodeFixture node(Dir("fail"), {});
  node.Write(node.PortDir(1) + "/state", "1: DOWN\n");
  auto o = RunFabcheck("doctor --json --sysroot " + node.root() + " --no-process-env");
  EXPECT_EQ(o.code, 2) << o.out;
  auto j = nlohmann::json::parse(o.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << o.out;
  EXPECT_EQ(j["schema"], "fabcheck.doctor/v1");
  EXPECT_EQ(j["summary"]["first_failing_rung"], "L1");
  bool found = false;
  for (const auto& f : j["findings"]) {
    found |= f["id"] == "port.down" && f["severity"] == "fail" && f["object"] == "mlx5_1 port 1";
  }
  EXPECT_TRUE(found) << o.out;
}

// The exporter runs the same host checks on its inventory schedule and
// exports their findings, so a drifted node raises an alert.
TEST(DoctorCommandTest, ExporterExportsHostFindings) {
  fixtures::NodeFixture node(Dir("exporter"), {});
  node.SetIrqAffinity(node.NicIrq(1, 3), "60");  // mlx5_1 (NUMA node 0) served by a node-1 CPU
  node.SetGovernor(0, 3, "powersave");
  auto o = RunFabcheck("--log-level error exporter --once --ethtool off --kubelet-socket none --node-name n1 --sysroot " +
                       node.root());
  ASSERT_EQ(o.code, 0) << o.out;
  const std::string irq =
      "fabcheck_host_finding{node=\"n1\",check=\"irq.affinity\",severity=\"warn\",object=\"mlx5_1 (" +
      node.NicBdf(1) + ")\"} 1";
  EXPECT_NE(o.out.find(irq), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("check=\"cpu.frequency\",severity=\"warn\""), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("check=\"cpu.pinning\""), std::string::npos) << "the exporter's own pinning is not the node's";
  EXPECT_NE(o.out.find("fabcheck_exporter_host_checks_up{node=\"n1\"} 1"), std::string::npos) << o.out;

  auto off = RunFabcheck("--log-level error exporter --once --ethtool off --kubelet-socket none --host-checks none "
                         "--sysroot " + node.root());
  EXPECT_EQ(off.code, 0);
  EXPECT_EQ(off.out.find("fabcheck_host_finding"), std::string::npos) << off.out;

  EXPECT_EQ(RunFabcheck("exporter --once --host-checks irq.afinity --sysroot " + node.root()).code, 64);
  // A profile that cannot be read could not run (3), as in doctor; a bad option is usage (64).
  EXPECT_EQ(RunFabcheck("exporter --once --profile /nonexistent.yaml --sysroot " + node.root()).code, 3);
}

TEST(DoctorCommandTest, WarningsOnlyExitOneAndEnvFileIsChecked) {
  fixtures::NodeFixture node(Dir("warn"), {});
  fs::path env = Dir("warn-env");
  std::ofstream(env) << "# the job's settings\nNCCL_NET_GDR_LEVEL=LOC\n";
  auto o = RunFabcheck("doctor --only NCCL --env-file " + env.string() + " --sysroot " + node.root() + " --no-process-env");
  EXPECT_EQ(o.code, 1) << o.out;
  EXPECT_NE(o.out.find("nccl.net-gdr-level"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("line 2"), std::string::npos) << o.out;  // evidence names where the value came from
  EXPECT_EQ(o.out.find("== L1"), std::string::npos) << "--only NCCL ran other rungs:\n" << o.out;
  fs::remove(env);
}

TEST(DoctorCommandTest, BadInputIsAClearError) {
  fixtures::NodeFixture node(Dir("bad"), {});
  EXPECT_EQ(RunFabcheck("doctor --only L7 --sysroot " + node.root()).code, 64);
  fs::path profile = Dir("bad-profile");
  std::ofstream(profile) << "nics:\n  rate_gbps: fast\n";
  auto o = RunFabcheck("doctor --profile " + profile.string() + " --sysroot " + node.root() + " 2>&1");
  EXPECT_EQ(o.code, 3);
  EXPECT_NE(o.out.find("nics.rate_gbps"), std::string::npos) << o.out;
  fs::remove(profile);
  EXPECT_EQ(RunFabcheck("doctor --sysroot /nonexistent/sysroot").code, 3);
}

TEST(DoctorCommandTest, HelpDocumentsExitCodesAndCatalogMatchesDocs) {
  auto help = RunFabcheck("doctor --help");
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("1 warnings only"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("Examples"), std::string::npos);
  auto catalog = RunFabcheck("doctor --catalog");
  std::ifstream in(std::string(FABCHECK_SOURCE_DIR) + "/docs/checks.md");
  std::stringstream docs;
  docs << in.rdbuf();
  EXPECT_EQ(catalog.out, docs.str()) << "regenerate: fabcheck doctor --catalog > docs/checks.md";
}

// On a machine without RDMA hardware where TCP is meant the doctor must not
// alarm: absence of RDMA is info/unknown, never a failure. Without that
// intent a GPU machine without RDMA fails rdma.none (docs/verdicts.md).
TEST(DoctorCommandTest, ThisMachineWithoutRdmaIsNotAlarmingWhenTcpIsMeant) {
  auto plain = RunFabcheck("doctor --json --no-process-env");
  auto pj = nlohmann::json::parse(plain.out, nullptr, false);
  ASSERT_TRUE(pj.is_object()) << plain.out;
  bool gpus = false, none_failed = false, active = false;
  for (const auto& f : pj["findings"]) {
    if (f["id"] == "rdma.none") {
      none_failed = f["severity"] == "fail";
      active = f["severity"] == "pass";
      for (const auto& e : f["evidence"]) gpus |= e.get<std::string>().find("GPU(s) on this node") != std::string::npos;
    }
  }
  if (!active) {
    EXPECT_EQ(none_failed, gpus) << "rdma.none fails exactly on a GPU machine without RDMA:\n" << plain.out;
    if (none_failed) EXPECT_EQ(plain.code, 2) << plain.out;
  }
  auto o = RunFabcheck("doctor --json --no-process-env --expect-transport tcp");
  auto j = nlohmann::json::parse(o.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << o.out;
  bool rdma = false;
  for (const auto& f : j["findings"]) {
    if (f["id"] == "port.down" && f["severity"] != "info") rdma = true;
  }
  if (rdma) GTEST_SKIP() << "this machine has RDMA devices; the no-RDMA case cannot be checked here";
  for (const auto& f : j["findings"]) {
    EXPECT_NE(f["severity"], "fail") << f.dump();
    // GPU-only findings (PCIe width, IOMMU) can be real on a GPU machine; nothing else may warn.
    if (f["id"] != "pcie.downgraded" && f["id"] != "iommu.translating" && f["id"] != "topo.gpu-nic.far") {
      EXPECT_NE(f["severity"], "warn") << f.dump();
    }
  }
  EXPECT_NE(o.code, 2) << o.out;
}

// The host rung live: every check says what it read on this machine, and a
// file the kernel does not expose here is info/unknown with the reason.
TEST(DoctorCommandTest, HostRungOnThisMachineSaysWhatItRead) {
  auto o = RunFabcheck("doctor --json --no-process-env --only host");
  auto j = nlohmann::json::parse(o.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << o.out;
  std::map<std::string, std::string> text;  // id -> every message and evidence line
  for (const auto& f : j["findings"]) {
    EXPECT_NE(f["severity"], "fail") << f.dump();
    std::string& t = text[f["id"].get<std::string>()];
    t += f["message"].get<std::string>() + "\n";
    for (const auto& e : f["evidence"]) t += e.get<std::string>() + "\n";
  }
  for (const char* id : {"irq.affinity", "cpu.frequency", "mem.hugepages", "pcie.devctl", "cpu.pinning"}) {
    EXPECT_TRUE(text.count(id)) << id << " said nothing:\n" << o.out;
  }
  if (fs::exists("/proc/interrupts")) {
    EXPECT_NE(text["irq.affinity"].find("/proc/interrupts"), std::string::npos) << text["irq.affinity"];
  } else {
    std::printf("[ SKIPPED  ] irq part: this machine has no /proc/interrupts\n");
  }
  if (fs::exists("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")) {
    EXPECT_NE(text["cpu.frequency"].find("scaling_governor"), std::string::npos) << text["cpu.frequency"];
  } else {
    std::printf("[ SKIPPED  ] governor part: this machine has no cpufreq (checked that the reason is given)\n");
    EXPECT_NE(text["cpu.frequency"].find("no frequency governor to check"), std::string::npos) << text["cpu.frequency"];
  }
  if (fs::exists("/sys/kernel/mm/transparent_hugepage/enabled")) {
    EXPECT_NE(text["mem.hugepages"].find("transparent hugepages: "), std::string::npos) << text["mem.hugepages"];
  }
  EXPECT_NE(text["cpu.pinning"].find("Cpus_allowed_list"), std::string::npos) << text["cpu.pinning"];
}

}  // namespace
}  // namespace fabcheck::checks
