#include "node_fixture.h"

#include <fmt/format.h>

#include <unistd.h>

#include <fstream>

#include <nlohmann/json.hpp>

namespace fabcheck::checks::testing {

namespace fs = std::filesystem;

std::filesystem::path FixtureTempDir() {
  static const std::filesystem::path dir = [] {
    std::error_code ec;
    if (std::filesystem::is_directory("/dev/shm", ec) && ::access("/dev/shm", W_OK) == 0) {
      return std::filesystem::path("/dev/shm");
    }
    return std::filesystem::temp_directory_path();
  }();
  return dir;
}

namespace {
int Rc(int i) { return 0x10 + i * 0x10; }  // each pair's host bridge bus
}  // namespace

NodeFixture::NodeFixture(const fs::path& dir, const NodeSpec& spec) : dir_(dir), spec_(spec) {
  fs::remove_all(dir_);
  Build();
}

NodeFixture::~NodeFixture() {
  std::error_code ignored;
  fs::remove_all(dir_, ignored);
}

void NodeFixture::Write(const std::string& rel, const std::string& content) {
  fs::create_directories((dir_ / rel).parent_path());
  std::ofstream(dir_ / rel, std::ios::binary | std::ios::trunc) << content;
}
void NodeFixture::WriteBinary(const std::string& rel, const std::string& bytes) { Write(rel, bytes); }
void NodeFixture::Remove(const std::string& rel) { fs::remove_all(dir_ / rel); }
void NodeFixture::Link(const std::string& rel, const std::string& target) {
  fs::create_directories((dir_ / rel).parent_path());
  fs::remove(dir_ / rel);
  fs::create_symlink(target, dir_ / rel);
}

std::string NodeFixture::GpuBdf(int i) const { return fmt::format("0000:{:02x}:00.0", Rc(i) + 3); }
std::string NodeFixture::NicBdf(int i) const { return fmt::format("0000:{:02x}:00.0", Rc(i) + 4); }
std::string NodeFixture::DownstreamBdf(int i, int which) const { return fmt::format("0000:{:02x}:{:02x}.0", Rc(i) + 2, which); }
std::string NodeFixture::GpuPci(int i) const { return "sys/bus/pci/devices/" + GpuBdf(i); }
std::string NodeFixture::NicPci(int i) const { return "sys/bus/pci/devices/" + NicBdf(i); }
std::string NodeFixture::PortDir(int nic, int port) const {
  return fmt::format("sys/class/infiniband/mlx5_{}/ports/{}", nic, port);
}
std::string NodeFixture::Netdev(int i) const {
  return spec_.roce ? fmt::format("ens{}f0np0", Rc(i) + 4) : fmt::format("ibp{}s0", Rc(i) + 4);
}
std::string NodeFixture::NetDir(int i) const { return "sys/class/net/" + Netdev(i); }

std::string NodeFixture::ConfigSpaceWithAcs(uint16_t cap, uint16_t ctl) {
  std::string c(4096, '\0');
  // Standard header: vendor 0x1000 (Broadcom/PLX), device 0xc030, class 0x060400.
  c[0] = 0x00; c[1] = 0x10; c[2] = 0x30; c[3] = static_cast<char>(0xc0);
  c[0x0a] = 0x04; c[0x0b] = 0x06;
  // Extended capabilities: AER (id 0x0001) at 0x100 -> ACS (0x000D) at 0x148 -> end.
  auto put32 = [&](size_t at, uint32_t v) {
    for (int b = 0; b < 4; ++b) c[at + b] = static_cast<char>((v >> (8 * b)) & 0xff);
  };
  put32(0x100, 0x0001u | (0x2u << 16) | (0x148u << 20));
  put32(0x148, 0x000Du | (0x1u << 16) | (0x000u << 20));
  c[0x14c] = static_cast<char>(cap & 0xff); c[0x14d] = static_cast<char>(cap >> 8);
  c[0x14e] = static_cast<char>(ctl & 0xff); c[0x14f] = static_cast<char>(ctl >> 8);
  return c;
}

uint16_t NodeFixture::DevCtl(int mps, int mrrs, bool relaxed_ordering) {
  auto code = [](int bytes) {
    int n = 0;
    while ((128 << n) < bytes && n < 5) ++n;
    return n;
  };
  // Error reporting (NonFatal, Fatal, UnsupReq), ExtTag and NoSnoop on, as mlx5 and nvidia leave them.
  uint16_t v = 0x000e | (1u << 8) | (1u << 11);
  if (relaxed_ordering) v |= 1u << 4;
  v |= static_cast<uint16_t>(code(mps) << 5);
  v |= static_cast<uint16_t>(code(mrrs) << 12);
  return v;
}

std::string NodeFixture::EndpointConfigSpace(uint16_t vendor, uint16_t device, int mps_supported, uint16_t devctl,
                                             int ats_control) {
  std::string c(4096, '\0');
  auto put16 = [&](size_t at, uint16_t v) {
    c[at] = static_cast<char>(v & 0xff);
    c[at + 1] = static_cast<char>(v >> 8);
  };
  auto put32 = [&](size_t at, uint32_t v) {
    for (int b = 0; b < 4; ++b) c[at + b] = static_cast<char>((v >> (8 * b)) & 0xff);
  };
  put16(0x00, vendor);
  put16(0x02, device);
  put16(0x06, 0x0010);  // status: capability list
  c[0x34] = 0x40;
  c[0x40] = 0x01; c[0x41] = 0x50;  // power management -> MSI-X
  c[0x50] = 0x11; c[0x51] = 0x60;  // MSI-X -> PCI Express (last)
  c[0x60] = 0x10; c[0x61] = 0x00;
  put16(0x62, 0x0002);  // version 2, endpoint
  int mps_code = 0;
  while ((128 << mps_code) < mps_supported && mps_code < 5) ++mps_code;
  put32(0x64, 0x10008000u | static_cast<uint32_t>(mps_code));  // DevCap: RBER, FLR, MPS supported
  put16(0x68, devctl);
  // Extended: AER at 0x100, then ATS at 0x150 when present.
  put32(0x100, 0x0001u | (0x2u << 16) | (ats_control >= 0 ? (0x150u << 20) : 0u));
  if (ats_control >= 0) {
    put32(0x150, 0x000Fu | (0x1u << 16));
    put16(0x154, 0x0020);  // ATS capability: page aligned requests
    put16(0x156, static_cast<uint16_t>(ats_control));
  }
  return c;
}

int NodeFixture::NicIrq(int nic, int vector) const { return 100 + 8 * nic + vector; }

std::string NodeFixture::NodeCpus(int numa) const { return numa == 0 ? "0-55,112-167" : "56-111,168-223"; }

void NodeFixture::SetIrqAffinity(int irq, const std::string& cpus) {
  Write("proc/irq/" + std::to_string(irq) + "/smp_affinity_list", cpus + "\n");
}

void NodeFixture::SetGovernor(int first_cpu, int last_cpu, const std::string& governor) {
  for (int cpu = first_cpu; cpu <= last_cpu; ++cpu) {
    Write(fmt::format("sys/devices/system/cpu/cpu{}/cpufreq/scaling_governor", cpu), governor + "\n");
  }
}

void NodeFixture::SetCpusAllowed(const std::string& cpus) {
  Write("proc/self/status", "Name:\tfabcheck\nUmask:\t0022\nState:\tR (running)\nCapInh:\t0000000000000000\n"
                            "CapPrm:\t000001ffffffffff\nCapEff:\t000001ffffffffff\nCapBnd:\t000001ffffffffff\n"
                            "Cpus_allowed_list:\t" + cpus + "\nMems_allowed_list:\t0-1\n");
  Write("sys/fs/cgroup/system.slice/fabcheck.service/cpuset.cpus.effective", cpus + "\n");
}

void NodeFixture::BuildHost() {
  const int numa_nodes = 2;
  for (int n = 0; n < numa_nodes; ++n) {
    std::string node = fmt::format("sys/devices/system/node/node{}", n);
    Write(node + "/cpulist", NodeCpus(n) + "\n");
    Write(node + "/hugepages/hugepages-2048kB/nr_hugepages", "2048\n");
    Write(node + "/hugepages/hugepages-2048kB/free_hugepages", "2000\n");
    Write(node + "/hugepages/hugepages-1048576kB/nr_hugepages", "0\n");
    Write(node + "/hugepages/hugepages-1048576kB/free_hugepages", "0\n");
  }
  Write("sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages", "4096\n");
  Write("sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages", "4000\n");
  Write("sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages", "0\n");
  Write("sys/kernel/mm/hugepages/hugepages-1048576kB/free_hugepages", "0\n");
  Write("sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never\n");
  Write("proc/sys/kernel/numa_balancing", "0\n");

  // CPUs: performance governor, C6 disabled (a tuned node).
  Write("sys/devices/system/cpu/online", fmt::format("0-{}\n", kCpus - 1));
  Write("sys/devices/system/cpu/cpuidle/current_driver", "intel_idle\n");
  SetGovernor(0, kCpus - 1, "performance");
  for (int cpu = 0; cpu < kCpus; ++cpu) {
    std::string dir = fmt::format("sys/devices/system/cpu/cpu{}", cpu);
    Write(dir + "/cpufreq/scaling_driver", "intel_pstate\n");
    const struct {
      const char* name;
      int latency;
      int disable;
    } states[] = {{"POLL", 0, 0}, {"C1", 2, 0}, {"C6", 170, 1}};
    for (int k = 0; k < 3; ++k) {
      std::string st = dir + "/cpuidle/state" + std::to_string(k);
      Write(st + "/name", std::string(states[k].name) + "\n");
      Write(st + "/latency", std::to_string(states[k].latency) + "\n");
      Write(st + "/disable", std::to_string(states[k].disable) + "\n");
    }
  }

  // /proc/interrupts: the timer, each NIC's mlx5_async0 and mlx5_comp0..3, and
  // the architecture rows. Even NICs in the chip style of Linux >= 6.2
  // ("PCI-MSIX-<bdf>"), odd ones in the older "IR-PCI-MSI <hwirq>" style.
  std::string text = "      ";
  for (int cpu = 0; cpu < kCpus; ++cpu) text += fmt::format(" {:>10}", fmt::format("CPU{}", cpu));
  text += "\n";
  auto row = [&](const std::string& label, int hot_cpu, const std::string& tail) {
    text += fmt::format("{:>4}:", label);
    for (int cpu = 0; cpu < kCpus; ++cpu) text += fmt::format(" {:>10}", cpu == hot_cpu ? 123456 : 0);
    text += " " + tail + "\n";
  };
  row("0", 0, " IO-APIC   2-edge      timer");
  SetIrqAffinity(0, fmt::format("0-{}", kCpus - 1));
  for (int i = 0; i < spec_.pairs; ++i) {
    int numa = i < spec_.pairs / 2 ? 0 : 1;
    int first_local = numa == 0 ? 0 : 56;
    for (int k = 0; k < kVectorsPerNic; ++k) {
      int irq = NicIrq(i, k);
      std::string action = (k == 0 ? std::string("mlx5_async0") : fmt::format("mlx5_comp{}", k - 1)) + "@pci:" +
                           NicBdf(i);
      std::string chip = i % 2 == 0 ? fmt::format("PCI-MSIX-{} {}-edge", NicBdf(i), k)
                                    : fmt::format("IR-PCI-MSI {}-edge", (Rc(i) + 4) * 524288 + k);
      int cpu = k == 0 ? first_local : first_local + k - 1;
      row(std::to_string(irq), cpu, chip + "      " + action);
      SetIrqAffinity(irq, k == 0 ? NodeCpus(numa) : std::to_string(cpu));
    }
  }
  text += fmt::format("{:>4}:", "NMI");
  for (int cpu = 0; cpu < kCpus; ++cpu) text += fmt::format(" {:>10}", 3);
  text += "   Non-maskable interrupts\n";
  text += fmt::format("{:>4}:", "LOC");
  for (int cpu = 0; cpu < kCpus; ++cpu) text += fmt::format(" {:>10}", 99999);
  text += "   Local timer interrupts\n";
  text += " ERR:          0\n MIS:          0\n";
  Write("proc/interrupts", text);

  // irqbalance stopped and disabled (the NIC vectors are pinned by hand);
  // the process and its service run on every CPU.
  Write("proc/1/comm", "systemd\n");
  Write("proc/1042/comm", "sshd\n");
  Write("etc/systemd/system/multi-user.target.wants/ssh.service", "");
  SetCpusAllowed(fmt::format("0-{}", kCpus - 1));

  // PCIe config space of the NICs (MPS 256 of 512, MRRS 4096, relaxed
  // ordering, ATS present but off) and GPUs (MPS 256, MRRS 4096, RO on).
  for (int i = 0; i < spec_.pairs; ++i) {
    Write(NicPci(i) + "/config", EndpointConfigSpace(0x15b3, 0x1021, 512, DevCtl(256, 4096, true), 0x0000));
    Write(GpuPci(i) + "/config", EndpointConfigSpace(0x10de, 0x2335, 256, DevCtl(256, 4096, true)));
  }
}

void NodeFixture::AddFunction(const std::string& devpath, const std::string& cls, const std::string& vendor,
                              const std::string& device, int numa, const std::string& speed, int width) {
  std::string dir = "sys/devices/" + devpath;
  Write(dir + "/class", cls + "\n");
  Write(dir + "/vendor", vendor + "\n");
  Write(dir + "/device", device + "\n");
  Write(dir + "/numa_node", std::to_string(numa) + "\n");
  Write(dir + "/local_cpulist", numa == 0 ? "0-55,112-167\n" : "56-111,168-223\n");
  Write(dir + "/current_link_speed", speed + "\n");
  Write(dir + "/max_link_speed", speed + "\n");
  Write(dir + "/current_link_width", std::to_string(width) + "\n");
  Write(dir + "/max_link_width", std::to_string(width) + "\n");
  std::string bdf = devpath.substr(devpath.rfind('/') + 1);
  Link("sys/bus/pci/devices/" + bdf, "../../../devices/" + devpath);
}

void NodeFixture::Build() {
  const std::string gen5 = "32.0 GT/s PCIe";
  // Management NIC on socket 0, carrying the default route.
  AddFunction("pci0000:00/0000:00:1f.6", "0x020000", "0x8086", "0x15bb", 0, "2.5 GT/s PCIe", 1);
  Write("sys/devices/pci0000:00/0000:00:1f.6/net/eno1/mtu", "1500\n");
  Write("sys/devices/pci0000:00/0000:00:1f.6/net/eno1/operstate", "up\n");
  Write("sys/devices/pci0000:00/0000:00:1f.6/net/eno1/carrier", "1\n");
  Write("sys/devices/pci0000:00/0000:00:1f.6/net/eno1/type", "1\n");
  Link("sys/devices/pci0000:00/0000:00:1f.6/net/eno1/device", "../../../0000:00:1f.6");
  Link("sys/class/net/eno1", "../../devices/pci0000:00/0000:00:1f.6/net/eno1");
  Write("sys/devices/virtual/net/lo/mtu", "65536\n");
  Write("sys/devices/virtual/net/lo/operstate", "unknown\n");
  Write("sys/devices/virtual/net/lo/carrier", "1\n");
  Link("sys/class/net/lo", "../../devices/virtual/net/lo");
  ipv4_.push_back({"eno1", "192.168.1.10/24"});
  ipv4_.push_back({"lo", "127.0.0.1/8"});

  for (int i = 0; i < spec_.pairs; ++i) {
    int numa = i < spec_.pairs / 2 ? 0 : 1;
    int rc = Rc(i);
    std::string root_port = fmt::format("pci0000:{:02x}/0000:{:02x}:01.0", rc, rc);
    std::string upstream = root_port + fmt::format("/0000:{:02x}:00.0", rc + 1);
    std::string down_gpu = upstream + "/" + DownstreamBdf(i, 0);
    std::string down_nic = upstream + "/" + DownstreamBdf(i, 1);
    AddFunction(root_port, "0x060400", "0x8086", "0x352a", numa, gen5, 16);
    AddFunction(upstream, "0x060400", "0x1000", "0xc030", numa, gen5, 16);
    AddFunction(down_gpu, "0x060400", "0x1000", "0xc030", numa, gen5, 16);
    AddFunction(down_nic, "0x060400", "0x1000", "0xc030", numa, gen5, 16);
    for (const auto& b : {root_port, upstream, down_gpu, down_nic}) {
      Write("sys/devices/" + b + "/config", ConfigSpaceWithAcs(0x005f, 0x0000));
    }
    std::string gpu = down_gpu + "/" + GpuBdf(i);
    AddFunction(gpu, "0x030200", "0x10de", "0x2335", numa, gen5, 16);
    std::string nic = down_nic + "/" + NicBdf(i);
    AddFunction(nic, spec_.roce ? "0x020000" : "0x020700", "0x15b3", "0x1021", numa, gen5, 16);

    std::string dev = fmt::format("mlx5_{}", i);
    std::string ib = "sys/devices/" + nic + "/infiniband/" + dev;
    Link(ib + "/device", "../../../" + NicBdf(i));
    Link("sys/class/infiniband/" + dev, "../../devices/" + nic + "/infiniband/" + dev);
    Write(ib + "/fw_ver", "28.39.1002\n");
    Write(ib + "/hca_type", "MT4129\n");
    Write(ib + "/node_type", "1: CA\n");
    Write(ib + "/node_guid", fmt::format("b859:9f03:00d4:{:04x}\n", i));
    std::string port = ib + "/ports/1";
    Write(port + "/state", "4: ACTIVE\n");
    Write(port + "/phys_state", "5: LinkUp\n");
    Write(port + "/rate", spec_.roce ? "400 Gb/sec (4X NDR)\n" : "400 Gb/sec (4X NDR)\n");
    Write(port + "/link_layer", spec_.roce ? "Ethernet\n" : "InfiniBand\n");
    std::string uverbs = fmt::format("uverbs{}", i);
    Write("sys/devices/" + nic + "/infiniband_verbs/" + uverbs + "/ibdev", dev + "\n");
    Link("sys/class/infiniband_verbs/" + uverbs, "../../devices/" + nic + "/infiniband_verbs/" + uverbs);
    Write("dev/infiniband/" + uverbs, "");

    std::string nd = Netdev(i);
    std::string net = "sys/devices/" + nic + "/net/" + nd;
    Link(net + "/device", "../../../" + NicBdf(i));
    Link("sys/class/net/" + nd, "../../devices/" + nic + "/net/" + nd);
    Write(net + "/mtu", spec_.roce ? "9000\n" : "4092\n");
    Write(net + "/operstate", "up\n");
    Write(net + "/carrier", "1\n");
    Write(net + "/dev_port", "0\n");
    Write(net + "/type", spec_.roce ? "1\n" : "32\n");
    std::string ip = fmt::format("10.{}.0.5", i);
    ipv4_.push_back({nd, ip + "/24"});
    std::string mac_tail = fmt::format("{:04x}", i);
    if (spec_.roce) {
      // mlx5 order: v1/v2 link-local, then v1/v2 per IPv4 address.
      std::string ll = "fe80:0000:0000:0000:ba59:9fff:fed4:" + mac_tail;
      std::string v4 = fmt::format("0000:0000:0000:0000:0000:ffff:0a{:02x}:0005", i);
      const std::pair<std::string, std::string> table[] = {
          {ll, "IB/RoCE v1"}, {ll, "RoCE v2"}, {v4, "IB/RoCE v1"}, {v4, "RoCE v2"}};
      for (int g = 0; g < 4; ++g) {
        Write(port + "/gids/" + std::to_string(g), table[g].first + "\n");
        Write(port + "/gid_attrs/types/" + std::to_string(g), table[g].second + "\n");
        Write(port + "/gid_attrs/ndevs/" + std::to_string(g), nd + "\n");
      }
      Write(port + "/gids/4", "0000:0000:0000:0000:0000:0000:0000:0000\n");
      if (spec_.with_dcb) SetDcb(i, 0x08, true);
      if (spec_.with_ecn) {
        for (int p = 0; p < 8; ++p) {
          Write(net + "/ecn/roce_np/enable/" + std::to_string(p), p == 3 ? "1\n" : "0\n");
          Write(net + "/ecn/roce_rp/enable/" + std::to_string(p), p == 3 ? "1\n" : "0\n");
        }
      }
    } else {
      Write(port + "/gids/0", "fe80:0000:0000:0000:b859:9f03:00d4:" + mac_tail + "\n");
      Write(port + "/gids/1", "0000:0000:0000:0000:0000:0000:0000:0000\n");
      Write(port + "/lid", fmt::format("{:#x}\n", 0x10 + i));
      Write(port + "/sm_lid", "0x1\n");
    }
  }
  Write("proc/sys/kernel/hostname", "dgx-test-01\n");
  Write("proc/sys/kernel/osrelease", "6.8.0-45-generic\n");
  Write("proc/cmdline", "BOOT_IMAGE=/vmlinuz root=/dev/nvme0n1p2 intel_iommu=on iommu=pt\n");
  Write("proc/modules",
        "nvidia_peermem 16384 0 - Live 0x0000000000000000 (OE)\n"
        "mlx5_ib 491520 0 - Live 0x0000000000000000\n"
        "ib_uverbs 200704 2 nvidia_peermem,mlx5_ib, Live 0x0000000000000000\n");
  Write("sys/module/nvidia_peermem/version", "550.90.07\n");
  Write("proc/driver/nvidia/version",
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.90.07  Fri May 31 09:35:42 UTC 2024\n");
  Write("proc/self/limits",
        "Limit                     Soft Limit           Hard Limit           Units     \n"
        "Max cpu time              unlimited            unlimited            seconds   \n"
        "Max locked memory         unlimited            unlimited            bytes     \n"
        "Max open files            1048576              1048576              files     \n");
  Write("proc/self/status", "Name:\tfabcheck\nUmask:\t0022\nState:\tR (running)\nCapInh:\t0000000000000000\n"
                            "CapPrm:\t000001ffffffffff\nCapEff:\t000001ffffffffff\nCapBnd:\t000001ffffffffff\n");
  Write("proc/self/cgroup", "0::/system.slice/fabcheck.service\n");
  Write("proc/net/route",
        "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
        "eno1\t00000000\t0101A8C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n"
        "eno1\t0001A8C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n");
  if (spec_.with_addresses) WriteAddresses();
  if (spec_.with_host) BuildHost();
  // Marks the tree as holding the doctor's evidence (as `fabcheck snapshot` does).
  Write("fabcheck/doctor/evidence.json", "{\"reader\": \"doctor\"}\n");
  if (spec_.with_host) Write("fabcheck/doctor/host-evidence.json", "{\"reader\": \"doctor\", \"host\": true}\n");
}

void NodeFixture::WriteAddresses() {
  nlohmann::json interfaces = nlohmann::json::object();
  for (const auto& [nd, cidr] : ipv4_) {
    if (cidr.empty()) continue;
    auto slash = cidr.find('/');
    interfaces[nd].push_back(
        {{"family", "inet"}, {"address", cidr.substr(0, slash)}, {"prefix_len", std::stoi(cidr.substr(slash + 1))}});
  }
  Write("fabcheck/addresses.json", nlohmann::json{{"interfaces", interfaces}}.dump(1));
}

void NodeFixture::SetIpv4(int nic, const std::string& cidr) {
  for (auto& [nd, c] : ipv4_) {
    if (nd == Netdev(nic)) c = cidr;
  }
  WriteAddresses();
}

void NodeFixture::SetDcb(int nic, int pfc_en, bool dscp_trust) {
  nlohmann::json j = {{"pfc_cap", 8}, {"pfc_en", pfc_en}};
  j["apps"] = nlohmann::json::array();
  if (dscp_trust) {
    for (int dscp : {24, 26}) j["apps"].push_back({{"selector", 5}, {"priority", 3}, {"protocol", dscp}});
  }
  Write("fabcheck/doctor/dcb/" + Netdev(nic), j.dump(1));
}

}  // namespace fabcheck::checks::testing
