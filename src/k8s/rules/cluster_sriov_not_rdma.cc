// cluster.sriov.not-rdma: VFs used for RDMA without isRdma, or an IB network on Ethernet VFs.
#include "k8s/rules/common.h"

namespace fabcheck::k8s::rules {
namespace {

void Check(const Context& ctx, Reporter& out) {
  for (const auto& p : ctx.index.policies()) {
    const YNode& spec = p.source->Spec();
    bool ib_network = false;
    for (const Object* n : ctx.set.OfKind("SriovIBNetwork")) {
      if (n->Spec().Get("resourceName").Str() == p.resource_name) {
        ib_network = true;
        if (p.link_type != "ib") {
          out.Add(ObjectReport(*p.source, spec.Get("linkType").LineOr(p.source->line),
                               "SriovIBNetwork " + n->name + " uses resource " + p.resource_name +
                                   ", whose policy has linkType " + (p.link_type.empty() ? "unset (eth)" : p.link_type) +
                                   ": the VFs are Ethernet, ib-sriov cannot configure them",
                               {"linkType: " + (p.link_type.empty() ? "(unset)" : p.link_type),
                                "SriovIBNetwork " + n->Ref() + " resourceName: " + p.resource_name}));
        }
      }
    }
    if (p.is_rdma || p.device_type == "vfio-pci") continue;
    bool gpu_user = false;
    for (const auto& pod : ctx.pods) {
      for (const auto& c : pod.containers) {
        for (const auto& [name, count] : c.resources) {
          if (ResourceShortName(name) == p.resource_name && count > 0 && pod.Gpus() > 0) gpu_user = true;
        }
      }
    }
    if (!gpu_user && !ib_network) continue;
    out.Add(ObjectReport(*p.source, spec.Get("isRdma").LineOr(p.source->line),
                         "policy for resource " + p.resource_name + " has isRdma " +
                             (p.is_rdma_set ? "false" : "unset") + " but " +
                             (ib_network ? "an SriovIBNetwork uses it" : "GPU pods request it") +
                             ": the VFs reach pods without their /dev/infiniband devices",
                         {"isRdma: " + std::string(p.is_rdma_set ? "false" : "(unset)"),
                          "deviceType: " + p.device_type}));
  }
}

}  // namespace

const Rule& RuleSriovNotRdma() {
  static const Rule kRule{
      {"cluster.sriov.not-rdma", Level::kError, "cluster", "SR-IOV VFs used for RDMA without isRdma / IB link type",
       "The SR-IOV device plugin mounts a VF's RDMA character devices only when the policy sets isRdma: true; "
       "without it the pod has a netdev but no uverbs device and NCCL falls back to sockets. An SriovIBNetwork on a "
       "policy without linkType: IB asks ib-sriov to configure Ethernet VFs and the CNI fails.",
       "Set isRdma: true (and linkType: IB for InfiniBand) in the SriovNetworkNodePolicy that creates the VFs.",
       "k8snetworkplumbingwg/sriov-network-operator SriovNetworkNodePolicy API; k8s-lint-evidence RDMA035", {}},
      &Check};
  return kRule;
}

}  // namespace fabcheck::k8s::rules
