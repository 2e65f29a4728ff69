// cluster.rbac.network-admin: non-admin roles may edit NADs, SR-IOV networks or NicClusterPolicy.
#include <algorithm>
#include <set>

#include "base/strings.h"
#include "k8s/rules/common.h"

namespace fabcheck::k8s::rules {
namespace {

constexpr const char* kId = "cluster.rbac.network-admin";

struct Sensitive {
  const char* group;
  const char* resource;
};
constexpr Sensitive kSensitive[] = {
    {"k8s.cni.cncf.io", "network-attachment-definitions"},
    {"sriovnetwork.openshift.io", "sriovnetworks"},
    {"sriovnetwork.openshift.io", "sriovibnetworks"},
    {"sriovnetwork.openshift.io", "sriovnetworknodepolicies"},
    {"mellanox.com", "nicclusterpolicies"},
    {"mellanox.com", "macvlannetworks"},
    {"mellanox.com", "hostdevicenetworks"},
    {"mellanox.com", "ipoibnetworks"},
    {"nv-ipam.nvidia.com", "ippools"},
    {"whereabouts.cni.cncf.io", "ippools"},
};

bool Has(const YNode& list, const std::string& value) {
  for (const auto& item : list.items) {
    if (item->Str() == value || item->Str() == "*") return true;
  }
  return false;
}

// A role that the set binds only to ServiceAccounts its own Deployments and
// DaemonSets run as belongs to a controller (Multus, the SR-IOV operator, an
// IPAM controller): creating networks is that controller's job, not a tenant's
// privilege. A role bound to a user or group, or bound nowhere in the set, is
// still reported.
bool ControllerRole(const Context& ctx, const Object& role) {
  std::set<std::string> pod_accounts;
  for (const auto& pod : ctx.pods) {
    std::string sa = pod.spec->Get("serviceAccountName").Str();
    if (sa.empty()) sa = pod.spec->Get("serviceAccount").Str();
    pod_accounts.insert(pod.ns() + "/" + (sa.empty() ? "default" : sa));
  }
  bool bound = false;
  for (const auto& b : ctx.set.objects) {
    if (b.kind != "RoleBinding" && b.kind != "ClusterRoleBinding") continue;
    const YNode& ref = b.Root().Get("roleRef");
    if (ref.Get("kind").Str() != role.kind || ref.Get("name").Str() != role.name) continue;
    if (role.kind == "Role" && b.ns != role.ns) continue;
    bound = true;
    for (const auto& subject : b.Root().Get("subjects").items) {
      if (subject->Get("kind").Str() != "ServiceAccount") return false;
      std::string ns = subject->Get("namespace").Str();
      if (ns.empty()) ns = b.namespaced ? b.ns : "default";
      if (!pod_accounts.count(ns + "/" + subject->Get("name").Str())) return false;
    }
  }
  return bound;
}

void Check(const Context& ctx, Reporter& out) {
  std::vector<std::string> admins = ctx.ParamList(kId, "adminRoles");
  if (admins.empty()) admins = {"cluster-admin", "admin"};
  for (const auto& obj : ctx.set.objects) {
    if (obj.kind != "Role" && obj.kind != "ClusterRole") continue;
    if (StartsWith(obj.name, "system:") || std::find(admins.begin(), admins.end(), obj.name) != admins.end()) continue;
    for (const auto& rule : obj.Root().Get("rules").items) {
      const YNode& verbs = rule->Get("verbs");
      std::vector<std::string> writes;
      for (const char* v : {"create", "update", "patch", "delete", "deletecollection"}) {
        if (Has(verbs, v)) writes.push_back(v);
      }
      if (writes.empty()) continue;
      std::vector<std::string> hits;
      for (const auto& s : kSensitive) {
        if (Has(rule->Get("apiGroups"), s.group) && Has(rule->Get("resources"), s.resource)) {
          hits.push_back(std::string(s.resource) + "." + s.group);
        }
      }
      if (hits.empty()) continue;
      const YNode& labels = obj.Metadata().Get("labels");
      std::string aggregated;
      for (const char* agg : {"rbac.authorization.k8s.io/aggregate-to-edit", "rbac.authorization.k8s.io/aggregate-to-admin"}) {
        if (labels.Get(agg).Str() == "true") aggregated = std::string(" (aggregated into the built-in role via ") + agg + ")";
      }
      if (aggregated.empty() && ControllerRole(ctx, obj)) continue;
      out.Add(ObjectReport(obj, rule->LineOr(obj.line),
                           obj.kind + " " + obj.name + " lets its subjects " + Join(writes, "/") + " " +
                               Join(hits, ", ") + aggregated +
                               ": a tenant can attach pods to another tenant's VLAN/PKey, or point a network at the "
                               "management interface",
                           {"verbs: " + Join(writes, ", "), "resources: " + Join(hits, ", ")}));
    }
  }
}

}  // namespace

const Rule& RuleRbacNetworkAdmin() {
  static const Rule kRule{
      {kId, Level::kWarning, "cluster", "Non-admin role may edit NADs, SR-IOV networks or NicClusterPolicy",
       "Whoever writes a NetworkAttachmentDefinition chooses its master interface, VLAN/PKey, IP pool and RDMA "
       "resource; whoever writes SriovNetworks or the NicClusterPolicy reconfigures every node's NICs. Granting "
       "that to tenant roles (or aggregating it into 'edit') breaks the network boundary the operator set up.",
       "Keep write access to these resources with cluster administrators; give tenants read access, or a "
       "validating policy that pins master, vlan and resourceName per namespace.",
       "k8s-lint-evidence RDMA040; multus-cni PR #1520",
       {{"adminRoles", "list", "cluster-admin, admin", "role names allowed to edit network resources"}}},
      &Check};
  return kRule;
}

}  // namespace fabcheck::k8s::rules
