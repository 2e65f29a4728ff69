#include "sys/cpu.h"

#include "base/strings.h"
#include "base/units.h"

namespace fabcheck::sys {
namespace {

// No machine has more; the bound keeps a hostile capture from making us
// probe millions of paths.
constexpr int kMaxCpu = 1 << 14;
constexpr int kMaxIdleStates = 16;  // CPUIDLE_STATE_MAX is 10

std::string CpuDir(int cpu) { return std::string(kCpuDir) + "/cpu" + std::to_string(cpu); }

}  // namespace

Result<std::vector<int>> ReadOnlineCpus(const SysRoot& root) {
  std::string path = std::string(kCpuDir) + "/online";
  ASSIGN_OR_RETURN(std::string text, root.ReadAttribute(path));
  auto cpus = ParseCpuList(text);
  if (!cpus.ok()) return DataLossError(root.DisplayPath(path) + ": " + cpus.status().message());
  if (cpus->empty() || cpus->back() >= kMaxCpu) {
    return DataLossError(root.DisplayPath(path) + " = '" + text + "' is not a plausible CPU list");
  }
  return cpus;
}

std::string GovernorPath(int cpu) { return CpuDir(cpu) + "/cpufreq/scaling_governor"; }

Result<CpuFrequency> ReadCpuFrequency(const SysRoot& root, const std::vector<int>& cpus) {
  CpuFrequency f;
  bool any_dir = false;
  for (int cpu : cpus) {
    if (cpu < 0 || cpu >= kMaxCpu) continue;
    std::string dir = CpuDir(cpu) + "/cpufreq";
    if (!root.IsDirectory(dir)) continue;
    any_dir = true;
    auto governor = root.ReadAttribute(dir + "/scaling_governor");
    if (governor.ok() && !governor->empty()) {
      f.governor[cpu] = *governor;
    } else {
      f.unreadable.push_back(cpu);
    }
    if (f.driver.empty()) {
      if (auto driver = root.ReadAttribute(dir + "/scaling_driver"); driver.ok()) f.driver = *driver;
    }
  }
  if (!any_dir) {
    return NotFoundError("no " + root.DisplayPath(std::string(kCpuDir) + "/cpu<n>/cpufreq") +
                         " directory: the kernel exposes no frequency scaling (a VM, no cpufreq driver, or the "
                         "firmware controls frequency)");
  }
  return f;
}

Result<CpuIdle> ReadCpuIdle(const SysRoot& root, const std::vector<int>& cpus) {
  CpuIdle idle;
  if (auto driver = root.ReadAttribute(std::string(kCpuDir) + "/cpuidle/current_driver"); driver.ok()) {
    idle.driver = *driver;
  }
  for (int cpu : cpus) {
    if (cpu < 0 || cpu >= kMaxCpu) continue;
    std::string dir = CpuDir(cpu) + "/cpuidle";
    if (!root.IsDirectory(dir)) continue;
    std::vector<IdleState> states;
    for (int k = 0; k < kMaxIdleStates; ++k) {
      std::string sdir = dir + "/state" + std::to_string(k);
      if (!root.IsDirectory(sdir)) break;
      IdleState s;
      s.index = k;
      s.name = root.ReadAttribute(sdir + "/name").value_or("state" + std::to_string(k));
      if (auto latency = root.ReadAttribute(sdir + "/latency"); latency.ok()) {
        if (auto v = ParseInt(*latency); v && *v >= 0 && *v < (1 << 30)) s.latency_us = static_cast<int>(*v);
      }
      if (auto disable = root.ReadAttribute(sdir + "/disable"); disable.ok()) s.disabled = *disable == "1";
      states.push_back(std::move(s));
    }
    idle.states[cpu] = std::move(states);
  }
  if (idle.states.empty()) {
    return NotFoundError("no " + root.DisplayPath(std::string(kCpuDir) + "/cpu<n>/cpuidle") +
                         " directory: the kernel exposes no idle states" +
                         (idle.driver.empty() ? std::string() : " (cpuidle driver: " + idle.driver + ")"));
  }
  return idle;
}

Result<std::string> ParseCpusAllowedList(std::string_view status_text) {
  for (const auto& line : Split(status_text, '\n')) {
    if (!StartsWith(line, "Cpus_allowed_list:")) continue;
    return std::string(Trim(std::string_view(line).substr(18)));
  }
  return DataLossError("no Cpus_allowed_list line (expected: Cpus_allowed_list:\\t<cpu list>)");
}

std::optional<std::string> CpusetFileFor(std::string_view cgroup_text) {
  std::optional<std::string> v2;
  for (const auto& line : Split(cgroup_text, '\n', /*skip_empty=*/true)) {
    // "<id>:<controllers>:<path>"; the path may itself contain ':'.
    auto first = line.find(':');
    if (first == std::string::npos) continue;
    auto second = line.find(':', first + 1);
    if (second == std::string::npos) continue;
    std::string controllers = line.substr(first + 1, second - first - 1);
    std::string path = line.substr(second + 1);
    if (path.empty() || path[0] != '/' || path.find("/..") != std::string::npos) continue;
    if (path == "/") path.clear();
    for (const auto& c : Split(controllers, ',')) {
      if (c == "cpuset") return "/sys/fs/cgroup/cpuset" + path + "/cpuset.effective_cpus";
    }
    if (line.substr(0, first) == "0" && controllers.empty()) v2 = "/sys/fs/cgroup" + path + "/cpuset.cpus.effective";
  }
  return v2;
}

CpuPinning ReadCpuPinning(const SysRoot& root) {
  CpuPinning p;
  if (auto status = root.ReadFile("/proc/self/status"); status.ok()) {
    auto text = ParseCpusAllowedList(*status);
    if (text.ok()) {
      p.allowed_text = *text;
      auto cpus = ParseCpuList(*text);
      p.allowed = cpus.ok() ? Result<std::vector<int>>(*cpus)
                            : Result<std::vector<int>>(DataLossError("/proc/self/status: Cpus_allowed_list '" +
                                                                     *text + "': " + cpus.status().message()));
    } else {
      p.allowed = text.status().WithContext("/proc/self/status");
    }
  } else {
    p.allowed = status.status();
  }
  auto cgroup = root.ReadFile("/proc/self/cgroup");
  if (!cgroup.ok()) {
    p.cpuset_error = cgroup.status().message();
    return p;
  }
  auto file = CpusetFileFor(*cgroup);
  if (!file) {
    p.cpuset_error = "/proc/self/cgroup names no cpuset controller";
    return p;
  }
  p.cpuset_path = *file;
  auto text = root.ReadAttribute(*file);
  if (!text.ok()) {
    p.cpuset_error = text.status().message();
    return p;
  }
  p.cpuset_text = *text;
  auto cpus = ParseCpuList(*text);
  if (cpus.ok() && !cpus->empty()) {
    p.cpuset = *cpus;
  } else {
    p.cpuset_error = root.DisplayPath(*file) + " = '" + *text + "' is not a CPU list";
  }
  return p;
}

}  // namespace fabcheck::sys
