// k8s.privileged: privileged containers (a workaround that hides missing capabilities and devices).
#include "k8s/rules/common.h"

namespace fabcheck::k8s::rules {
namespace {

void Check(const Context& ctx, Reporter& out) {
  for (const auto& pod : ctx.pods) {
    bool accelerated = pod.Gpus() > 0 || pod.UsesRdma();
    for (const auto& c : pod.containers) {
      if (!c.privileged) continue;
      Report r = PodReport(pod, &c, c.privileged_line,
                           std::string("runs privileged") +
                               (accelerated ? " in a GPU/RDMA pod: it sees every device of the node, so device plugin "
                                              "allocations (GPUs, VFs, HCAs) and NUMA alignment no longer hold"
                                            : ": it has every capability and device of the node"),
                           {"securityContext.privileged: true", "resources: " + DescribeResources(c)});
      if (!accelerated) r.level = Level::kInfo;
      out.Add(std::move(r));
    }
  }
}

}  // namespace

const Rule& RulePrivileged() {
  static const Rule kRule{
      {"k8s.privileged", Level::kWarning, "workload", "Privileged container in a GPU or RDMA workload",
       "privileged: true is the usual workaround when RDMA 'does not work': it hides a missing IPC_LOCK or device "
       "mount, exposes every /dev/infiniband device and GPU of the node (so NCCL may use HCAs the pod was not "
       "given), and breaks the tenant boundary.",
       "Remove privileged; add only IPC_LOCK and request the RDMA device through its device plugin resource.",
       "sgl-project/ome#833; NVIDIA/nccl#925, #1925", {}},
      &Check};
  return kRule;
}

}  // namespace fabcheck::k8s::rules
