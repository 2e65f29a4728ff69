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
  // Marks the tree as holding the doctor's evidence (as `fabcheck snapshot` does).
  Write("fabcheck/doctor/evidence.json", "{\"reader\": \"doctor\"}\n");
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
