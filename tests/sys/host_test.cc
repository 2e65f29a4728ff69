// The host tuning readers (sys/irq.h, sys/cpu.h, sys/memory.h, sys/pci_config.h's
// PCI Express capability): formats as the kernel writes them, malformed input,
// and the live files of this machine where it has them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "sys/cpu.h"
#include "sys/irq.h"
#include "sys/memory.h"
#include "sys/pci_config.h"

namespace fabcheck::sys {
namespace {

namespace fs = std::filesystem;

// A scratch sysroot directory.
class Tree {
 public:
  Tree() : dir_(fs::temp_directory_path() / ("fcsys-host-" + std::to_string(::getpid()) + "-" + std::to_string(n_++))) {
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "sys");  // what makes a directory a sysroot
    fs::create_directories(dir_ / "proc");
  }
  ~Tree() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  void Write(const std::string& rel, const std::string& content) {
    fs::create_directories((dir_ / rel).parent_path());
    std::ofstream(dir_ / rel, std::ios::binary) << content;
  }
  SysRoot Root() const { return *SysRoot::Open(dir_.string()); }

 private:
  static inline int n_ = 0;
  fs::path dir_;
};

// ---- /proc/interrupts ------------------------------------------------------------------

// Rows in the three layouts the kernel has used (Linux 6.x per-device MSI
// domains, older IR-PCI-MSI, netdev-named vectors), architecture rows, and a
// row with fewer count columns than CPUs (a CPU went offline).
constexpr char kInterrupts[] =
    "           CPU0       CPU1       CPU2       CPU3       \n"
    "  0:         44          0          0          0  IO-APIC   2-edge      timer\n"
    " 151:          0      12034          0          0  PCI-MSIX-0000:18:00.0   3-edge      mlx5_comp3@pci:0000:18:00.0\n"
    "  45:          7          0          0          0  IR-PCI-MSI 9437184-edge      mlx5_async0@pci:0000:12:00.0\n"
    "  90:          0          0        881          0  IR-PCI-MSI 1048576-edge      ens1f0np0-TxRx-0\n"
    "  91:          0          0          0  IR-PCI-MSI 1048577-edge      ens1f0np0-TxRx-10\n"
    " NMI:          3          3          3          3   Non-maskable interrupts\n"
    " LOC:     999999     999999     999999     999999   Local timer interrupts\n"
    " ERR:          0\n"
    " MIS:          0\n";

TEST(Interrupts, ParsesEveryLayoutAndSkipsArchitectureRows) {
  auto t = ParseInterrupts(kInterrupts);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->cpus, (std::vector<int>{0, 1, 2, 3}));
  ASSERT_EQ(t->vectors.size(), 5u);
  const IrqVector& comp = t->vectors[1];
  EXPECT_EQ(comp.irq, 151);
  EXPECT_EQ(comp.counts, (std::vector<uint64_t>{0, 12034, 0, 0}));
  EXPECT_EQ(comp.Total(), 12034u);
  EXPECT_EQ(comp.name, "mlx5_comp3@pci:0000:18:00.0");
  EXPECT_EQ(comp.description, "PCI-MSIX-0000:18:00.0 3-edge mlx5_comp3@pci:0000:18:00.0");
  EXPECT_EQ(t->vectors[4].counts.size(), 3u);  // short row: its counts stop where the text does
  EXPECT_EQ(t->vectors[4].name, "ens1f0np0-TxRx-10");
}

TEST(Interrupts, VectorsMatchByAddressOrNetdev) {
  auto t = ParseInterrupts(kInterrupts);
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(VectorMatches(t->vectors[1], "0000:18:00.0", {}));
  EXPECT_FALSE(VectorMatches(t->vectors[1], "0000:18:00.1", {}));
  EXPECT_FALSE(VectorMatches(t->vectors[1], "0000:18:00", {}));  // a prefix of the address is not it
  EXPECT_TRUE(VectorMatches(t->vectors[2], "0000:12:00.0", {"ibp18s0"}));
  EXPECT_TRUE(VectorMatches(t->vectors[3], "0000:99:00.0", {"ens1f0np0"}));
  EXPECT_FALSE(VectorMatches(t->vectors[3], "0000:99:00.0", {"ens1f0"}));  // another netdev's prefix
  EXPECT_FALSE(VectorMatches(t->vectors[0], "0000:18:00.0", {"ens1f0np0"}));
}

