// irq.affinity: the interrupt vectors of an RDMA NIC (found in /proc/interrupts
// by its PCI address or netdev names) may be served by CPUs outside the NIC's
// NUMA node (/proc/irq/<n>/smp_affinity_list); irqbalance's state is reported.
#include <fmt/format.h>

#include "base/units.h"
#include "checks/check.h"
#include "checks/facts.h"
#include "sys/irq.h"

namespace fabcheck::checks {
namespace {

constexpr const char* kOldCapture =
    "this capture was taken before fabcheck recorded the host tuning files (take it again with `fabcheck snapshot`)";

// "mlx5_comp3@pci:0000:18:00.0" -> "mlx5_comp3": the address is in the object already.
std::string ShortName(const sys::IrqVector& v) {
  std::string name = v.name.empty() ? "?" : v.name;
  auto at = name.find("@pci:");
  return at == std::string::npos ? name : name.substr(0, at);
}

void ReportIrqbalance(const Context& ctx, Reporter& out, bool any_far) {
  if (!ctx.host_evidence_complete) {
    out.Unknown("irqbalance", "irqbalance state unknown: " + std::string(kOldCapture));
    return;
  }
  sys::IrqbalanceState s = sys::ReadIrqbalance(*ctx.root);
  std::string state;
  if (!s.pids.empty()) {
    state = "irqbalance is running (pid " + std::to_string(s.pids.front()) + ")";
  } else if (s.unit_active.value_or(false)) {
    state = "irqbalance.service is running (its systemd cgroup exists; its process is not in this PID namespace)";
  } else if (s.proc_scanned) {
    state = "irqbalance is not running" +
            std::string(s.unit_active.has_value() ? "" : " in this PID namespace (a container sees only its own "
                                                         "processes)");
  } else {
    state = "irqbalance state unknown";
  }
  if (s.unit_enabled) state += *s.unit_enabled ? "; its unit is enabled at boot" : "; its unit is not enabled";
  if (!s.banned_cpus.empty()) state += "; " + s.banned_cpus;
  std::string remedy;
  if (s.Running() && any_far) {
    remedy = "irqbalance rewrites smp_affinity periodically: stop it (systemctl disable --now irqbalance) or keep it "
             "off the NIC vectors (IRQBALANCE_BANNED_CPULIST, --banirq) before pinning them";
  }
  out.Add(model::Severity::kInfo, "irqbalance",
          state + (s.Running() ? ": it moves interrupt vectors between CPUs by load, so a NIC's vectors can drift to "
                                 "the far socket unless its hint policy or banned CPUs keep them local"
                               : ""),
          s.evidence, remedy);
}

void Run(const Context& ctx, Reporter& out) {
  if (!out.NeedInventory(ctx)) return;
  auto table = sys::ReadInterrupts(*ctx.root);
  auto nics = CheckedRdmaNics(ctx);
  if (!table.ok()) {
    out.Unknown("node", "interrupt vectors unknown: " + table.status().message(), {},
                ctx.root->live() ? "read /proc/interrupts as on the node (is /proc mounted?)"
                                 : "take the capture with `fabcheck snapshot` (it records /proc/interrupts)");
    ReportIrqbalance(ctx, out, false);
    return;
  }
  std::string summary = fmt::format("{}: {} vectors over {} CPU column(s)", sys::kProcInterrupts, table->vectors.size(),
                                    table->cpus.size());
  if (nics.empty()) {
    out.Info("node", "no RDMA NIC on this node: no interrupt vector to match to a NIC's NUMA node", {summary});
    ReportIrqbalance(ctx, out, false);
    return;
  }
  bool single_node = ctx.inventory->numa_nodes.size() <= 1;
  bool any_far = false;
  std::vector<std::string> good, good_evidence;
  for (const model::Nic* nic : nics) {
    std::string object = nic->label + " (" + nic->pci.bdf + ")";
    std::vector<const sys::IrqVector*> vectors;
    for (const auto& v : table->vectors) {
      if (sys::VectorMatches(v, nic->pci.bdf, nic->netdevs)) vectors.push_back(&v);
    }
    if (vectors.empty()) {
      out.Unknown(object,
                  "no interrupt vector of this NIC in /proc/interrupts (matched by " + nic->pci.bdf +
                      (nic->netdevs.empty() ? std::string() : " and " + Join(nic->netdevs, ", ")) + ")",
                  {summary}, "check that its driver is bound and its ports are up (a NIC whose driver allocated no "
                             "vectors raises no completion interrupts)");
      continue;
    }
    std::vector<int> local = LocalCpus(ctx, nic->pci);
    std::string where = NodeLabel(nic->pci.numa_node);
    if (local.empty() && !single_node) {
      out.Unknown(object, "the NIC's NUMA node and local CPUs are unknown, so its " + std::to_string(vectors.size()) +
                              " interrupt vectors cannot be judged",
                  {nic->pci.sysfs_path + "/numa_node and local_cpulist unreadable or -1"});
      continue;
    }
    std::vector<std::string> far, far_evidence, unreadable;
    for (const auto* v : vectors) {
      auto cpus = sys::ReadIrqAffinity(*ctx.root, v->irq);
      if (!cpus.ok()) {
        unreadable.push_back(std::to_string(v->irq) + ": " + cpus.status().message());
        continue;
      }
      if (local.empty()) continue;  // one NUMA node: every CPU is local
      auto outside = CpuDifference(*cpus, local);
      if (outside.empty()) continue;
      far.push_back(fmt::format("{} (IRQ {}) -> CPUs {}", ShortName(*v), v->irq, FormatCpuList(*cpus)));
      far_evidence.push_back(Evidence(sys::IrqAffinityPath(v->irq), FormatCpuList(*cpus)) + " (outside: " +
                             FormatCpuList(outside) + ")");
    }
    if (!unreadable.empty()) {
      out.Unknown(object, std::to_string(unreadable.size()) + " of " + std::to_string(vectors.size()) +
                              " interrupt vectors have no readable affinity",
                  {"first: IRQ " + unreadable.front()},
                  "run as root on the node, or take the capture with `fabcheck snapshot` (it records "
                  "/proc/irq/<n>/smp_affinity_list)");
    }
    if (!far.empty()) {
      any_far = true;
      std::vector<std::string> ev = {"local CPUs of " + nic->label + " (" + where + "): " + FormatCpuList(local)};
      for (size_t i = 0; i < far_evidence.size() && i < 8; ++i) ev.push_back(far_evidence[i]);
      if (far_evidence.size() > 8) ev.push_back("and " + std::to_string(far_evidence.size() - 8) + " more vectors");
      out.Add(model::Severity::kWarn, object,
              fmt::format("{} of {} interrupt vectors may be served by CPUs outside the NIC's {} ({}): {}", far.size(),
                          vectors.size(), where, FormatCpuList(local), JoinLimited(far, 4)),
              ev,
              "pin each vector to the NIC's local CPUs: echo <cpus> > /proc/irq/<n>/smp_affinity_list, or NVIDIA's "
              "set_irq_affinity_cpulist.sh " + FormatCpuList(local) + " " +
                  (nic->netdevs.empty() ? std::string("<netdev>") : nic->netdevs.front()) +
                  "; completions served on the far socket cross the CPU interconnect on every interrupt");
    } else if (unreadable.size() < vectors.size()) {
      good.push_back(nic->label);
      good_evidence.push_back(fmt::format("{}: {} vectors, e.g. {} (IRQ {}), on {}", nic->label, vectors.size(),
                                          ShortName(*vectors.front()), vectors.front()->irq,
                                          local.empty() ? "the only NUMA node" : where + " CPUs " + FormatCpuList(local)));
    }
  }
  if (!good.empty()) {
    good_evidence.insert(good_evidence.begin(), summary);
    out.Pass("node", "interrupt vectors of " + JoinLimited(good, 8) + " are served by CPUs local to their NIC",
             good_evidence);
  }
  ReportIrqbalance(ctx, out, any_far);
}

}  // namespace

extern const Check kIrqAffinity = {
    "irq.affinity", Rung::kHost, "An RDMA NIC's interrupt vectors may be served by CPUs outside its NUMA node",
    "Every completion interrupt of the NIC runs its handler on the CPU its affinity names; on the far socket each one "
    "crosses the CPU interconnect and competes with the job's threads there, which shows as latency tails and lower "
    "message rates. irqbalance moves vectors by load and can undo a careful placement.",
    "Pin the NIC's vectors to its local CPUs (/proc/irq/<n>/smp_affinity_list, or set_irq_affinity_cpulist.sh from "
    "NVIDIA's tools) and keep irqbalance off them; read from /proc/interrupts (vectors matched by PCI address, e.g. "
    "mlx5_comp3@pci:0000:18:00.0, or netdev name) and /proc/irq/<n>/smp_affinity_list.",
    &Run};

}  // namespace fabcheck::checks
