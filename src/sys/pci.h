// The layout of /sys/bus/pci/devices (Documentation/ABI/testing/sysfs-bus-pci):
// where each attribute of a PCI function lives. Config space is parsed in
// sys/pci_config.h, SR-IOV in sys/sriov.h; this header is where the paths of
// the other attributes come from.
//
//   /sys/bus/pci/devices/<bdf>              a link to /sys/devices/pci<dom>:<bus>/.../<bdf>
//     vendor, device, class                 "0x15b3", "0x1021", "0x020700"
//     subsystem_vendor, subsystem_device    "0x15b3", "0x0041"
//     driver                                -> .../drivers/mlx5_core (absent when unbound)
//     numa_node                             "0", "-1" when the platform does not say
//     local_cpulist                         "0-55,112-167"
//     current_link_speed, max_link_speed    "32.0 GT/s PCIe", "Unknown" (base/units.h ParsePcieSpeedGts)
//     current_link_width, max_link_width    "16" (255 on some kernels when unreadable)
//     iommu_group                           -> /sys/kernel/iommu_groups/<n> (absent without an IOMMU)
//     net/<if>, infiniband/<dev>            the function's netdevs and RDMA devices
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "sys/sysroot.h"

namespace fabcheck::sys::pci {

inline constexpr std::string_view kDevicesDir = "/sys/bus/pci/devices";

// The files of one function, below its directory: the bus link
// (Function(bdf)) or the /sys/devices/... path it resolves to (a bridge's
// directory is such a path).
class FunctionFiles {
 public:
  explicit FunctionFiles(std::string dir) : dir_(std::move(dir)) {}
  const std::string& dir() const { return dir_; }
  // vendor, device, class, subsystem_vendor, subsystem_device, numa_node,
  // local_cpulist, current_link_speed, max_link_speed, current_link_width, max_link_width.
  std::string Attribute(std::string_view name) const { return dir_ + "/" + std::string(name); }
  std::string Driver() const { return dir_ + "/driver"; }
  std::string IommuGroup() const { return dir_ + "/iommu_group"; }
  std::string Netdevs() const { return dir_ + "/net"; }
  std::string RdmaDevices() const { return dir_ + "/infiniband"; }

 private:
  std::string dir_;
};

FunctionFiles Function(std::string_view bdf);

// Entry names of kDevicesDir (callers keep those that look like a BDF);
// NotFound when the tree has no PCI bus (containers, partial captures).
Result<std::vector<std::string>> ListFunctions(const SysRoot& root);

}  // namespace fabcheck::sys::pci
