// k8s.nad.cross-namespace: a pod attaches a network defined in another namespace.
#include "k8s/rules/common.h"

namespace fabcheck::k8s::rules {
namespace {

void Check(const Context& ctx, Reporter& out) {
  for (const auto& pod : ctx.pods) {
    for (const auto& ref : pod.networks) {
      if (ref.gke || ref.ns.empty() || ref.ns == pod.ns()) continue;
      out.Add(PodReport(pod, nullptr, pod.networks_line,
                        "attaches network " + ref.ns + "/" + ref.name + " from another namespace (pod namespace " +
                            pod.ns() + "): it shares that tenant's network and address pool",
                        {pod.networks_key + ": " + pod.Annotation(pod.networks_key)}));
    }
  }
}

}  // namespace

const Rule& RuleNadCrossNamespace() {
  static const Rule kRule{
      {"k8s.nad.cross-namespace", Level::kWarning, "workload", "Pod attaches a NAD from another namespace",
       "A NAD is a tenant's network: its VLAN or PKey, its IP pool and its RDMA resource. Multus lets any pod "
       "reference any namespace's NAD unless namespaceIsolation is on, so a cross-namespace reference either "
       "breaks isolation or stops working when isolation is enabled.",
       "Create the NAD in the workload's namespace (SriovNetwork.spec.networkNamespace), or enable Multus "
       "namespaceIsolation and list deliberate exceptions in globalNamespaces.",
       "k8snetworkplumbingwg/multus-cni namespaceIsolation; multus-cni PR #1520 (allowedResourceNames)", {}},
      &Check};
  return kRule;
}

}  // namespace fabcheck::k8s::rules
