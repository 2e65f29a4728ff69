// Derived facts several checks share (GPU-NIC nearness, NCCL path types,
// which netdev carries a RoCE port's DCB settings, the default route).
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "checks/check.h"

namespace fabcheck::checks {

// NCCL's path types (src/graph/topo.h) and their names.
enum NcclPath { kPathLoc = 0, kPathNvl, kPathNvb, kPathPix, kPathPxb, kPathPxn, kPathPhb, kPathSys, kPathNet, kPathDis };
const char* NcclPathName(int path);
// nvidia-smi class -> the path type NCCL computes for the same pair. NODE
// (two host bridges of one CPU) is PHB for NCCL: the path goes through the CPU.
std::optional<int> NcclPathFor(model::PathType type);

// A GPU's nearest RDMA NICs (the compute NICs of the profile, if it names them).
struct Nearest {
  const model::Gpu* gpu = nullptr;
  model::PathType distance = model::PathType::kUnknown;
  std::vector<const model::Nic*> nics;  // every NIC at that distance
};
// One entry per GPU of the topology; nics empty when no RDMA NIC is in the matrix.
std::vector<Nearest> NearestRdmaNics(const Context& ctx);
// Whether the NIC has an RDMA device the checks look at.
bool IsCheckedRdmaNic(const Context& ctx, const model::Nic& nic);

// The netdev that holds a RoCE port's DCB/ECN settings: the port's netdev when
// it is a PCI function's, else the netdev of the device's PCI function (a
// bond or VLAN on top has no DCB of its own). Empty when none.
std::string PhysicalNetdev(const Context& ctx, const Context::PortRef& ref);

// ---- host placement (the host checks: IRQs, governors, pinning) -------------------

// The RDMA NICs the checks look at (the profile's compute NICs), in inventory order.
std::vector<const model::Nic*> CheckedRdmaNics(const Context& ctx);
// Those NCCL would use: CheckedRdmaNics narrowed by NCCL_IB_HCA when it is set.
// `*filter` (optional) is set to the NCCL_IB_HCA evidence when it narrowed the list.
std::vector<const model::Nic*> NcclRdmaNics(const Context& ctx, std::string* filter = nullptr);
// The CPUs local to a PCI function: its local_cpulist, else its NUMA node's
// CPU list. Empty when unknown.
std::vector<int> LocalCpus(const Context& ctx, const model::PciFunction& pci);
// The NUMA nodes (of the inventory) that hold any of `cpus`.
std::set<int> NodesOfCpus(const Context& ctx, const std::vector<int>& cpus);
// "NUMA node 1", "NUMA nodes 0, 1", "NUMA node ?" (none known).
std::string NodesLabel(const std::set<int>& nodes);
std::string NodeLabel(std::optional<int> node);
// Sorted set operations on CPU lists.
std::vector<int> CpuUnion(const std::vector<int>& a, const std::vector<int>& b);
std::vector<int> CpuIntersection(const std::vector<int>& a, const std::vector<int>& b);
std::vector<int> CpuDifference(const std::vector<int>& a, const std::vector<int>& b);

// "a, b, c" (at most `limit`, then "and N more").
std::string JoinLimited(const std::vector<std::string>& items, size_t limit = 6);

}  // namespace fabcheck::checks
