// cluster.tenant.no-isolation: tenant networks with vlan 0, or IB without a PKey.
#include <algorithm>
#include <set>

#include "base/strings.h"
#include "k8s/rules/common.h"

namespace fabcheck::k8s::rules {
namespace {

constexpr const char* kId = "cluster.tenant.no-isolation";

void Check(const Context& ctx, Reporter& out) {
  std::vector<std::string> tenants = ctx.ParamList(kId, "tenantNamespaces");
  std::set<std::string> namespaces;
  for (const auto& nad : ctx.index.nads()) {
    if (nad.cni_type == "sriov" || nad.cni_type == "ib-sriov" || nad.cni_type == "macvlan" ||
        nad.cni_type == "ipvlan") {
      namespaces.insert(nad.ns);
    }
  }
  // Several namespaces with their own data-plane networks means several tenants.
  bool multi_tenant = !tenants.empty() || namespaces.size() >= 2;
  if (!multi_tenant) return;
  for (const auto& nad : ctx.index.nads()) {
    if (!tenants.empty() && std::find(tenants.begin(), tenants.end(), nad.ns) == tenants.end()) continue;
    std::string where = "network " + nad.ns + "/" + nad.name;
    std::string tenant_list = "namespaces with data-plane networks: " +
                              Join(std::vector<std::string>(namespaces.begin(), namespaces.end()), ", ");
    if (nad.cni_type == "sriov" && nad.vlan.value_or(0) == 0) {
      out.Add(ObjectReport(*nad.source, nad.source->Spec().Get("vlan").LineOr(nad.config_line),
                           where + " has vlan 0 (untagged): its VFs share one L2 segment with every other tenant's",
                           {"vlan: " + std::to_string(nad.vlan.value_or(0)), tenant_list}));
    } else if (nad.cni_type == "ib-sriov" && nad.source->kind == "NetworkAttachmentDefinition" && nad.pkey.empty()) {
      out.Add(ObjectReport(*nad.source, nad.config_line,
                           where + " is InfiniBand without a \"pkey\": its VFs are in the default partition with "
                                   "every other tenant",
                           {"pkey: (not set)", tenant_list}));
    } else if ((nad.cni_type == "macvlan" || nad.cni_type == "ipvlan") && nad.vlan.value_or(0) == 0 &&
               !nad.master.empty() && nad.master.find('.') == std::string::npos) {
      out.Add(ObjectReport(*nad.source, nad.config_line,
                           where + " puts " + nad.cni_type + " on the untagged interface " + nad.master +
                               ": tenants share its L2 segment and its RDMA device",
                           {"master: " + nad.master, tenant_list}));
    }
  }
}

}  // namespace

const Rule& RuleTenantNoIsolation() {
  static const Rule kRule{
      {kId, Level::kWarning, "cluster", "Tenant network without VLAN or PKey isolation",
       "In a multi-tenant cluster each tenant's data-plane network needs its own VLAN (RoCE) or partition key "
       "(InfiniBand). Untagged SR-IOV VFs, IB VFs in the default partition, and macvlan on an untagged parent let "
       "one tenant's pods reach another's RDMA queue pairs; NetworkPolicy does not cover RDMA traffic at all.",
       "Give each tenant's SriovNetwork a distinct vlan, each IB network a pkey (with ib-kubernetes), and macvlan "
       "networks a VLAN sub-interface as master; list tenant namespaces in params.tenantNamespaces.",
       "k8s-lint-evidence RDMA039; sriov-network-operator SriovNetwork.spec.vlan; Mellanox/ib-kubernetes",
       {{"tenantNamespaces", "list", "(empty: any 2+ namespaces with networks)",
         "namespaces that are tenants and need isolated networks"}}},
      &Check};
  return kRule;
}

}  // namespace fabcheck::k8s::rules
