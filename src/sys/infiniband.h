// The layout of /sys/class/infiniband, in the style of prometheus/procfs'
// class_infiniband.go: where each attribute of an RDMA device and port lives,
// and how its value is written. Every module that reads an RDMA port
// (inventory, telemetry, checks, perf, ladder, diagnose) takes its paths and
// parsing from here.
//
//   /sys/class/infiniband/<dev>/                       device (a link into /sys/devices/...)
//     node_type, node_guid, sys_image_guid             "1: CA", "b83f:d203:00a1:b2c4", ...
//     fw_ver, hca_type, board_id                       "28.39.1002", "MT4129", "MT_0000000838"
//     device                                           -> the PCI function (sys/pci.h)
//     device/numa_node                                 NUMA node of the PCI function ("-1": none)
//     device/net/<if>/dev_port                         the function's netdevs, 0-based port
//     ports/<n>/state                                  "4: ACTIVE"      (ParsePortState)
//     ports/<n>/phys_state                             "5: LinkUp"      (ParsePortState)
//     ports/<n>/rate                                   "400 Gb/sec (4X NDR)"
//     ports/<n>/link_layer                             "InfiniBand" or "Ethernet"
//     ports/<n>/lid, sm_lid                            "0x12" (InfiniBand only)
//     ports/<n>/counters/<name>                        IB PMA counters (unsigned decimal)
//     ports/<n>/counters_ext/<name>                    64-bit PMA counters (kernels before v4.5)
//     ports/<n>/hw_counters/<name>                     driver counters (mlx5: out_of_sequence, ...)
//     ports/<n>/gids/<i>                               "fe80:0000:...:0001" (zeros: unused slot)
//     ports/<n>/gid_attrs/types/<i>                    "IB/RoCE v1" or "RoCE v2" (EINVAL on IB)
//     ports/<n>/gid_attrs/ndevs/<i>                    the netdev the GID belongs to (RoCE)
//   /sys/class/infiniband_verbs/uverbs<N>/ibdev        the RDMA device behind /dev/infiniband/uverbs<N>
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "sys/sysroot.h"

namespace fabcheck::sys::infiniband {

inline constexpr std::string_view kClassDir = "/sys/class/infiniband";
inline constexpr std::string_view kVerbsClassDir = "/sys/class/infiniband_verbs";
inline constexpr std::string_view kVerbsDevDir = "/dev/infiniband";
// Relative to a port directory, for messages that name the table.
inline constexpr std::string_view kGidsRel = "gids";
inline constexpr std::string_view kGidTypesRel = "gid_attrs/types";
inline constexpr std::string_view kGidNdevsRel = "gid_attrs/ndevs";

std::string DeviceDir(std::string_view device);
std::string PortsDir(std::string_view device);
std::string PortDir(std::string_view device, int port);
// A port attribute: PortFile("mlx5_0", 1, "state") = .../ports/1/state.
std::string PortFile(std::string_view device, int port, std::string_view name);
std::string CountersDir(std::string_view device, int port);
std::string HwCountersDir(std::string_view device, int port);
std::string NumaNodeFile(std::string_view device);

// The files of one device, below its directory: the class link (DeviceDir)
// or the /sys/devices/... path it resolves to (readers resolve it once).
class DeviceFiles {
 public:
  explicit DeviceFiles(std::string dir) : dir_(std::move(dir)) {}
  const std::string& dir() const { return dir_; }
  // node_type, node_guid, sys_image_guid, fw_ver, hca_type, board_id.
  std::string Attribute(std::string_view name) const { return dir_ + "/" + std::string(name); }
  std::string PciDevice() const { return dir_ + "/device"; }        // link to the PCI function
  std::string Netdevs() const { return dir_ + "/device/net"; }      // the function's netdevs
  std::string NetdevDevPort(std::string_view netdev) const {        // 0-based port of that netdev
    return dir_ + "/device/net/" + std::string(netdev) + "/dev_port";
  }
  std::string Ports() const { return dir_ + "/ports"; }

 private:
  std::string dir_;
};

// The files of one port, below its directory (PortDir, or Port() of a
// resolved DeviceFiles).
class PortFiles {
 public:
  explicit PortFiles(std::string dir) : dir_(std::move(dir)) {}
  const std::string& dir() const { return dir_; }
  // state, phys_state, rate, link_layer, lid, sm_lid.
  std::string Attribute(std::string_view name) const { return dir_ + "/" + std::string(name); }
  std::string Counters() const { return dir_ + "/counters"; }
  std::string CountersExt() const { return dir_ + "/counters_ext"; }
  std::string HwCounters() const { return dir_ + "/hw_counters"; }
  std::string Gids() const { return dir_ + "/gids"; }
  std::string Gid(std::string_view index) const { return dir_ + "/gids/" + std::string(index); }
  std::string GidTypes() const { return dir_ + "/gid_attrs/types"; }
  std::string GidType(std::string_view index) const { return dir_ + "/gid_attrs/types/" + std::string(index); }
  std::string GidNdevs() const { return dir_ + "/gid_attrs/ndevs"; }
  std::string GidNdev(std::string_view index) const { return dir_ + "/gid_attrs/ndevs/" + std::string(index); }

 private:
  std::string dir_;
};

inline DeviceFiles Device(std::string_view device) { return DeviceFiles(DeviceDir(device)); }
inline PortFiles Port(std::string_view device, int port) { return PortFiles(PortDir(device, port)); }
inline PortFiles PortOf(const DeviceFiles& device, std::string_view port) {
  return PortFiles(device.Ports() + "/" + std::string(port));
}

// ports/<n>/state and phys_state: "<code>: <NAME>", code 0..255, a name.
struct PortState {
  int code = 0;
  std::string name;  // "ACTIVE", "LinkUp", ...
};
std::optional<PortState> ParsePortState(std::string_view text);

// The RDMA devices of the node (entry names of kClassDir, sorted); NotFound
// when the class directory does not exist (no RDMA driver loaded).
Result<std::vector<std::string>> ListDevices(const SysRoot& root);
// The port numbers of a device, numerically sorted; non-numeric names skipped.
Result<std::vector<int>> ListPorts(const SysRoot& root, std::string_view device);
// Port numbers out of the entry names of a ports/ directory.
std::vector<int> PortNumbers(const std::vector<std::string>& names);

// The device a path below kClassDir is about ("/sys/class/infiniband/mlx5_0/ports/1/rate" -> "mlx5_0"); "" otherwise.
std::string DeviceOfPath(std::string_view path);

// The netdevs a port's GIDs belong to (gid_attrs/ndevs/*), sorted, once each;
// empty on InfiniBand and when unreadable.
std::vector<std::string> PortGidNetdevs(const SysRoot& root, std::string_view device, int port);

// /sys/class/infiniband_verbs/<uverbs>/ibdev and the character device it
// stands for (/dev/infiniband/<uverbs>).
std::string VerbsIbdevFile(std::string_view uverbs);
std::string VerbsCharDevice(std::string_view uverbs);

// Whether this process could open the character device `path` of the live
// node: a permission probe with access(2), which answers for the process's
// credentials without opening the device.
struct CharDeviceAccess {
  bool exists = false;
  bool accessible = false;  // readable and writable
};
CharDeviceAccess ProbeLiveAccess(const std::string& path);

}  // namespace fabcheck::sys::infiniband
