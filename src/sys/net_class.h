// The layout of /sys/class/net (Documentation/ABI/testing/sysfs-class-net):
// where each attribute of a network interface lives. Every module that reads
// a netdev (inventory, telemetry, checks, perf, ladder) takes its paths here.
//
//   /sys/class/net/<if>/                  a link into /sys/devices/... (virtual: .../virtual/net/<if>)
//     mtu                                 "9000"
//     operstate                           "up", "down", "unknown", ...
//     carrier                             "1" / "0" (EINVAL while admin-down)
//     speed                               Mb/s, "-1" when unknown (EINVAL while down)
//     address, type, dev_port             MAC; ARPHRD (1 Ethernet, 32 InfiniBand); 0-based port of the function
//     device                              -> the PCI function (absent for virtual interfaces)
//     device/numa_node, device/infiniband NUMA node ("-1": none); RDMA devices of the function
//     upper_<name>                        links to upper devices (VLANs, bonds)
//     statistics/<counter>                rx_bytes, tx_bytes, rx_dropped, ... (unsigned decimal)
//     qos/trust                           "pcp" or "dscp" (NVIDIA's MLNX_OFED/DOCA driver only)
//     ecn/roce_np|roce_rp/enable/<prio>   DCQCN per priority, "1" on (MLNX_OFED/DOCA driver only)
//   /sys/class/net/bonding_masters        a file, not an interface
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "sys/sysroot.h"

namespace fabcheck::sys::net_class {

inline constexpr std::string_view kClassDir = "/sys/class/net";

// The files of one interface, below its directory: the class link
// (Interface(name)) or the /sys/devices/... path it resolves to.
class InterfaceFiles {
 public:
  explicit InterfaceFiles(std::string dir) : dir_(std::move(dir)) {}
  const std::string& dir() const { return dir_; }
  // mtu, operstate, carrier, speed, address, type, dev_port.
  std::string Attribute(std::string_view name) const { return dir_ + "/" + std::string(name); }
  std::string Mtu() const { return Attribute("mtu"); }
  std::string Operstate() const { return Attribute("operstate"); }
  std::string Carrier() const { return Attribute("carrier"); }
  std::string PciDevice() const { return dir_ + "/device"; }
  std::string NumaNode() const { return dir_ + "/device/numa_node"; }
  std::string RdmaDevices() const { return dir_ + "/device/infiniband"; }
  std::string Statistics() const { return dir_ + "/statistics"; }
  std::string QosTrust() const { return dir_ + "/qos/trust"; }
  std::string Ecn() const { return dir_ + "/ecn"; }
  // ecn/<role>/enable/<priority>; role "roce_np" (notification point) or "roce_rp" (reaction point).
  std::string EcnEnable(std::string_view role, int priority) const {
    return dir_ + "/ecn/" + std::string(role) + "/enable/" + std::to_string(priority);
  }

 private:
  std::string dir_;
};

InterfaceFiles Interface(std::string_view name);

// Entry names of the class directory (interfaces, and bonding_masters, which
// callers skip by IsDirectory); NotFound when absent.
Result<std::vector<std::string>> ListInterfaces(const SysRoot& root);

// The upper devices of `name` (VLANs, bonds: its upper_<dev> links), as sysfs lists them.
std::vector<std::string> UpperDevices(const SysRoot& root, std::string_view name);

// /sys/class/net/<if>/mtu; NotFound/DataLoss naming the file.
Result<int> ReadMtu(const SysRoot& root, std::string_view name);
// device/numa_node of `name`; nullopt for virtual interfaces, "-1" and unreadable files.
std::optional<int> ReadNumaNode(const SysRoot& root, std::string_view name);

// Every counter of statistics/ that reads as an unsigned decimal; unreadable
// or garbage files are left out. NotFound when the interface has no statistics/.
Result<std::map<std::string, uint64_t>> ReadStatistics(const SysRoot& root, std::string_view name);

}  // namespace fabcheck::sys::net_class
