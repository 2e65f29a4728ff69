// k8s.nad.missing: the networks annotation names a NAD that is not in the set or not in the pod's namespace.
#include "base/strings.h"
#include "k8s/rules/common.h"

namespace fabcheck::k8s::rules {
namespace {

void Check(const Context& ctx, Reporter& out) {
  // Without any NAD in the set the linter cannot tell "missing" from "not given".
  if (!ctx.index.HasNadSources()) return;
  for (const auto& pod : ctx.pods) {
    for (const auto& ref : pod.networks) {
      if (ref.gke) continue;
      std::string ns = ref.ns.empty() ? pod.ns() : ref.ns;
      if (ctx.index.FindNad(ns, ref.name)) continue;
      std::vector<std::string> elsewhere;
      for (const Nad* nad : ctx.index.FindNadAnyNamespace(ref.name)) elsewhere.push_back(nad->ns + "/" + nad->name);
      std::string message = "names network " + ns + "/" + ref.name + ", which no NetworkAttachmentDefinition (or "
                            "SriovNetwork, MacvlanNetwork...) in the linted files defines";
      if (!elsewhere.empty()) {
        message += "; it exists as " + Join(elsewhere, ", ") +
                   ", but Multus looks up an unqualified name in the pod's own namespace";
      }
      out.Add(PodReport(pod, nullptr, pod.networks_line, message + ": the pod stays in ContainerCreating",
                        {pod.networks_key + ": " + pod.Annotation(pod.networks_key),
                         "pod namespace: " + pod.ns()}));
    }
  }
}

}  // namespace

const Rule& RuleNadMissing() {
  static const Rule kRule{
      {"k8s.nad.missing", Level::kError, "workload", "Networks annotation names a NAD that does not exist there",
       "Multus resolves each entry of k8s.v1.cni.cncf.io/networks to a NetworkAttachmentDefinition in the pod's "
       "namespace (or the one written as ns/name). A missing one keeps the pod in ContainerCreating with "
       "'cannot find a network-attachment-definition'. The rule runs only when the linted files define NADs.",
       "Create the NAD in the pod's namespace (SriovNetwork.spec.networkNamespace / MacvlanNetwork."
       "spec.networkNamespace decide where generated NADs go), or qualify the name as <namespace>/<name>.",
       "k8snetworkplumbingwg/multus-cni#337, #277", {}},
      &Check};
  return kRule;
}

}  // namespace fabcheck::k8s::rules