TEST(Interrupts, GarbageIsAnErrorNotACrash) {
  EXPECT_FALSE(ParseInterrupts("").ok());
  EXPECT_FALSE(ParseInterrupts("\n\n").ok());
  EXPECT_FALSE(ParseInterrupts("  0:  1 2 3 timer\n").ok());  // no header
  auto t = ParseInterrupts("CPU0 CPU1\n 12: x y z\n99999999999: 1 2 a\n: 1\nfoo\n");
  ASSERT_TRUE(t.ok());
  ASSERT_EQ(t->vectors.size(), 1u);
  EXPECT_TRUE(t->vectors[0].counts.empty());
  EXPECT_EQ(t->vectors[0].name, "z");
}

TEST(Interrupts, AffinityAndIrqbalanceThroughTheSysroot) {
  Tree tree;
  tree.Write("proc/irq/151/smp_affinity_list", "56-59\n");
  tree.Write("proc/irq/152/smp_affinity_list", "\n");
  tree.Write("proc/irq/153/smp_affinity_list", "banana\n");
  tree.Write("proc/812/comm", "irqbalance\n");
  tree.Write("proc/1/comm", "systemd\n");
  tree.Write("proc/self/status", "Name: x\n");
  tree.Write("sys/fs/cgroup/system.slice/irqbalance.service/cgroup.procs", "812\n");
  tree.Write("etc/systemd/system/multi-user.target.wants/irqbalance.service", "");
  tree.Write("etc/default/irqbalance", "# banned\nIRQBALANCE_BANNED_CPULIST=\"0-3\"\n");
  SysRoot root = tree.Root();
  auto cpus = ReadIrqAffinity(root, 151);
  ASSERT_TRUE(cpus.ok()) << cpus.status().ToString();
  EXPECT_EQ(*cpus, (std::vector<int>{56, 57, 58, 59}));
  EXPECT_FALSE(ReadIrqAffinity(root, 152).ok());
  EXPECT_FALSE(ReadIrqAffinity(root, 153).ok());
  EXPECT_EQ(ReadIrqAffinity(root, 154).status().code(), StatusCode::kNotFound);
  IrqbalanceState s = ReadIrqbalance(root);
  EXPECT_EQ(s.pids, (std::vector<int>{812}));
  EXPECT_TRUE(s.unit_active.value_or(false));
  EXPECT_TRUE(s.unit_enabled.value_or(false));
  EXPECT_EQ(s.banned_cpus, "IRQBALANCE_BANNED_CPULIST=0-3");
  EXPECT_TRUE(s.Running());
}

TEST(Interrupts, ThisMachine) {
  SysRoot live = SysRoot::Live();
  auto t = ReadInterrupts(live);
  if (!t.ok() && t.status().code() == StatusCode::kNotFound) GTEST_SKIP() << "no /proc/interrupts here";
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_FALSE(t->cpus.empty());
  ASSERT_FALSE(t->vectors.empty());
  int readable = 0;
  for (const auto& v : t->vectors) {
    EXPECT_LE(v.counts.size(), t->cpus.size());
    auto cpus = ReadIrqAffinity(live, v.irq);
    if (cpus.ok()) ++readable;
  }
  // Every vector of /proc/interrupts has a /proc/irq/<n>/ (readable by anyone).
  EXPECT_GT(readable, 0) << "no /proc/irq/<n>/smp_affinity_list readable";
}

// ---- CPUs ---------------------------------------------------------------------------------

