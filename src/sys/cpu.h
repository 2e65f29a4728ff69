// CPUs: which exist, how their frequency and idle states are governed, and
// which of them the current process may run on. Read through a SysRoot.
//
//   /sys/devices/system/cpu/online                          "0-223"
//   /sys/devices/system/cpu/cpu<n>/cpufreq/scaling_governor "performance", "powersave", "schedutil", ...
//   /sys/devices/system/cpu/cpu<n>/cpufreq/scaling_driver   "intel_pstate", "acpi-cpufreq", "amd-pstate-epp"
//   /sys/devices/system/cpu/cpuidle/current_driver          "intel_idle", "acpi_idle", "haltpoll", "none"
//   /sys/devices/system/cpu/cpu<n>/cpuidle/state<k>/{name,latency,disable}   latency in microseconds
//   /proc/self/status                                       "Cpus_allowed_list:\t0-15"
//   /proc/self/cgroup                                       "0::/kubepods.slice/..." (v2) or "3:cpuset:/..." (v1)
//   /sys/fs/cgroup/<path>/cpuset.cpus.effective             v2 (v1: /sys/fs/cgroup/cpuset/<path>/cpuset.effective_cpus)
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "sys/sysroot.h"

namespace fabcheck::sys {

inline constexpr std::string_view kCpuDir = "/sys/devices/system/cpu";

// The online CPUs ("/sys/devices/system/cpu/online").
Result<std::vector<int>> ReadOnlineCpus(const SysRoot& root);

std::string GovernorPath(int cpu);
// Governor per CPU; a CPU whose file cannot be read carries the error.
// NotFound overall when no CPU has a cpufreq directory (the kernel exposes no
// frequency scaling: a VM, or the platform firmware controls frequency).
struct CpuFrequency {
  std::map<int, std::string> governor;  // cpu -> governor, for the CPUs that have one
  std::string driver;                   // scaling_driver of the first CPU read ("" when unreadable)
  std::vector<int> unreadable;          // CPUs with a cpufreq directory but no readable governor
};
Result<CpuFrequency> ReadCpuFrequency(const SysRoot& root, const std::vector<int>& cpus);

struct IdleState {
  int index = 0;           // state<k>
  std::string name;        // "POLL", "C1", "C1E", "C6"
  int latency_us = -1;     // exit latency; -1 when unreadable
  bool disabled = false;   // "disable" = 1 (by the user or PM QoS tooling)
};
struct CpuIdle {
  std::string driver;                           // cpuidle/current_driver ("" when unreadable)
  std::map<int, std::vector<IdleState>> states;  // cpu -> its states
};
// NotFound when no CPU has a cpuidle directory.
Result<CpuIdle> ReadCpuIdle(const SysRoot& root, const std::vector<int>& cpus);

// The CPU sets that bind the current process.
struct CpuPinning {
  Result<std::vector<int>> allowed = UnavailableError("not read");  // Cpus_allowed_list of /proc/self/status
  std::string allowed_text;                                       // as read
  // The cgroup's effective cpuset, when the cgroup is known and the file readable.
  std::optional<std::vector<int>> cpuset;
  std::string cpuset_text;
  std::string cpuset_path;  // the file it came from, or why not ("" when no cpuset controller)
  std::string cpuset_error;
};
CpuPinning ReadCpuPinning(const SysRoot& root);
// "Cpus_allowed_list:\t0-15" out of /proc/<pid>/status text.
Result<std::string> ParseCpusAllowedList(std::string_view status_text);
// The cpuset file for the process's cgroup, from /proc/self/cgroup text:
// v1's cpuset controller line wins, else the v2 ("0::") path.
std::optional<std::string> CpusetFileFor(std::string_view cgroup_text);

}  // namespace fabcheck::sys
