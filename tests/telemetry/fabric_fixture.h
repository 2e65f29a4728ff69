// Generates sysroot trees of GPU-node fabrics for the exporter's tests and
// benchmarks: N ConnectX devices laid out as the kernel lays them out
// (class links into /sys/devices, PCI functions below root ports, netdevs,
// counters/ and hw_counters/ with deterministic values), plus planted faults.
// Generated rather than copied so a 16-NIC node or a fault is one line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fabcheck::telemetry::testing {

// An enabled SR-IOV VF of a NIC (a PCI function with a physfn link).
struct VfSpec {
  bool netdev = true;            // false: its netdev is in another network namespace (a pod's)
  bool rdma = true;              // an RDMA device (mlx5_<n>, numbered after the PFs)
  std::string driver = "mlx5_core";  // "" for none bound; "vfio-pci" for DPDK
};

struct NicSpec {
  std::string device;      // "mlx5_0"
  std::string link_layer = "InfiniBand";  // or "Ethernet" (RoCE)
  std::string netdev;      // "ibp24s0" / "ens1f0np0"; "" for none
  std::string rate = "400 Gb/sec (4X NDR)";
  std::string state = "4: ACTIVE";
  std::string phys_state = "5: LinkUp";
  bool pma = true;          // counters/ present
  bool extended = true;     // PortCountersExtended (unicast/multicast files, 64-bit data)
  bool no_pma_text = false;  // counters read "N/A (no PMA)" (old kernels)
  bool rxe = false;         // soft-RoCE: no counters/, rxe hw_counters names
  bool counters_ext = false;  // a pre-v4.5 kernel's counters_ext/ (64-bit set next to legacy counters/)
  std::string garbage_counter;  // a counters/ file whose content is garbage ("" for none)
  bool ethtool_dump = false;    // write /fabcheck/ethtool/<netdev>.txt (mlx5 `ethtool -S` names)
  uint64_t seed = 1;        // counter values derive from it
  int sriov_total_vfs = 0;  // > 0: an SR-IOV PF (sriov_totalvfs; sriov_numvfs = vfs.size())
  std::vector<VfSpec> vfs;  // VF k at bus:00.(k+2), bus:01.x, ...
};

struct FabricSpec {
  std::string hostname = "gpu-node-07";
  std::vector<NicSpec> nics;
};

// A DGX-like node: n NICs mlx5_0..n-1, InfiniBand NDR unless roce.
FabricSpec GpuNode(int nics, bool roce = false);

// Writes the tree under `root` (created; an existing tree is replaced).
void WriteFabric(const std::string& root, const FabricSpec& spec);

// The PCI address WriteFabric gives VF k of NIC index i, and the RDMA
// device name of a VF with rdma (numbered after all PFs, in NIC then VF order).
std::string VfPciAddress(size_t nic_index, size_t vf);
std::string VfRdmaDevice(const FabricSpec& spec, size_t nic_index, size_t vf);

// Values the generator writes, for assertions: the raw file content of a
// counter of NIC index i.
uint64_t CounterValue(const NicSpec& nic, const std::string& file);

// The files WriteFabric puts under counters/ and hw_counters/.
std::vector<std::string> PmaCounterFiles(const NicSpec& nic);
std::vector<std::string> HwCounterFiles(const NicSpec& nic);
std::vector<std::string> CountersExtFiles(const NicSpec& nic);

}  // namespace fabcheck::telemetry::testing
