// k8s.nad.resource-not-requested: the NAD's resourceName is not requested by the pod.
#include "k8s/rules/common.h"

namespace fabcheck::k8s::rules {
namespace {

constexpr const char* kId = "k8s.nad.resource-not-requested";

void Check(const Context& ctx, Reporter& out) {
  bool injector = ctx.ParamBool(kId, "injector", ctx.profile.resource_injector);
  for (const auto& pod : ctx.pods) {
    for (const auto& ref : pod.networks) {
      if (ref.gke) continue;
      const Nad* nad = ctx.index.FindNad(ref.ns.empty() ? pod.ns() : ref.ns, ref.name);
      if (!nad || nad->resource_name.empty()) continue;
      bool requested = false;
      for (const auto& c : pod.containers) {
        for (const auto& [name, count] : c.resources) {
          if (count > 0 && NetIndex::ResourceMatches(*nad, name)) requested = true;
        }
      }
      if (requested) continue;
      std::string resource = nad->resource_is_suffix ? "<prefix>/" + nad->resource_name : nad->resource_name;
      Report r = PodReport(pod, nullptr, pod.networks_line,
                           "attaches " + nad->ns + "/" + nad->name + ", whose resource " + resource +
                               " no container requests: the CNI finds no allocated device and the pod fails to start",
                           {"NAD " + nad->source->Ref() + " resourceName: " + resource,
                            pod.networks_key + ": " + pod.Annotation(pod.networks_key)});
      if (injector) {
        r.level = Level::kInfo;
        r.message += " (unless the network-resources-injector webhook adds it, as configured)";
      }
      out.Add(std::move(r));
    }
  }
}

}  // namespace

const Rule& RuleNadResourceNotRequested() {
  static const Rule kRule{
      {kId, Level::kError, "workload", "NAD's resourceName not requested by the pod",
       "A NAD annotated k8s.v1.cni.cncf.io/resourceName ties the network to a device plugin resource: the "
       "SR-IOV/host-device CNI takes the device the kubelet allocated for that resource. If no container requests "
       "it, the CNI fails ('VF pci addr is required') and the pod never starts, unless the "
       "network-resources-injector webhook adds the request.",
       "Add the resource to the container's requests and limits (one per attachment), or deploy the "
       "network-resources-injector and set params.k8s.nad.resource-not-requested.injector: true.",
       "k8snetworkplumbingwg/network-resources-injector#20, #78",
       {{"injector", "bool", "false (true in the openshift profile)",
         "the network-resources-injector webhook is deployed and adds the resource"}}},
      &Check};
  return kRule;
}

}  // namespace fabcheck::k8s::rules
