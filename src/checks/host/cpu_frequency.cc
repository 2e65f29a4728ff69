// cpu.frequency: CPUs local to the RDMA NICs or GPUs run a power-saving
// frequency governor (scaling_governor); deep C-states (cpuidle) are reported.
#include <fmt/format.h>

#include <map>

#include "base/units.h"
#include "checks/check.h"
#include "checks/facts.h"
#include "sys/cpu.h"

namespace fabcheck::checks {
namespace {

// Governors that lower the clock until load raises it: each burst of
// completions or proxy work first runs at a low frequency.
bool PowerSaving(const std::string& governor) {
  return governor == "powersave" || governor == "schedutil" || governor == "ondemand" || governor == "conservative";
}

// An idle state whose exit latency exceeds this is "deep": waking from it adds
// more than a small message's whole RDMA latency (C6 is ~100-200 us on servers).
constexpr int kDeepLatencyUs = 20;

constexpr const char* kOldCapture =
    "this capture was taken before fabcheck recorded cpufreq and cpuidle (take it again with `fabcheck snapshot`)";

struct Interest {
  std::vector<int> cpus;  // CPUs local to any NIC or GPU
  std::vector<std::pair<std::string, std::vector<int>>> owners;  // "mlx5_0", "GPU3" with their local CPUs
  // "CPUs local to mlx5_0, GPU0": the devices whose local CPUs meet `some`.
  std::string Scope(const std::vector<int>& some) const {
    std::vector<std::string> names;
    for (const auto& [name, local] : owners) {
      if (!CpuIntersection(local, some).empty()) names.push_back(name);
    }
    return "CPUs local to " + JoinLimited(names, 4);
  }
};

Interest DevicesCpus(const Context& ctx) {
  Interest in;
  for (const auto* nic : CheckedRdmaNics(ctx)) {
    auto cpus = LocalCpus(ctx, nic->pci);
    if (cpus.empty()) continue;
    in.cpus = CpuUnion(in.cpus, cpus);
    in.owners.emplace_back(nic->label, cpus);
  }
  for (const auto& gpu : ctx.inventory->gpus) {
    auto cpus = LocalCpus(ctx, gpu.pci);
    if (cpus.empty()) continue;
    in.cpus = CpuUnion(in.cpus, cpus);
    in.owners.emplace_back("GPU" + std::to_string(gpu.index), cpus);
  }
  return in;
}

std::string GovernorSummary(const std::map<std::string, std::vector<int>>& by) {
  std::vector<std::string> parts;
  for (const auto& [g, cpus] : by) parts.push_back(g + " on CPUs " + FormatCpuList(cpus));
  return Join(parts, "; ");
}

void Run(const Context& ctx, Reporter& out) {
  if (!out.NeedInventory(ctx)) return;
  auto online = sys::ReadOnlineCpus(*ctx.root);
  std::vector<int> all;
  if (online.ok()) {
    all = *online;
  } else {
    for (const auto& node : ctx.inventory->numa_nodes) all = CpuUnion(all, ParseCpuList(node.cpulist).value_or({}));
  }
  if (all.empty()) {
    out.Unknown("node", "the CPUs of this node are unknown: " + online.status().message());
    return;
  }
  Interest in = DevicesCpus(ctx);
  std::string scope = in.cpus.empty() ? std::string() : in.Scope(in.cpus);

  // Frequency governors.
  auto freq = sys::ReadCpuFrequency(*ctx.root, all);
  if (!freq.ok()) {
    if (freq.status().code() == StatusCode::kNotFound && ctx.host_evidence_complete) {
      out.Info("node", "no frequency governor to check: " + freq.status().message(),
               {Evidence(std::string(sys::kCpuDir) + "/online", FormatCpuList(all))});
    } else {
      out.Unknown("node", "frequency governors unknown: " +
                              (ctx.host_evidence_complete ? freq.status().message() : std::string(kOldCapture)));
    }
  } else {
    std::map<std::string, std::vector<int>> by, slow;
    for (const auto& [cpu, g] : freq->governor) by[g].push_back(cpu);
    std::vector<std::string> ev = {"scaling_governor: " + GovernorSummary(by)};
    if (!freq->driver.empty()) ev.push_back("scaling_driver: " + freq->driver);
    if (!freq->unreadable.empty()) ev.push_back("unreadable on CPUs " + FormatCpuList(freq->unreadable));
    for (const auto& [cpu, g] : freq->governor) {
      if (PowerSaving(g) && (in.cpus.empty() || std::binary_search(in.cpus.begin(), in.cpus.end(), cpu))) {
        slow[g].push_back(cpu);
      }
    }
    if (in.cpus.empty()) {
      out.Info("node", "no RDMA NIC or GPU with known local CPUs; governors: " + GovernorSummary(by), ev);
    } else if (!slow.empty()) {
      std::vector<int> cpus;
      for (const auto& [g, c] : slow) cpus = CpuUnion(cpus, c);
      out.Add(model::Severity::kWarn, "CPUs " + FormatCpuList(cpus),
              fmt::format("{} CPU(s) of {} ({}) run a power-saving governor ({}): cores idle at a low clock and ramp "
                          "up only under load, which adds latency to the completions the NIC raises and slows NCCL's "
                          "proxy threads",
                          cpus.size(), NodesLabel(NodesOfCpus(ctx, cpus)), in.Scope(cpus), GovernorSummary(slow)),
              ev,
              "cpupower frequency-set -g performance (persistently: tuned-adm profile network-latency or a boot-time "
              "unit), and the BIOS power profile 'Maximum Performance'; with intel_pstate, powersave is its default");
    } else {
      out.Pass("node", fmt::format("{} ({} CPU(s)) run a performance governor", scope, in.cpus.size()), ev);
    }
  }

  // Idle states.
  const std::vector<int>& idle_cpus = in.cpus.empty() ? all : in.cpus;
  auto idle = sys::ReadCpuIdle(*ctx.root, idle_cpus);
  if (!idle.ok()) {
    if (idle.status().code() == StatusCode::kNotFound && ctx.host_evidence_complete) {
      out.Info("node", "no idle state to check: " + idle.status().message());
    } else {
      out.Unknown("node", "idle states unknown: " +
                              (ctx.host_evidence_complete ? idle.status().message() : std::string(kOldCapture)));
    }
    return;
  }
  // state name -> CPUs where it is enabled, with its latency.
  std::map<std::string, std::pair<int, std::vector<int>>> deep;
  for (const auto& [cpu, states] : idle->states) {
    for (const auto& s : states) {
      if (s.disabled || s.latency_us <= kDeepLatencyUs) continue;
      auto& d = deep[s.name];
      d.first = std::max(d.first, s.latency_us);
      d.second.push_back(cpu);
    }
  }
  std::vector<std::string> ev = {"cpuidle driver: " + (idle->driver.empty() ? std::string("?") : idle->driver)};
  const auto& first = idle->states.begin()->second;
  std::vector<std::string> names;
  for (const auto& s : first) {
    names.push_back(fmt::format("{} ({} us{})", s.name, s.latency_us, s.disabled ? ", disabled" : ""));
  }
  ev.push_back(fmt::format("{}/cpu{}/cpuidle: {}", sys::kCpuDir, idle->states.begin()->first, Join(names, ", ")));
  std::string where = in.cpus.empty() ? "the CPUs" : scope;
  if (deep.empty()) {
    out.Pass("node", fmt::format("no idle state deeper than {} us exit latency is enabled on {}", kDeepLatencyUs, where),
             ev);
    return;
  }
  std::vector<std::string> parts;
  for (const auto& [name, d] : deep) {
    parts.push_back(fmt::format("{} ({} us) on CPUs {}", name, d.first, FormatCpuList(d.second)));
  }
  out.Add(model::Severity::kInfo, "node",
          "deep C-states are enabled on " + where + ": " + Join(parts, "; ") +
              "; a core woken from them adds that latency to the interrupt or poll it serves",
          ev,
          "for latency-critical nodes limit them (tuned-adm profile network-latency, kernel parameter "
          "intel_idle.max_cstate=1 / processor.max_cstate=1, or echo 1 > .../cpuidle/state<k>/disable)");
}

}  // namespace

extern const Check kCpuFrequency = {
    "cpu.frequency", Rung::kHost,
    "CPUs local to the RDMA NICs or GPUs run a power-saving frequency governor (deep C-states are reported)",
    "With powersave, schedutil, ondemand or conservative, cores run at a low clock until load raises it: interrupt "
    "handlers, completion polling and NCCL's proxy threads pay the ramp-up on every burst, which shows as latency "
    "tails and lower small-message rates. Deep idle states add their exit latency to every wake-up.",
    "Set the performance governor on the NICs' and GPUs' NUMA nodes (cpupower frequency-set -g performance, tuned "
    "profiles network-latency/latency-performance, BIOS 'Maximum Performance'); read from "
    "/sys/devices/system/cpu/cpu<n>/cpufreq/scaling_governor and cpuidle/state<k>/{name,latency,disable}. Nodes "
    "without cpufreq (VMs) are info, not unknown.",
    &Run};

}  // namespace fabcheck::checks
