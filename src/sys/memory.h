// Memory settings that matter to RDMA and GPU jobs, read through a SysRoot.
//
//   /sys/kernel/mm/hugepages/hugepages-<size>kB/{nr_hugepages,free_hugepages}             node-wide pools
//   /sys/devices/system/node/node<n>/hugepages/hugepages-<size>kB/{nr_hugepages,free_hugepages}   per NUMA node
//   /sys/kernel/mm/transparent_hugepage/enabled              "always [madvise] never" (the bracketed one is set)
//   /proc/sys/kernel/numa_balancing                          "0" off, "1" on (2/3: memory tiering modes)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "sys/sysroot.h"

namespace fabcheck::sys {

inline constexpr std::string_view kHugePagesDir = "/sys/kernel/mm/hugepages";
inline constexpr std::string_view kThpEnabled = "/sys/kernel/mm/transparent_hugepage/enabled";
inline constexpr std::string_view kNumaBalancing = "/proc/sys/kernel/numa_balancing";

struct HugePagePool {
  uint64_t page_kb = 0;  // 2048, 1048576
  int node = -1;         // -1: the node-wide pool
  std::optional<uint64_t> total;  // nr_hugepages
  std::optional<uint64_t> free;   // free_hugepages
  std::string dir;                // where it was read
};

// Every pool size, node-wide then per NUMA node (sorted by size, then node).
// NotFound when the kernel exposes no hugepages directory.
Result<std::vector<HugePagePool>> ReadHugePages(const SysRoot& root);
// "hugepages-2048kB" -> 2048.
std::optional<uint64_t> ParseHugePageDirName(std::string_view name);

// The selected word of a "always [madvise] never" file.
Result<std::string> ParseBracketedChoice(std::string_view text);
Result<std::string> ReadThpMode(const SysRoot& root);
Result<int> ReadNumaBalancing(const SysRoot& root);

}  // namespace fabcheck::sys
