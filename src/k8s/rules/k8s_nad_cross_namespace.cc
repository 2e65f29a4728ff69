// k8s.nad.cross-namespace: a pod attaches a network defined in another namespace.
#include <set>

#include "base/strings.h"
#include "k8s/rules/common.h"

namespace fabcheck::k8s::rules {
namespace {

constexpr const char* kId = "k8s.nad.cross-namespace";

void Check(const Context& ctx, Reporter& out) {
  // Namespaces that hold networks for every tenant on purpose: Multus's
  // globalNamespaces, and the platform's own (CoreWeave's cw-multus).
  std::set<std::string> global(ctx.profile.global_network_namespaces.begin(),
                               ctx.profile.global_network_namespaces.end());
  for (const auto& ns : ctx.ParamList(kId, "globalNamespaces")) global.insert(std::string(Trim(ns)));
  for (const auto& pod : ctx.pods) {
    for (const auto& ref : pod.networks) {
      if (ref.gke || ref.ns.empty() || ref.ns == pod.ns() || global.count(ref.ns)) continue;
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
      {kId, Level::kWarning, "workload", "Pod attaches a NAD from another namespace",
       "A NAD is a tenant's network: its VLAN or PKey, its IP pool and its RDMA resource. Multus lets any pod "
       "reference any namespace's NAD unless namespaceIsolation is on, so a cross-namespace reference either "
       "breaks isolation or stops working when isolation is enabled.",
       "Create the NAD in the workload's namespace (SriovNetwork.spec.networkNamespace), or enable Multus "
       "namespaceIsolation and list deliberate exceptions in globalNamespaces.",
       "k8snetworkplumbingwg/multus-cni namespaceIsolation; multus-cni PR #1520 (allowedResourceNames)",
       {{"globalNamespaces", "list", "(profile's)",
         "namespaces whose NADs any pod may use, as in Multus's globalNamespaces (the coreweave profile adds "
         "cw-multus)"}}},
      &Check};
  return kRule;
}

}  // namespace fabcheck::k8s::rules
