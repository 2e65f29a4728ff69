// kubelet.topology.unsatisfiable: single-numa-node and more GPUs or NICs than one NUMA node holds.
#include "k8s/rules/common.h"

namespace fabcheck::k8s::rules {
namespace {

constexpr const char* kId = "kubelet.topology.unsatisfiable";

void Check(const Context& ctx, Reporter& out) {
  const KubeletConfig* k = nullptr;
  for (const auto& kc : ctx.index.kubelets()) {
    if (kc.topology_policy == "single-numa-node") k = &kc;
  }
  if (!k) return;
  long long gpus_per_numa = ctx.ParamInt(kId, "gpusPerNumaNode", 4);
  long long nics_per_numa = ctx.ParamInt(kId, "nicsPerNumaNode", 4);
  bool pod_scope = k->topology_scope == "pod";
  std::string policy = "KubeletConfiguration " + k->source->file + ": topologyManagerPolicy single-numa-node, scope " +
                       (pod_scope ? "pod" : "container");
  std::string limits = "per NUMA node: " + std::to_string(gpus_per_numa) + " GPUs, " + std::to_string(nics_per_numa) +
                       " NICs (params gpusPerNumaNode, nicsPerNumaNode)";
  for (const auto& pod : ctx.pods) {
    if (pod_scope) {
      long long nics = 0;
      for (const auto& c : pod.containers) {
        if (!c.init) nics += PerDeviceNics(ctx, c);
      }
      if (pod.Gpus() > gpus_per_numa || nics > nics_per_numa) {
        out.Add(PodReport(pod, nullptr, pod.line,
                          "asks for " + std::to_string(pod.Gpus()) + " GPUs and " + std::to_string(nics) +
                              " NICs in one pod, more than one NUMA node holds: the kubelet rejects it with "
                              "TopologyAffinityError",
                          {policy, limits}));
      }
      continue;
    }
    for (const auto& c : pod.containers) {
      long long nics = PerDeviceNics(ctx, c);
      if (c.gpus <= gpus_per_numa && nics <= nics_per_numa) continue;
      out.Add(PodReport(pod, &c, c.line,
                        "asks for " + std::to_string(c.gpus) + " GPUs and " + std::to_string(nics) +
                            " NICs, more than one NUMA node holds: the kubelet rejects the pod with "
                            "TopologyAffinityError",
                        {policy, limits, "resources: " + DescribeResources(c)}));
    }
  }
}

}  // namespace

const Rule& RuleTopologyUnsatisfiable() {
  static const Rule kRule{
      {kId, Level::kError, "node", "single-numa-node policy cannot place the pod",
       "With topologyManagerPolicy single-numa-node every aligned resource of a container (or pod, with scope pod) "
       "must come from one NUMA node. An 8-GPU container on a 2-socket server (4 GPUs per socket) can never be "
       "admitted: the pod fails with TopologyAffinityError, and a controller recreates it in a loop.",
       "Use restricted or best-effort on nodes that run whole-node pods, split the job into one pod per NUMA node, "
       "or set params gpusPerNumaNode / nicsPerNumaNode to the real layout if the default (4) is wrong.",
       "kubernetes/kubernetes#84597, #110306; Kubernetes Topology Manager docs",
       {{"gpusPerNumaNode", "int", "4", "GPUs on one NUMA node of the GPU nodes"},
        {"nicsPerNumaNode", "int", "4", "RDMA NICs (VFs allocatable) on one NUMA node"}}},
      &Check};
  return kRule;
}

}  // namespace fabcheck::k8s::rules
