// NUMA nodes (Documentation/ABI/stable/sysfs-devices-node):
//
//   /sys/devices/system/node/node<n>/cpulist     "0-55,112-167" (empty for a memory-only node)
//   /sys/devices/system/node/node<n>/hugepages/  per-node HugePages pools (sys/memory.h)
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "sys/sysroot.h"

namespace fabcheck::sys::numa {

inline constexpr std::string_view kNodeDir = "/sys/devices/system/node";

// "node1" -> 1; nullopt for the directory's other entries (possible, online, ...).
std::optional<int> NodeId(std::string_view entry);
// The directory of a node by its entry name ("node1") or number.
std::string NodeDir(std::string_view entry);
std::string NodeDir(int node);
std::string CpuListFile(std::string_view entry);
std::string CpuListFile(int node);

// Entry names of kNodeDir ("node0", "node1", "possible", ...); NotFound when absent.
Result<std::vector<std::string>> ListEntries(const SysRoot& root);
// The node numbers, sorted; empty when the directory is absent or unreadable.
std::vector<int> ListNodes(const SysRoot& root);
// The CPUs of `node` (its cpulist, parsed); an error names the file.
Result<std::vector<int>> ReadNodeCpus(const SysRoot& root, int node);

}  // namespace fabcheck::sys::numa
