// Inventory: what is on one node, as `fabcheck inventory` reads it.
//
// RDMA devices and their ports (state, rate, GID table, netdev), network
// interfaces with their addresses, GPUs, NVSwitches and NICs with their PCIe
// path and link speed, NUMA nodes, and the GPU x NIC distance matrix with the
// recommended GPU -> NIC pairing (rails).
//
// Plain values with JSON ("schema": "fabcheck.inventory/v1"), so doctor,
// diagnose, report and the exporter work on an inventory saved on another
// node. A field the reader could not read (missing file, garbage) is empty or
// std::nullopt ("unknown"; null in JSON) and a Warning names the file; it is
// never a made-up default. Later versions of v1 only ADD fields.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fabcheck::model {

inline constexpr std::string_view kInventorySchema = "fabcheck.inventory/v1";

// Something that could not be read or parsed; the field it feeds is unknown.
struct InventoryWarning {
  std::string path;     // live-style path, "/sys/class/infiniband/mlx5_0/ports/1/rate"
  std::string message;  // "unparsable rate 'garbage'", "ENOENT"
};

// A PCIe link as the device's sysfs attributes report it.
struct PciLink {
  std::optional<double> current_speed_gts;  // 32.0 (Gen5)
  std::optional<double> max_speed_gts;
  std::optional<int> current_width;  // 16
  std::optional<int> max_width;
  // True when current < max in speed or width (only when all four are known).
  bool Degraded() const;
};

// One hop between a device and its root complex, listed from the root down.
struct PciBridge {
  std::string bdf;        // "0000:15:01.0"
  std::string vendor_id;  // "0x1000"
  std::string device_id;
  std::string class_code;  // "0x060400"
  // "root_port", "switch_upstream", "switch_downstream" or "bridge" (from the
  // PCIe capability when readable, else from the position in the path).
  std::string role;
  PciLink link;
};

// A PCI function (GPU, NIC, NVSwitch) with its place in the PCIe tree.
struct PciFunction {
  std::string bdf;  // "0000:18:00.0", lower case, 4-digit domain
  std::string vendor_id;  // "0x10de"
  std::string device_id;  // "0x2330"
  std::string class_code;  // "0x030200"
  std::string subsystem_vendor_id;
  std::string subsystem_device_id;
  std::string driver;  // "mlx5_core", "nvidia" (basename of the driver link); empty when unbound
  std::optional<int> numa_node;  // nullopt when unknown or -1 (no affinity reported)
  std::string local_cpulist;     // "0-47,96-143"
  std::string root_complex;      // "pci0000:15": the host bridge the device hangs below
  std::vector<PciBridge> path;   // bridges from the root port down to the device
  PciLink link;
  std::string sysfs_path;  // resolved device path, "/sys/devices/pci0000:15/.../0000:18:00.0"
};

struct IpAddress {
  std::string family;  // "inet" or "inet6"
  std::string address;  // "10.0.10.5", "fe80::ba59:9fff:fed4:4a2e"
  int prefix_len = 0;
};

// /sys/class/net/<name> plus its addresses.
struct NetDevice {
  std::string name;
  std::optional<int> mtu;
  std::string operstate;  // "up", "down", ... (empty when unknown)
  std::optional<bool> carrier;
  std::optional<int64_t> speed_mbps;  // nullopt when unknown or -1
  std::string mac;                    // "address"
  std::optional<int> type;            // ARPHRD: 1 Ethernet, 32 InfiniBand
  std::optional<int> dev_port;
  std::string pci_bdf;       // the PCI function behind it (empty for virtual interfaces)
  std::string vlan_parent;   // lower device of a VLAN interface ("" when not a VLAN)
  std::optional<int> vlan_id;
  std::vector<std::string> rdma_devices;  // "mlx5_0" (RDMA devices of the same PCI function)
  std::vector<IpAddress> addresses;
  bool addresses_known = false;  // false: no address data (offline sysroot without them)
};

