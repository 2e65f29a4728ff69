// k8s.host-network: hostNetwork bypasses Multus and the device plugin's isolation.
#include "k8s/rules/common.h"

namespace fabcheck::k8s::rules {
namespace {

void Check(const Context& ctx, Reporter& out) {
  for (const auto& pod : ctx.pods) {
    if (!pod.host_network) continue;
    bool accelerated = pod.Gpus() > 0 || pod.UsesRdma();
    Report r = PodReport(pod, nullptr, pod.spec->Get("hostNetwork").line,
                         std::string("uses hostNetwork: true") +
                             (accelerated ? " in a GPU/RDMA workload: NCCL sees and may use every host interface, "
                                            "secondary networks and NetworkPolicy do not apply"
                                          : ": the pod shares the node's network namespace"),
                         {"spec.hostNetwork: true", "GPUs: " + std::to_string(pod.Gpus())});
    if (!accelerated) r.level = Level::kInfo;
    out.Add(std::move(r));
  }
}

}  // namespace

const Rule& RuleHostNetwork() {
  static const Rule kRule{
      {"k8s.host-network", Level::kWarning, "workload", "hostNetwork in a GPU or RDMA workload",
       "hostNetwork is a common workaround for a missing secondary network. The pod then sees every host "
       "interface (NCCL_SOCKET_IFNAME and NCCL_IB_HCA decide which it uses), port clashes appear between jobs on "
       "one node, and NetworkPolicy and Multus isolation are gone.",
       "Attach the data-plane interface with a Multus NetworkAttachmentDefinition and request the RDMA resource; "
       "keep hostNetwork for node agents that need it.",
       "kubeflow/mpi-operator#593, #219", {}},
      &Check};
  return kRule;
}

}  // namespace fabcheck::k8s::rules