TEST(Cpu, GovernorsIdleStatesAndTheirAbsence) {
  Tree tree;
  tree.Write("sys/devices/system/cpu/online", "0-3\n");
  SysRoot root = tree.Root();
  EXPECT_EQ(*ReadOnlineCpus(root), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(ReadCpuFrequency(root, {0, 1, 2, 3}).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(ReadCpuIdle(root, {0, 1, 2, 3}).status().code(), StatusCode::kNotFound);
  for (int cpu = 0; cpu < 4; ++cpu) {
    std::string d = "sys/devices/system/cpu/cpu" + std::to_string(cpu);
    if (cpu != 3) tree.Write(d + "/cpufreq/scaling_governor", cpu < 2 ? "performance\n" : "powersave\n");
    if (cpu == 3) tree.Write(d + "/cpufreq/scaling_driver", "intel_pstate\n");
    tree.Write(d + "/cpuidle/state0/name", "POLL\n");
    tree.Write(d + "/cpuidle/state0/latency", "0\n");
    tree.Write(d + "/cpuidle/state1/name", "C6\n");
    tree.Write(d + "/cpuidle/state1/latency", "170\n");
    tree.Write(d + "/cpuidle/state1/disable", cpu == 0 ? "1\n" : "0\n");
  }
  auto f = ReadCpuFrequency(root, {0, 1, 2, 3});
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->governor.at(0), "performance");
  EXPECT_EQ(f->governor.at(2), "powersave");
  EXPECT_EQ(f->unreadable, (std::vector<int>{3}));
  auto idle = ReadCpuIdle(root, {0, 1});
  ASSERT_TRUE(idle.ok());
  ASSERT_EQ(idle->states.at(0).size(), 2u);
  EXPECT_EQ(idle->states.at(0)[1].name, "C6");
  EXPECT_EQ(idle->states.at(0)[1].latency_us, 170);
  EXPECT_TRUE(idle->states.at(0)[1].disabled);
  EXPECT_FALSE(idle->states.at(1)[1].disabled);
  tree.Write("sys/devices/system/cpu/online", "0-999999\n");
  EXPECT_FALSE(ReadOnlineCpus(root).ok());  // not a plausible machine: refused, not probed
}

TEST(Cpu, PinningFromStatusAndCgroup) {
  EXPECT_EQ(*ParseCpusAllowedList("Name:\tx\nCpus_allowed:\t3\nCpus_allowed_list:\t0-1\n"), "0-1");
  EXPECT_FALSE(ParseCpusAllowedList("Name:\tx\n").ok());
  EXPECT_EQ(*CpusetFileFor("0::/kubepods.slice/pod1/cri-containerd-ab.scope\n"),
            "/sys/fs/cgroup/kubepods.slice/pod1/cri-containerd-ab.scope/cpuset.cpus.effective");
  EXPECT_EQ(*CpusetFileFor("9:name=systemd:/\n3:cpuset:/docker/abc\n0::/\n"),
            "/sys/fs/cgroup/cpuset/docker/abc/cpuset.effective_cpus");
  EXPECT_EQ(*CpusetFileFor("0::/\n"), "/sys/fs/cgroup/cpuset.cpus.effective");
  EXPECT_FALSE(CpusetFileFor("3:cpuset:/../../etc\n").has_value());
  EXPECT_FALSE(CpusetFileFor("garbage\n").has_value());

  Tree tree;
  tree.Write("proc/self/status", "Cpus_allowed_list:\t56-59\n");
  tree.Write("proc/self/cgroup", "0::/job\n");
  tree.Write("sys/fs/cgroup/job/cpuset.cpus.effective", "56-63\n");
  CpuPinning p = ReadCpuPinning(tree.Root());
  ASSERT_TRUE(p.allowed.ok());
  EXPECT_EQ(*p.allowed, (std::vector<int>{56, 57, 58, 59}));
  ASSERT_TRUE(p.cpuset.has_value());
  EXPECT_EQ(p.cpuset->size(), 8u);
  tree.Write("proc/self/status", "Cpus_allowed_list:\tx-y\n");
  EXPECT_FALSE(ReadCpuPinning(tree.Root()).allowed.ok());
}

// ---- memory -----------------------------------------------------------------------------

TEST(Memory, HugePagesThpAndNumaBalancing) {
  EXPECT_EQ(*ParseHugePageDirName("hugepages-2048kB"), 2048u);
  EXPECT_EQ(*ParseHugePageDirName("hugepages-1048576kB"), 1048576u);
  EXPECT_FALSE(ParseHugePageDirName("hugepages-kB"));
  EXPECT_FALSE(ParseHugePageDirName("hugepages-0kB"));
  EXPECT_FALSE(ParseHugePageDirName("nr_hugepages"));
  ASSERT_TRUE(ParseBracketedChoice("always [madvise] never\n").ok());
  EXPECT_EQ(*ParseBracketedChoice("always [madvise] never\n"), "madvise");
  EXPECT_EQ(*ParseBracketedChoice("[always] madvise never"), "always");
  EXPECT_FALSE(ParseBracketedChoice("always madvise never").ok());
  EXPECT_FALSE(ParseBracketedChoice("[]").ok());

  Tree tree;
  SysRoot root = tree.Root();
  EXPECT_EQ(ReadHugePages(root).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(ReadThpMode(root).status().code(), StatusCode::kNotFound);
  tree.Write("sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages", "1024\n");
  tree.Write("sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages", "garbage\n");
  tree.Write("sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages", "8\n");
  tree.Write("sys/devices/system/node/node1/hugepages/hugepages-2048kB/nr_hugepages", "512\n");
  tree.Write("sys/devices/system/node/nodeX/hugepages/hugepages-2048kB/nr_hugepages", "1\n");
  tree.Write("sys/kernel/mm/transparent_hugepage/enabled", "always madvise [never]\n");
  tree.Write("proc/sys/kernel/numa_balancing", "1\n");
  auto pools = ReadHugePages(root);
  ASSERT_TRUE(pools.ok()) << pools.status().ToString();
  ASSERT_EQ(pools->size(), 3u);
  EXPECT_EQ((*pools)[0].page_kb, 2048u);
  EXPECT_EQ((*pools)[0].node, -1);
  EXPECT_EQ((*pools)[0].total, 1024u);
  EXPECT_FALSE((*pools)[0].free.has_value());  // garbage is unknown, not zero
  EXPECT_EQ((*pools)[1].node, 1);
  EXPECT_EQ((*pools)[2].page_kb, 1048576u);
  auto thp = ReadThpMode(root);
  ASSERT_TRUE(thp.ok()) << thp.status().ToString();
  EXPECT_EQ(*thp, "never");
  auto balancing = ReadNumaBalancing(root);
  ASSERT_TRUE(balancing.ok()) << balancing.status().ToString();
  EXPECT_EQ(*balancing, 1);
  tree.Write("proc/sys/kernel/numa_balancing", "on\n");
  EXPECT_EQ(ReadNumaBalancing(root).status().code(), StatusCode::kDataLoss);
}

// ---- PCI Express capability -------------------------------------------------------------

std::string ReadTestData(const std::string& rel) {
  std::ifstream in(std::string(FABCHECK_TESTDATA_DIR) + "/" + rel, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(PciExpress, RealH200ConfigSpace) {
  // lspci -vvv of that GPU: DevCap MaxPayload 256 bytes; DevCtl RlxdOrd+ ExtTag+ NoSnoop-,
  // MaxPayload 256 bytes, MaxReadReq 4096 bytes.
  std::string c = ReadTestData("pci/h200-vm-gpu-0000_00_06.0.config");
  ASSERT_EQ(c.size(), 4096u);
  auto d = FindPcieDeviceControl(c);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  ASSERT_TRUE(d->has_value());
  EXPECT_EQ((*d)->offset, 0x60);
  EXPECT_EQ((*d)->max_payload_supported, 256);
  EXPECT_EQ((*d)->max_payload, 256);
  EXPECT_EQ((*d)->max_read_request, 4096);
  EXPECT_TRUE((*d)->relaxed_ordering);
  EXPECT_TRUE((*d)->extended_tag);
  EXPECT_FALSE((*d)->no_snoop);
  EXPECT_EQ(FormatDeviceControl(**d), "MaxPayload 256 bytes, MaxReadReq 4096 bytes, RlxdOrd+ NoSnoop- ExtTag+");
  auto ats = FindAts(c);
  ASSERT_TRUE(ats.ok()) << ats.status().ToString();
  EXPECT_FALSE(ats->has_value());  // the hypervisor hides it
}

TEST(PciExpress, UnprivilegedReadIsAFailedPreconditionNotACrash) {
  std::string c = ReadTestData("pci/h200-vm-gpu-0000_00_06.0.config").substr(0, 64);
  auto d = FindPcieDeviceControl(c);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(d.status().message().find("root"), std::string::npos) << d.status().message();
  EXPECT_EQ(FindAts(c).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(FindPcieDeviceControl(c.substr(0, 10)).status().code(), StatusCode::kDataLoss);
}

TEST(PciExpress, MalformedListsAreDataLoss) {
  std::string c(256, '\0');
  c[0x06] = 0x10;
  c[0x34] = 0x40;
  c[0x40] = 0x01;
  c[0x41] = 0x40;  // points at itself
  EXPECT_EQ(FindPcieDeviceControl(c).status().code(), StatusCode::kDataLoss);
  c[0x41] = 0x10;  // into the header
  EXPECT_EQ(FindPcieDeviceControl(c).status().code(), StatusCode::kDataLoss);
  c[0x41] = 0x00;  // ends without PCI Express: conventional PCI
  auto d = FindPcieDeviceControl(c);
  ASSERT_TRUE(d.ok());
  EXPECT_FALSE(d->has_value());
  c[0x06] = 0x00;  // no capability list at all
  EXPECT_FALSE(FindPcieDeviceControl(c)->has_value());
  std::string ones(4096, '\xff');
  EXPECT_FALSE(FindPcieDeviceControl(ones).ok());  // every pointer 0xfc: loops
}

}  // namespace
}  // namespace fabcheck::sys
