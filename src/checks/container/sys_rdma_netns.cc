// sys.rdma-netns: a RoCE port's netdev lives in another network namespace
// than the process (the Multus/SR-IOV trap).
#include "checks/check.h"
#include "checks/facts.h"
#include "sys/net_class.h"

namespace fabcheck::checks {
namespace {

void Run(const Context& ctx, Reporter& out) {
  if (!out.NeedRdma(ctx)) return;
  auto ports = ctx.RocePorts();
  if (ports.empty()) {
    out.Pass("node", "no RoCE port (InfiniBand needs no netdev for RDMA): nothing to check");
    return;
  }
  std::vector<std::string> good;
  for (const auto& ref : ports) {
    // The netdevs the port's GIDs belong to; sysfs names them even when they
    // are in another namespace, while /sys/class/net lists only ours.
    std::set<std::string> names;
    if (!ref.port->netdev.empty()) names.insert(ref.port->netdev);
    for (const auto& g : ref.port->gids) {
      if (!g.netdev.empty()) names.insert(g.netdev);
    }
    if (names.empty()) {
      out.Unknown(ref.Label(), "the port names no netdev (empty " + std::string(sys::infiniband::kGidNdevsRel) +
                                   "): cannot tell its namespace");
      continue;
    }
    std::vector<std::string> missing, present;
    for (const auto& n : names) (ctx.inventory->FindNetDevice(n) ? present : missing).push_back(n);
    if (!missing.empty()) {
      out.Add(present.empty() ? model::Severity::kFail : model::Severity::kWarn, ref.Label(),
              "the port's netdev " + Join(missing, ", ") + " is not in this process's network namespace" +
                  (present.empty() ? ": the process can open the RDMA device but owns none of its addresses, so "
                                     "RoCE connections (GIDs, rdma_cm, NCCL's GID choice) do not work from here"
                                   : " (" + Join(present, ", ") + " is)"),
              {ref.Files().GidNdev("*") + ": " + Join(std::vector<std::string>(names.begin(), names.end()), ", "),
               std::string(sys::net_class::kClassDir) + " (this namespace) lacks: " + Join(missing, ", ")},
              "give the pod the RDMA device that belongs to its own interface: SR-IOV (VF netdev + its RDMA device, "
              "isRdma: true) or macvlan/ipvlan on the PF with the shared RDMA plugin; with `rdma system set netns "
              "exclusive` move the RDMA device into the pod's namespace");
    } else {
      good.push_back(ref.Label() + " -> " + Join(present, ","));
    }
  }
  if (!good.empty()) out.Pass("node", "RoCE netdevs in this namespace: " + JoinLimited(good, 8));
}

}  // namespace

extern const Check kSysRdmaNetns = {
    "sys.rdma-netns", Rung::kContainer, "A RoCE port's netdev is in another network namespace than the process",
    "RoCE addresses come from the netdev: a pod that sees the host's RDMA device (shared mode) but not its "
    "netdev has no usable GID of its own, the classic Multus/SR-IOV misconfiguration.",
    "Attach the matching interface to the pod (SR-IOV VF with its RDMA device, or macvlan on the PF with the "
    "shared RDMA plugin), or use exclusive RDMA netns mode.",
    &Run};

}  // namespace fabcheck::checks
