// cluster.nad.config-invalid: spec.config not JSON, no type, unknown CNI type.
#include <algorithm>
#include <set>

#include "base/strings.h"
#include "k8s/rules/common.h"

namespace fabcheck::k8s::rules {
namespace {

constexpr const char* kId = "cluster.nad.config-invalid";

const std::set<std::string> kKnownTypes = {
    "macvlan", "ipvlan", "sriov", "ib-sriov", "host-device", "ipoib", "bridge", "ptp", "vlan", "tuning",
    "bandwidth", "portmap", "firewall", "sbr", "vrf", "loopback", "dummy", "tap", "rdma", "route-override",
    "ovn-k8s-cni-overlay", "calico", "cilium-cni", "flannel", "multus", "whereabouts", "static", "dhcp",
    "host-local", "nv-ipam", "accelerated-bridge", "ovs", "kube-ovn", "dpdk", "userspace", "macvtap",
    "ib-kubernetes", "nvidia-k8s-ipam"};

void Check(const Context& ctx, Reporter& out) {
  std::vector<std::string> extra = ctx.ParamList(kId, "extraTypes");
  for (const auto& nad : ctx.index.nads()) {
    if (!nad.config_error.empty()) {
      out.Add(ObjectReport(*nad.source, nad.config_line,
                           "network " + nad.ns + "/" + nad.name + ": " + nad.config_error +
                               ": Multus fails every pod that attaches it",
                           {nad.source->kind == "NetworkAttachmentDefinition"
                                ? "spec.config: " + nad.source->Spec().Get("config").Str().substr(0, 200)
                                : "spec.ipam: " + nad.source->Spec().Get("ipam").Str().substr(0, 200)}));
      continue;
    }
    if (!nad.has_config) continue;
    for (const auto& type : nad.plugin_types) {
      if (type.empty()) {
        out.Add(ObjectReport(*nad.source, nad.config_line,
                             "network " + nad.ns + "/" + nad.name + ": a plugin of the conflist has no \"type\"", {}));
        continue;
      }
      if (kKnownTypes.count(type) || std::find(extra.begin(), extra.end(), type) != extra.end()) continue;
      Report r = ObjectReport(*nad.source, nad.config_line,
                              "network " + nad.ns + "/" + nad.name + ": CNI type '" + type +
                                  "' is not a known plugin; a typo here fails pod creation with 'failed to find "
                                  "plugin'",
                              {"type: " + type});
      r.level = Level::kWarning;
      out.Add(std::move(r));
    }
    const auto& ipam = nad.ipam;
    if (ipam.is_object() && ipam.contains("type") && ipam["type"].is_string()) {
      std::string t = ipam["type"].get<std::string>();
      if (!kKnownTypes.count(t) && std::find(extra.begin(), extra.end(), t) == extra.end()) {
        Report r = ObjectReport(*nad.source, nad.config_line,
                                "network " + nad.ns + "/" + nad.name + ": IPAM type '" + t + "' is not a known plugin",
                                {"ipam.type: " + t});
        r.level = Level::kWarning;
        out.Add(std::move(r));
      }
    }
  }
}

}  // namespace

const Rule& RuleNadConfigInvalid() {
  static const Rule kRule{
      {kId, Level::kError, "cluster", "NAD config not JSON, without a type, or an unknown CNI type",
       "spec.config is a JSON string that Multus hands to the CNI plugin named by \"type\". Invalid JSON (a YAML "
       "map pasted in, a trailing comma) or a misspelt type is only discovered when a pod starts, as a "
       "ContainerCreating pod with a CNI error in its events.",
       "Write spec.config as a JSON string (in a YAML block scalar '|'), with \"cniVersion\" and \"type\"; list "
       "site-specific plugin types in params.cluster.nad.config-invalid.extraTypes.",
       "k8snetworkplumbingwg/network-attachment-definition-client types.go; k8s-lint-evidence RDMA038",
       {{"extraTypes", "list", "(empty)", "additional CNI plugin types installed on the nodes"}}},
      &Check};
  return kRule;
}

}  // namespace fabcheck::k8s::rules
