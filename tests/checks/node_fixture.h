// A generator of node sysroots for the doctor tests: a DGX-class node (one
// PCIe switch per GPU-NIC pair, two sockets) with InfiniBand or RoCE NICs,
// laid out as the kernel lays out sysfs (class links into /sys/devices,
// relative device links), plus the /proc files and capture metadata the
// checks read. Healthy by default; tests plant one fault by overwriting a file.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace fabcheck::checks::testing {

struct NodeSpec {
  int pairs = 8;                 // GPU + NIC pairs, one PCIe switch each; half on each socket
  bool roce = false;             // Ethernet link layer (RoCE) instead of InfiniBand
  bool with_dcb = true;          // record dcbnl answers (PFC on priority 3, DSCP trust) for RoCE
  bool with_ecn = true;          // OFED ecn/ files for RoCE
  bool with_addresses = true;    // /fabcheck/addresses.json
  // Host tuning as a tuned node has it: NUMA nodes, /proc/interrupts with each
  // NIC's mlx5 vectors pinned to its local CPUs, the performance governor, C6
  // disabled, 2 MiB HugePages, THP madvise, NUMA balancing off, PCIe config
  // space with MPS 256 / MRRS 4096 / relaxed ordering on the NICs and GPUs, a
  // process allowed on every CPU. Off: none of these files exist.
  bool with_host = true;
};

// Where fixtures go: /dev/shm when writable (thousands of small files; on a
// busy build disk /tmp makes each fixture take seconds), else the temp dir.
std::filesystem::path FixtureTempDir();

class NodeFixture {
 public:
  NodeFixture(const std::filesystem::path& dir, const NodeSpec& spec);
  ~NodeFixture();
  NodeFixture(const NodeFixture&) = delete;
  NodeFixture& operator=(const NodeFixture&) = delete;

  std::string root() const { return dir_.string(); }
  const NodeSpec& spec() const { return spec_; }

  // Plant faults.
  void Write(const std::string& rel, const std::string& content);
  void WriteBinary(const std::string& rel, const std::string& bytes);
  void Remove(const std::string& rel);
  void Link(const std::string& rel, const std::string& target);

  // Where things are (live-style paths, without a leading '/').
  std::string PortDir(int nic, int port = 1) const;  // sys/class/infiniband/mlx5_N/ports/1
  std::string NicPci(int i) const;                    // sys/bus/pci/devices/<bdf>
  std::string GpuPci(int i) const;
  std::string NicBdf(int i) const;
  std::string GpuBdf(int i) const;
  std::string DownstreamBdf(int i, int which) const;  // 0: GPU side, 1: NIC side
  std::string Netdev(int i) const;                    // ibp..s0 / ens..np0
  std::string NetDir(int i) const;                    // sys/class/net/<netdev>
  // Rewrites /fabcheck/addresses.json from `addresses_`.
  void SetIpv4(int nic, const std::string& cidr);  // "" removes
  void SetDcb(int nic, int pfc_en, bool dscp_trust);
  // A PCIe bridge config space with an ACS capability (ctl = enabled bits).
  static std::string ConfigSpaceWithAcs(uint16_t cap, uint16_t ctl);
  // An endpoint's config space (4096 bytes): PM and MSI-X capabilities, then
  // PCI Express with DevCap MPS `mps_supported` and DevCtl `devctl`; an ATS
  // extended capability when `ats_control` >= 0.
  static std::string EndpointConfigSpace(uint16_t vendor, uint16_t device, int mps_supported, uint16_t devctl,
                                         int ats_control = -1);
  // Device Control bits for MPS, MRRS (bytes) and relaxed ordering.
  static uint16_t DevCtl(int mps, int mrrs, bool relaxed_ordering);

  // Host tuning (with_host).
  static constexpr int kCpus = 224;              // 2 sockets x 56 cores x 2 threads
  static constexpr int kVectorsPerNic = 5;       // mlx5_async0 + mlx5_comp0..3
  int NicIrq(int nic, int vector) const;         // 100 + 8 * nic + vector
  std::string NodeCpus(int numa) const;          // "0-55,112-167" / "56-111,168-223"
  void SetIrqAffinity(int irq, const std::string& cpus);
  void SetGovernor(int first_cpu, int last_cpu, const std::string& governor);
  void SetCpusAllowed(const std::string& cpus);

 private:
  void Build();
  void AddFunction(const std::string& devpath, const std::string& cls, const std::string& vendor,
                   const std::string& device, int numa, const std::string& speed, int width);
  void WriteAddresses();
  void BuildHost();

  std::filesystem::path dir_;
  NodeSpec spec_;
  std::vector<std::pair<std::string, std::string>> ipv4_;  // netdev -> cidr
};

}  // namespace fabcheck::checks::testing
