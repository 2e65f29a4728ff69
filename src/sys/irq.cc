#include "sys/irq.h"

#include <algorithm>
#include <cctype>

#include "base/strings.h"
#include "base/units.h"

namespace fabcheck::sys {
namespace {

// A machine has at most a few thousand processes worth looking at; the bound
// keeps a hostile /proc (a capture with a million entries) from stalling us.
constexpr size_t kMaxProcEntries = 65536;

std::vector<std::string> Words(std::string_view line) {
  std::vector<std::string> out;
  for (auto& w : Split(line, ' ', /*skip_empty=*/true)) {
    std::string t(Trim(w));
    if (!t.empty()) out.push_back(std::move(t));
  }
  return out;
}

bool IsDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

uint64_t IrqVector::Total() const {
  uint64_t sum = 0;
  for (uint64_t c : counts) sum += c;
  return sum;
}

Result<InterruptTable> ParseInterrupts(std::string_view text) {
  InterruptTable table;
  auto lines = Split(text, '\n');
  size_t i = 0;
  while (i < lines.size() && Trim(lines[i]).empty()) ++i;
  if (i == lines.size()) return DataLossError("/proc/interrupts is empty (expected a header of CPU columns)");
  for (const auto& word : Words(lines[i])) {
    if (!StartsWith(word, "CPU")) return DataLossError("/proc/interrupts: header word '" + word + "' is not CPU<n>");
    auto cpu = ParseInt(std::string_view(word).substr(3));
    if (!cpu || *cpu < 0) return DataLossError("/proc/interrupts: header word '" + word + "' is not CPU<n>");
    table.cpus.push_back(static_cast<int>(*cpu));
  }
  if (table.cpus.empty()) return DataLossError("/proc/interrupts has no CPU header line");
  for (++i; i < lines.size(); ++i) {
    std::string_view line = lines[i];
    auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view label = Trim(line.substr(0, colon));
    if (!IsDigits(label)) continue;  // NMI, LOC, ERR, MIS...: no vector
    auto irq = ParseInt(label);
    if (!irq || *irq < 0 || *irq > (1 << 24)) continue;
    IrqVector v;
    v.irq = static_cast<int>(*irq);
    auto words = Words(line.substr(colon + 1));
    size_t w = 0;
    for (; w < words.size() && v.counts.size() < table.cpus.size() && IsDigits(words[w]); ++w) {
      auto count = ParseUint(words[w]);
      v.counts.push_back(count ? *count : 0);
    }
    std::vector<std::string> rest(words.begin() + static_cast<long>(w), words.end());
    v.description = Join(rest, " ");
    if (!rest.empty()) v.name = rest.back();
    table.vectors.push_back(std::move(v));
  }
  return table;
}

Result<InterruptTable> ReadInterrupts(const SysRoot& root) {
  ASSIGN_OR_RETURN(std::string text, root.ReadFile(kProcInterrupts));
  auto table = ParseInterrupts(text);
  if (!table.ok()) return Status(table.status().code(), root.DisplayPath(kProcInterrupts) + ": " + table.status().message());
  return table;
}

bool VectorMatches(const IrqVector& vector, std::string_view bdf, const std::vector<std::string>& netdevs) {
  if (!bdf.empty()) {
    // The address must end where the word or name does: 0000:18:00 is no function, and
    // 0000:18:00.1 must not match 0000:18:00.10's text.
    std::string_view d = vector.description;
    for (size_t at = d.find(bdf); at != std::string_view::npos; at = d.find(bdf, at + 1)) {
      size_t end = at + bdf.size();
      if (end == d.size() || (!std::isalnum(static_cast<unsigned char>(d[end])) && d[end] != '.')) return true;
    }
  }
  for (const auto& word : Words(vector.description)) {
    for (const auto& nd : netdevs) {
      if (nd.empty()) continue;
      if (word == nd || (StartsWith(word, nd) && word.size() > nd.size() && word[nd.size()] == '-')) return true;
    }
  }
  return false;
}

std::string IrqAffinityPath(int irq) { return "/proc/irq/" + std::to_string(irq) + "/smp_affinity_list"; }

Result<std::vector<int>> ReadIrqAffinity(const SysRoot& root, int irq) {
  std::string path = IrqAffinityPath(irq);
  ASSIGN_OR_RETURN(std::string text, root.ReadAttribute(path));
  auto cpus = ParseCpuList(text);
  if (!cpus.ok()) return DataLossError(root.DisplayPath(path) + ": " + cpus.status().message());
  if (cpus->empty()) return DataLossError(root.DisplayPath(path) + " is empty (expected a CPU list such as 0-3,8)");
  return cpus;
}

IrqbalanceState ReadIrqbalance(const SysRoot& root) {
  IrqbalanceState s;
  // Running processes of this PID namespace (a container sees only its own).
  if (auto entries = root.ListDir("/proc"); entries.ok()) {
    s.proc_scanned = true;
    size_t seen = 0;
    for (const auto& name : *entries) {
      if (!IsDigits(name)) continue;
      if (++seen > kMaxProcEntries) break;
      auto comm = root.ReadAttribute("/proc/" + name + "/comm");
      if (comm.ok() && *comm == "irqbalance") {
        if (auto pid = ParseInt(name)) s.pids.push_back(static_cast<int>(*pid));
      }
    }
    if (s.pids.empty()) {
      s.evidence.push_back("/proc: no process named irqbalance (" + std::to_string(seen) + " processes in this PID "
                           "namespace)");
    } else {
      std::vector<std::string> pids;
      for (int pid : s.pids) pids.push_back(std::to_string(pid));
      s.evidence.push_back("/proc/" + pids.front() + "/comm = irqbalance" +
                           (pids.size() > 1 ? " (pids " + Join(pids, ", ") + ")" : ""));
    }
  } else {
    s.evidence.push_back("/proc: " + entries.status().message());
  }
  // systemd's view: the service's cgroup exists while it runs (v2, then v1's
  // name=systemd hierarchy); visible from containers that mount the host's
  // cgroupfs. Directories are listed, not probed, so a capture records the answer.
  for (const char* slice : {"/sys/fs/cgroup/system.slice", "/sys/fs/cgroup/systemd/system.slice",
                            "/sys/fs/cgroup/unified/system.slice"}) {
    auto units = root.ListDir(slice);
    if (!units.ok()) continue;
    bool found = std::find(units->begin(), units->end(), "irqbalance.service") != units->end();
    s.unit_active = found;
    s.unit_cgroup = std::string(slice) + "/irqbalance.service";
    s.evidence.push_back(found ? s.unit_cgroup + " exists (the service is running)"
                               : std::string(slice) + ": no irqbalance.service cgroup");
    if (found) break;
  }
  for (const char* wants : {"/etc/systemd/system/multi-user.target.wants", "/etc/systemd/system/sysinit.target.wants"}) {
    auto links = root.ListDir(wants);
    if (!links.ok()) continue;
    bool found = std::find(links->begin(), links->end(), "irqbalance.service") != links->end();
    if (found || !s.unit_enabled) s.unit_enabled = found;
    if (found) {
      s.unit_enabled_path = std::string(wants) + "/irqbalance.service";
      s.evidence.push_back(s.unit_enabled_path + " exists (enabled at boot)");
      break;
    }
  }
  for (const char* conf : {"/etc/default/irqbalance", "/etc/sysconfig/irqbalance"}) {
    auto text = root.ReadFile(conf);
    if (!text.ok()) continue;
    s.config_path = conf;
    for (const auto& raw : Split(*text, '\n')) {
      std::string_view line = Trim(raw);
      for (std::string_view key : {"IRQBALANCE_BANNED_CPULIST=", "IRQBALANCE_BANNED_CPUS="}) {
        if (!StartsWith(line, key)) continue;
        std::string value(Trim(line.substr(key.size())));
        if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') && value.back() == value.front()) {
          value = value.substr(1, value.size() - 2);
        }
        if (!value.empty()) {
          s.banned_cpus = std::string(key.substr(0, key.size() - 1)) + "=" + value;
          s.evidence.push_back(std::string(conf) + ": " + s.banned_cpus);
        }
      }
    }
    break;
  }
  return s;
}

}  // namespace fabcheck::sys
