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

// Interfaces that carry the default route, from /proc/net/route. Errors: unknown.
Result<std::set<std::string>> DefaultRouteInterfaces(const sys::SysRoot& root);

// "a, b, c" (at most `limit`, then "and N more").
std::string JoinLimited(const std::vector<std::string>& items, size_t limit = 6);

}  // namespace fabcheck::checks
