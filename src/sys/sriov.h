// SR-IOV functions in sysfs: a physical function (PF) and its virtual
// functions (VFs), as the kernel lays them out (rdma-facts §1.7):
//
//   /sys/bus/pci/devices/<pf>/sriov_totalvfs   VFs the device can have
//   /sys/bus/pci/devices/<pf>/sriov_numvfs     VFs enabled now (0 = off)
//   /sys/bus/pci/devices/<pf>/virtfn<N>        -> ../<vf>  (one per enabled VF)
//   /sys/bus/pci/devices/<vf>/physfn           -> ../<pf>
//   /sys/bus/pci/devices/<vf>/driver           -> .../drivers/mlx5_core (vfio-pci for DPDK/VMs)
//   /sys/bus/pci/devices/<vf>/net/<if>         its netdev, when in the reader's network namespace
//   /sys/bus/pci/devices/<vf>/infiniband/<dev> its RDMA device
//
// sysfs shows a network interface only to readers in its network namespace:
// a VF netdev the SR-IOV CNI moved into a pod is absent from the host's view
// of net/ (and, with the RDMA subsystem in exclusive netns mode, so is its
// infiniband/ entry).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "sys/sysroot.h"

namespace fabcheck::sys::sriov {

struct VirtualFunction {
  int index = 0;                   // N of virtfn<N>
  std::string pci_address;         // "0000:18:00.2"
  std::string driver;              // "" when no driver is bound
  std::vector<std::string> netdevs;       // in the reader's network namespace
  std::vector<std::string> rdma_devices;
};

struct PhysicalFunction {
  std::string pci_address;
  std::optional<int> total_vfs;  // sriov_totalvfs
  std::optional<int> num_vfs;    // sriov_numvfs
  std::vector<std::string> netdevs;
  std::vector<std::string> rdma_devices;
  std::vector<VirtualFunction> vfs;  // by index
  std::vector<std::string> errors;   // what could not be read, named (the rest is still filled)
};

std::string PciDeviceDir(std::string_view pci_address);

// True when `pci_address` is an SR-IOV capable PF (has sriov_totalvfs).
bool IsPhysicalFunction(const SysRoot& root, std::string_view pci_address);

// The SR-IOV PFs behind the RDMA devices (/sys/class/infiniband/*/device) and
// network interfaces (/sys/class/net/*/device) of the node, sorted, once
// each. VFs (with a physfn link) are not PFs.
std::vector<std::string> ListPhysicalFunctions(const SysRoot& root);

// NotFound when `pci_address` has no sriov_totalvfs.
Result<PhysicalFunction> ReadPhysicalFunction(const SysRoot& root, std::string_view pci_address);

// Drivers that take a VF away from the kernel's network stack (DPDK, VMs):
// such a VF has no netdev anywhere, by design.
bool IsUserspaceDriver(std::string_view driver);

}  // namespace fabcheck::sys::sriov
