// cpu.pinning: the CPUs the current process (or its container) may run on
// (Cpus_allowed_list, the cgroup's cpuset) lie only on the socket far from
// the RDMA NICs it would use.
#include <fmt/format.h>

#include "base/units.h"
#include "checks/check.h"
#include "checks/facts.h"
#include "sys/cpu.h"
#include "sys/procfs.h"

namespace fabcheck::checks {
namespace {

void Run(const Context& ctx, Reporter& out) {
  if (!out.NeedInventory(ctx)) return;
  sys::CpuPinning pin = sys::ReadCpuPinning(*ctx.root);
  if (!pin.allowed.ok()) {
    out.Unknown("process", "the CPUs this process may run on are unknown: " + pin.allowed.status().message(), {},
                ctx.root->live() ? "" : "take the capture with `fabcheck snapshot` inside the job's container");
    return;
  }
  std::vector<int> allowed = *pin.allowed;
  std::vector<std::string> ev = {std::string(sys::procfs::kSelfStatus) + ": Cpus_allowed_list = " + pin.allowed_text};
  if (pin.cpuset) {
    ev.push_back(Evidence(pin.cpuset_path, pin.cpuset_text) + " (the cgroup's cpuset)");
    auto both = CpuIntersection(allowed, *pin.cpuset);
    if (!both.empty()) allowed = both;
  } else if (!pin.cpuset_error.empty()) {
    ev.push_back("cgroup cpuset: " + pin.cpuset_error);
  }
  std::string filter;
  auto nics = NcclRdmaNics(ctx, &filter);
  if (!filter.empty()) ev.push_back("NICs NCCL would use: " + filter);
  std::string where = NodesLabel(NodesOfCpus(ctx, allowed));
  std::string set = fmt::format("CPUs {} ({} CPU(s), {})", FormatCpuList(allowed), allowed.size(), where);
  if (nics.empty()) {
    out.Info("process", "may run on " + set + "; no RDMA NIC " +
                            (filter.empty() ? std::string("on this node") : "selected by NCCL_IB_HCA") +
                            " to compare it with",
             ev);
    return;
  }
  std::vector<std::string> near, far, unknown;
  std::set<int> far_nodes;
  for (const auto* nic : nics) {
    auto local = LocalCpus(ctx, nic->pci);
    if (local.empty()) {
      unknown.push_back(nic->label);
      continue;
    }
    if (CpuIntersection(allowed, local).empty()) {
      far.push_back(nic->label);
      if (nic->pci.numa_node) far_nodes.insert(*nic->pci.numa_node);
    } else {
      near.push_back(nic->label);
    }
  }
  bool single_node = ctx.inventory->numa_nodes.size() <= 1;
  if (near.empty() && far.empty()) {
    if (single_node) {
      out.Pass("process", "may run on " + set + "; the node has one NUMA node, so every CPU is local to its NICs", ev);
    } else {
      out.Unknown("process", "may run on " + set + ", but the NUMA placement of " + JoinLimited(unknown, 4) +
                                 " is unknown", ev);
    }
    return;
  }
  if (near.empty()) {
    out.Add(model::Severity::kWarn, "process",
            "may run only on " + set + ", none of them local to the RDMA NICs it would use (" + JoinLimited(far, 4) +
                " on " + NodesLabel(far_nodes) + "): every completion it polls and every buffer the NIC reads crosses "
                "the CPU interconnect",
            ev,
            "pin the job to its NICs' NUMA node (numactl --cpunodebind / taskset -c with the NICs' local_cpulist); in "
            "Kubernetes give the pod guaranteed CPUs with the static CPU manager and the topology manager policy "
            "single-numa-node or restricted, so CPUs and RDMA devices come from one NUMA node");
    return;
  }
  if (!far.empty()) {
    ev.push_back("far from this CPU set: " + JoinLimited(far, 8) + " (" + NodesLabel(far_nodes) + ")");
    out.Info("process",
             "may run on " + set + ": local to " + JoinLimited(near, 4) + ", but not to " + JoinLimited(far, 4) +
                 " (fine for a job that uses only the near NICs; set NCCL_IB_HCA to them)",
             ev);
    return;
  }
  out.Pass("process", "may run on " + set + ", local to every RDMA NIC it would use (" + JoinLimited(near, 4) + ")",
           ev);
}

}  // namespace

extern const Check kCpuPinning = {
    "cpu.pinning", Rung::kHost,
    "The process or container may run only on CPUs of the socket far from the RDMA NICs it would use",
    "A job pinned to the far socket (a cpuset, taskset, or the Kubernetes static CPU manager choosing CPUs without "
    "the topology manager) reaches its NIC only across the CPU interconnect: completion polling, doorbells and "
    "host-memory staging all pay the extra hop, and the NIC's interrupts land on CPUs the job cannot use.",
    "Align CPUs with NICs: numactl/taskset with the NICs' local CPUs, or in Kubernetes the static CPU manager with the "
    "topology manager policy single-numa-node/restricted; read from /proc/self/status (Cpus_allowed_list) and the "
    "cgroup's cpuset (cpuset.cpus.effective), judged against the NICs selected by NCCL_IB_HCA when it is set.",
    &Run};

}  // namespace fabcheck::checks
