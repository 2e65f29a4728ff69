// k8s.rdma.no-network: an RDMA resource but no secondary network where the stack needs one.
#include "base/strings.h"
#include "k8s/rules/common.h"

namespace fabcheck::k8s::rules {
namespace {

void Check(const Context& ctx, Reporter& out) {
  if (!ctx.profile.rdma_needs_network) return;
  for (const auto& pod : ctx.pods) {
    if (pod.host_network || pod.networks_annotation || !pod.UsesRdma()) continue;
    std::vector<std::string> resources;
    bool all_ib = true;
    for (const auto& c : pod.containers) {
      for (const auto& r : c.rdma_resources) {
        resources.push_back(r);
        if (ctx.index.LinkTypeOf(r) != "ib") all_ib = false;
      }
    }
    // InfiniBand verbs need no IP interface in the pod; RoCE needs one for its GIDs.
    if (all_ib) continue;
    out.Add(PodReport(pod, nullptr, pod.meta->LineOr(pod.line),
                      "requests " + Join(resources, ", ") + " but has no " + ctx.profile.network_annotations[0] +
                          " annotation: the pod gets no data-plane interface, so RoCE has no GID for the pod's "
                          "address and NCCL bootstraps and falls back over eth0",
                      {"annotations: no " + Join(ctx.profile.network_annotations, " or "),
                       "link type of the resources: not known to be InfiniBand"}));
  }
}

}  // namespace

const Rule& RuleRdmaNoNetwork() {
  static const Rule kRule{
      {"k8s.rdma.no-network", Level::kWarning, "workload", "RDMA resource without a secondary network",
       "An SR-IOV VF or a shared RoCE HCA is usable only with an IP interface in the pod: the VF's netdev is moved "
       "and configured by its CNI, a shared HCA needs a macvlan/ipvlan interface whose address creates the pod's "
       "RoCE GID. Without the networks annotation the device is allocated but unusable, and NCCL quietly uses "
       "TCP over eth0.",
       "Add metadata.annotations k8s.v1.cni.cncf.io/networks: <nad-name> to the pod template (one entry per NIC), "
       "with a NetworkAttachmentDefinition whose resourceName matches the requested resource.",
       "NVIDIA/nccl#1796; pytorch/torchx#804; Mellanox/network-operator example pods", {}},
      &Check};
  return kRule;
}

}  // namespace fabcheck::k8s::rules