struct GidEntry {
  int index = 0;
  std::string gid;      // as sysfs prints it: 8 groups of 4 hex digits
  std::string type;     // "IB/RoCE v1", "RoCE v2" or "" (IB ports, unreadable)
  std::string netdev;   // gid_attrs/ndevs/<i> ("" on IB ports)
  std::string ip;       // the address it encodes: "10.0.10.5" (IPv4-mapped) or IPv6 text
  bool ipv4 = false;    // IPv4-mapped ::ffff:a.b.c.d
  bool link_local = false;  // fe80::/64
};

struct RdmaPort {
  int port = 0;
  std::optional<int> state_code;  // 4
  std::string state;              // "ACTIVE"
  std::optional<int> phys_state_code;  // 5
  std::string phys_state;              // "LinkUp"
  std::string rate_text;                // as read: "400 Gb/sec (4X NDR)"
  std::optional<double> rate_gbps;      // 400
  std::optional<int> width;             // 4
  std::string speed_name;               // "NDR"
  std::string link_layer;               // "InfiniBand", "Ethernet" (empty when unknown)
  std::optional<uint32_t> lid;          // IB only
  std::optional<uint32_t> sm_lid;
  std::vector<GidEntry> gids;  // non-empty entries only (all-zero slots skipped)
  // The GID index NCCL would pick by default (NCCL_IB_GID_INDEX unset):
  // 0 on InfiniBand; on RoCE the first RoCE v2, IPv4, non-link-local entry;
  // nullopt when there is none (a RoCE port without IPv4 address: NCCL fails).
  std::optional<int> nccl_gid_index;
  std::string netdev;  // the ibdev2netdev mapping ("" when none)
};

struct RdmaDevice {
  std::string name;  // "mlx5_0"
  std::string node_type;  // "1: CA"
  std::string node_guid;  // "b859:9f03:00d4:4a2e"
  std::string sys_image_guid;
  std::string fw_ver;
  std::string hca_type;  // "MT4129"
  std::string board_id;  // "MT_0000000838"
  std::string pci_bdf;
  std::optional<int> numa_node;
  std::string local_cpulist;
  std::vector<RdmaPort> ports;
};

// What libibverbs said when asked for devices (live nodes; recorded in captures).
struct VerbsProbe {
  bool probed = false;         // false: not asked (offline sysroot without a record)
  bool ok = false;             // ibv_get_device_list returned a list
  int device_count = 0;
  int error_number = 0;        // errno when it failed (38 = ENOSYS: no RDMA support in the kernel)
  std::string message;         // "ibv_get_device_list failed: ENOSYS (...)" or "2 devices"
};

struct Gpu {
  int index = 0;  // position by PCI address (what CUDA_DEVICE_ORDER=PCI_BUS_ID gives)
  PciFunction pci;
  // From NVML when the library was loaded on the node (empty when unknown).
  std::string name;  // "NVIDIA H200"
  std::string uuid;  // "GPU-..."
};

struct NvSwitch {
  int index = 0;
  PciFunction pci;
};

// A network PCI function (class 0x02xxxx): ConnectX, virtio-net...
struct Nic {
  PciFunction pci;
  std::vector<std::string> rdma_devices;  // "mlx5_0"
  std::vector<std::string> netdevs;       // "ibp24s0"
  // Short name for tables: the first RDMA device, else the first netdev, else the BDF.
  std::string label;
};

struct NumaNode {
  int id = 0;
  std::string cpulist;  // "0-55,112-167"
  int cpu_count = 0;
};

// nvidia-smi topo -m classes (reference/rdma-facts.md §1.8).
enum class PathType { kUnknown, kPix, kPxb, kPhb, kNode, kSys };
std::string_view PathTypeName(PathType type);  // "PIX", ..., "?" for unknown
std::optional<PathType> ParsePathType(std::string_view name);

struct RailPair {
  int gpu = 0;        // Gpu::index
  std::string nic;    // Nic::label
  PathType distance = PathType::kUnknown;
  bool shared = false;  // the NIC also serves another GPU (fewer NICs than GPUs)
};

struct Topology {
  std::vector<std::string> gpus;  // "GPU0"... (rows)
  std::vector<std::string> nics;  // Nic::label (columns)
  std::vector<std::vector<PathType>> distance;  // [gpu][nic]
  std::vector<RailPair> rails;  // one per GPU
};

