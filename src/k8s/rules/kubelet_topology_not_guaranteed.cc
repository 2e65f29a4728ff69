// kubelet.topology.not-guaranteed: restricted/single-numa-node without static CPU manager or Guaranteed pods.
#include "k8s/rules/common.h"

namespace fabcheck::k8s::rules {
namespace {

bool Aligning(const std::string& policy) { return policy == "restricted" || policy == "single-numa-node"; }

void Check(const Context& ctx, Reporter& out) {
  const KubeletConfig* aligning = nullptr;
  for (const auto& k : ctx.index.kubelets()) {
    if (!Aligning(k.topology_policy)) continue;
    if (!aligning) aligning = &k;
    if (k.cpu_manager_policy != "static") {
      const YNode& node = k.source->Root().Get("cpuManagerPolicy");
      out.Add(ObjectReport(*k.source, node.LineOr(k.source->Root().Get("topologyManagerPolicy").line),
                           "topologyManagerPolicy is " + k.topology_policy + " but cpuManagerPolicy is " +
                               (k.cpu_manager_policy.empty() ? "unset (none)" : k.cpu_manager_policy) +
                               ": CPUs are not part of the alignment, so GPU and NIC end up on one NUMA node while "
                               "the process runs on any CPU",
                           {"topologyManagerPolicy: " + k.topology_policy,
                            "cpuManagerPolicy: " + (k.cpu_manager_policy.empty() ? "(unset)" : k.cpu_manager_policy)}));
    }
  }
  if (!aligning) return;
  for (const auto& pod : ctx.pods) {
    if ((pod.Gpus() == 0 && !pod.UsesRdma()) || IsGuaranteed(pod)) continue;
    Report r = PodReport(pod, nullptr, pod.line,
                         "asks for GPUs/RDMA devices on nodes with topologyManagerPolicy " + aligning->topology_policy +
                             " but is not Guaranteed QoS (every container needs cpu and memory limits equal to its "
                             "requests): its CPUs are not NUMA-aligned with its devices",
                         {"KubeletConfiguration " + aligning->source->file + ": topologyManagerPolicy " +
                          aligning->topology_policy});
    out.Add(std::move(r));
  }
}

}  // namespace

const Rule& RuleTopologyNotGuaranteed() {
  static const Rule kRule{
      {"kubelet.topology.not-guaranteed", Level::kWarning, "node",
       "Topology Manager alignment without static CPU manager or Guaranteed pods",
       "The Topology Manager aligns what its hint providers report. The CPU manager gives exclusive, NUMA-aligned "
       "CPUs only with cpuManagerPolicy: static and only to Guaranteed pods with integer CPU requests. Otherwise the "
       "GPU and NIC may be aligned while the process and its memory sit on the other socket.",
       "Set cpuManagerPolicy: static (with reservedSystemCPUs) on GPU nodes, and give GPU/RDMA containers cpu and "
       "memory limits equal to their requests (integer CPUs).",
       "kubernetes.io docs: Topology Manager, CPU Management Policies; rdma-facts §7.7", {}},
      &Check};
  return kRule;
}

}  // namespace fabcheck::k8s::rules
