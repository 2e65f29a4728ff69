// k8s.rails.gpu-nic-ratio: more GPUs than RDMA NICs in one container.
#include "k8s/rules/common.h"

namespace fabcheck::k8s::rules {
namespace {

constexpr const char* kId = "k8s.rails.gpu-nic-ratio";

void Check(const Context& ctx, Reporter& out) {
  long long gpus_per_nic = ctx.ParamInt(kId, "gpusPerNic", 1);
  for (const auto& pod : ctx.pods) {
    for (const auto& c : pod.containers) {
      if (c.gpus == 0 || c.rdma_resources.empty()) continue;
      long long nics = KnownNics(ctx, c);
      if (ctx.profile.name == "gke") {
        nics = 0;  // GKE: one networking.gke.io.networks/rdma-N unit per NIC
        for (const auto& r : c.rdma_resources) nics += c.resources.at(r);
      }
      if (nics <= 0 || c.gpus <= nics * gpus_per_nic) continue;
      out.Add(PodReport(pod, &c, c.line,
                        std::to_string(c.gpus) + " GPUs share " + std::to_string(nics) +
                            " RDMA NIC(s): several GPUs' traffic crosses one NIC (and often the CPU interconnect), "
                            "so inter-node bandwidth per GPU is a fraction of a rail-optimised layout",
                        {"resources: " + DescribeResources(c),
                         "expected at most " + std::to_string(gpus_per_nic) + " GPU(s) per NIC"}));
    }
  }
}

}  // namespace

const Rule& RuleRailsGpuNicRatio() {
  static const Rule kRule{
      {kId, Level::kInfo, "workload", "More GPUs than RDMA NICs or VFs in a container",
       "Rail-optimised GPU servers pair each GPU with its own NIC under the same PCIe switch. A pod with 8 GPUs and "
       "1 or 2 VFs funnels all inter-node collectives through them; measured all-reduce bus bandwidth drops 2.2-4.5x.",
       "Request one VF (or one NIC's shared resource) per GPU, each on the GPU's PCIe switch, and attach one "
       "network per NIC; or accept the lower bandwidth for small jobs.",
       "Azure/AKS#5697",
       {{"gpusPerNic", "int", "1", "GPUs allowed per RDMA NIC before the rule speaks"}}},
      &Check};
  return kRule;
}

}  // namespace fabcheck::k8s::rules