struct HostInfo {
  std::string hostname;  // /proc/sys/kernel/hostname
  std::string kernel;    // /proc/sys/kernel/osrelease
  std::string nvidia_driver;  // from NVML ("580.159.04"); empty when unknown
};

struct Inventory {
  std::string schema{kInventorySchema};
  // Where it was read: "live node", "capture x.tar.gz". Not compared by tests
  // (it names a path); everything else is a pure function of the sysroot.
  std::string source;
  HostInfo host;
  VerbsProbe verbs;
  bool rdma_sysfs_present = false;  // /sys/class/infiniband exists
  std::vector<RdmaDevice> rdma_devices;
  std::vector<NetDevice> netdevs;
  std::vector<Gpu> gpus;
  std::vector<NvSwitch> nvswitches;
  std::vector<Nic> nics;
  std::vector<NumaNode> numa_nodes;
  Topology topology;
  std::vector<InventoryWarning> warnings;

  // Lookups for consumers; nullptr when absent.
  const RdmaDevice* FindRdmaDevice(std::string_view name) const;
  const NetDevice* FindNetDevice(std::string_view name) const;
  const Nic* FindNic(std::string_view label_or_bdf) const;
};

void to_json(nlohmann::json& j, const InventoryWarning& v);
void from_json(const nlohmann::json& j, InventoryWarning& v);
void to_json(nlohmann::json& j, const PciLink& v);
void from_json(const nlohmann::json& j, PciLink& v);
void to_json(nlohmann::json& j, const PciBridge& v);
void from_json(const nlohmann::json& j, PciBridge& v);
void to_json(nlohmann::json& j, const PciFunction& v);
void from_json(const nlohmann::json& j, PciFunction& v);
void to_json(nlohmann::json& j, const IpAddress& v);
void from_json(const nlohmann::json& j, IpAddress& v);
void to_json(nlohmann::json& j, const NetDevice& v);
void from_json(const nlohmann::json& j, NetDevice& v);
void to_json(nlohmann::json& j, const GidEntry& v);
void from_json(const nlohmann::json& j, GidEntry& v);
void to_json(nlohmann::json& j, const RdmaPort& v);
void from_json(const nlohmann::json& j, RdmaPort& v);
void to_json(nlohmann::json& j, const RdmaDevice& v);
void from_json(const nlohmann::json& j, RdmaDevice& v);
void to_json(nlohmann::json& j, const VerbsProbe& v);
void from_json(const nlohmann::json& j, VerbsProbe& v);
void to_json(nlohmann::json& j, const Gpu& v);
void from_json(const nlohmann::json& j, Gpu& v);
void to_json(nlohmann::json& j, const NvSwitch& v);
void from_json(const nlohmann::json& j, NvSwitch& v);
void to_json(nlohmann::json& j, const Nic& v);
void from_json(const nlohmann::json& j, Nic& v);
void to_json(nlohmann::json& j, const NumaNode& v);
void from_json(const nlohmann::json& j, NumaNode& v);
void to_json(nlohmann::json& j, const PathType& v);
void from_json(const nlohmann::json& j, PathType& v);
void to_json(nlohmann::json& j, const RailPair& v);
void from_json(const nlohmann::json& j, RailPair& v);
void to_json(nlohmann::json& j, const Topology& v);
void from_json(const nlohmann::json& j, Topology& v);
void to_json(nlohmann::json& j, const HostInfo& v);
void from_json(const nlohmann::json& j, HostInfo& v);
// Throws nlohmann::json::exception on a document of another schema; use
// ParseInventoryJson to get a Status-like error string instead.
void to_json(nlohmann::json& j, const Inventory& v);
void from_json(const nlohmann::json& j, Inventory& v);

// Parses a saved `fabcheck inventory --json`. On failure returns nullopt and
// sets *error to a message naming the problem.
std::optional<Inventory> ParseInventoryJson(std::string_view text, std::string* error);

}  // namespace fabcheck::model
