// cluster.sriov.resource-mismatch: network, policy and pod resource names disagree.
#include <set>

#include "base/strings.h"
#include "k8s/rules/common.h"

namespace fabcheck::k8s::rules {
namespace {

void Check(const Context& ctx, Reporter& out) {
  // Resource names the set can provide: SR-IOV policies (the operator adds its prefix) and the
  // SR-IOV device plugin config of a NicClusterPolicy/ConfigMap.
  std::set<std::string> provided;
  for (const auto& p : ctx.index.policies()) provided.insert(p.resource_name);
  for (const auto& r : ctx.index.sriov_dp()) provided.insert(r.short_name);
  if (provided.empty()) return;  // no provider in the set: nothing to compare with
  std::string known = Join(std::vector<std::string>(provided.begin(), provided.end()), ", ");

  for (const auto& nad : ctx.index.nads()) {
    if (nad.cni_type != "sriov" && nad.cni_type != "ib-sriov") continue;
    if (nad.resource_name.empty()) {
      out.Add(ObjectReport(*nad.source, nad.source->line,
                           nad.source->kind + " " + nad.name + " has no resourceName: the CNI cannot find its VF",
                           {"resources provided by the policies: " + known}));
      continue;
    }
    std::string short_name = ResourceShortName(nad.resource_name);
    if (provided.count(short_name)) continue;
    out.Add(ObjectReport(*nad.source, nad.source->line,
                         nad.source->kind + " " + nad.name + " uses resource " + nad.resource_name +
                             ", which no SriovNetworkNodePolicy or SR-IOV device plugin config provides",
                         {"resources provided: " + known}));
  }
  for (const auto& pod : ctx.pods) {
    for (const auto& c : pod.containers) {
      for (const auto& [name, count] : c.resources) {
        if (count <= 0 || ctx.index.FindShared(name) || StartsWith(name, "rdma/")) continue;
        if (!ctx.index.IsRdmaResource(name) && name.find("sriov") == std::string::npos) continue;
        if (StartsWith(name, "networking.gke.io")) continue;
        if (provided.count(ResourceShortName(name))) continue;
        out.Add(PodReport(pod, &c, c.line,
                          "requests " + name + ", which no SriovNetworkNodePolicy or SR-IOV device plugin config "
                          "in the set provides: the pod stays Pending (Insufficient " + name + ")",
                          {"resources provided: " + known}));
      }
    }
  }
}

}  // namespace

const Rule& RuleSriovResourceMismatch() {
  static const Rule kRule{
      {"cluster.sriov.resource-mismatch", Level::kError, "cluster", "SR-IOV network, policy and pod resource names disagree",
       "An SR-IOV RDMA attachment is three names that must agree: the SriovNetworkNodePolicy (or device plugin "
       "config) resourceName that creates the VF pool, the SriovNetwork/NAD resourceName that the CNI takes a VF "
       "from, and the pod's resource request. One typo and the pod is Pending forever or the CNI fails. Checked "
       "only when the set holds a policy or device plugin config.",
       "Use one resourceName across the policy, the SriovNetwork and the pod (the pod adds the prefix: "
       "nvidia.com/<name> with the Network Operator, openshift.io/<name> on OpenShift).",
       "k8snetworkplumbingwg/sriov-network-operator docs; k8s-lint-evidence RDMA034", {}},
      &Check};
  return kRule;
}

}  // namespace fabcheck::k8s::rules
