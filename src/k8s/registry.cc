#include "k8s/registry.h"

namespace fabcheck::k8s {
namespace rules {
const Rule& RuleYamlSyntax();
const Rule& RuleYamlDuplicateKey();
const Rule& RuleSchemaInvalid();
const Rule& RuleRdmaNoIpcLock();
const Rule& RuleRdmaIpcLockNonroot();
const Rule& RuleShmMissing();
const Rule& RulePrivileged();
const Rule& RuleImageUnpinned();
const Rule& RuleHostNetwork();
const Rule& RuleHostpathDevices();
const Rule& RuleRdmaNoNetwork();
const Rule& RuleNadMissing();
const Rule& RuleNadCrossNamespace();
const Rule& RuleNadResourceNotRequested();
const Rule& RuleNcclSocketIfname();
const Rule& RuleNcclTransportDisabled();
const Rule& RuleNcclGidIndexFixed();
const Rule& RuleNcclIbHca();
const Rule& RuleRailsGpuNicRatio();
const Rule& RuleEnvShellSyntax();
const Rule& RuleMultinodeNoRdma();
const Rule& RulePsaIncompatible();
const Rule& RuleTopologyNotGuaranteed();
const Rule& RuleTopologyUnsatisfiable();
const Rule& RuleMemoryManagerNoReserved();
const Rule& RuleRdmaSharedHcaMax();
const Rule& RuleRdmaSharedSelectors();
const Rule& RuleSriovResourceMismatch();
const Rule& RuleSriovNotRdma();
const Rule& RuleNadMtu();
const Rule& RuleIpamRange();
const Rule& RuleNadConfigInvalid();
const Rule& RuleTenantNoIsolation();
const Rule& RuleRbacNetworkAdmin();
}  // namespace rules

const std::vector<Rule>& AllRules() {
  // Order: the phases (YAML, schema), then workloads, nodes, cluster.
  static const std::vector<Rule> kRules = {
      rules::RuleYamlSyntax(), rules::RuleYamlDuplicateKey(), rules::RuleSchemaInvalid(),
      rules::RuleRdmaNoIpcLock(), rules::RuleRdmaIpcLockNonroot(), rules::RuleShmMissing(),
      rules::RulePrivileged(), rules::RuleImageUnpinned(), rules::RuleHostNetwork(), rules::RuleHostpathDevices(),
      rules::RuleRdmaNoNetwork(), rules::RuleNadMissing(), rules::RuleNadCrossNamespace(),
      rules::RuleNadResourceNotRequested(), rules::RuleNcclSocketIfname(), rules::RuleNcclTransportDisabled(),
      rules::RuleNcclGidIndexFixed(), rules::RuleNcclIbHca(), rules::RuleRailsGpuNicRatio(),
      rules::RuleEnvShellSyntax(), rules::RuleMultinodeNoRdma(), rules::RulePsaIncompatible(),
      rules::RuleTopologyNotGuaranteed(), rules::RuleTopologyUnsatisfiable(), rules::RuleMemoryManagerNoReserved(),
      rules::RuleRdmaSharedHcaMax(), rules::RuleRdmaSharedSelectors(), rules::RuleSriovResourceMismatch(),
      rules::RuleSriovNotRdma(), rules::RuleNadMtu(), rules::RuleIpamRange(), rules::RuleNadConfigInvalid(),
      rules::RuleTenantNoIsolation(), rules::RuleRbacNetworkAdmin(),
  };
  return kRules;
}

const Rule* FindRule(std::string_view id) {
  for (const auto& r : AllRules()) {
    if (r.info.id == id) return &r;
  }
  return nullptr;
}

std::vector<model::CatalogEntry> CatalogEntries() {
  std::vector<model::CatalogEntry> out;
  for (const auto& r : AllRules()) {
    out.push_back({r.info.id, "k8s", r.info.scope, ToSeverity(r.info.level), r.info.title, r.info.why, r.info.remedy});
  }
  return out;
}

}  // namespace fabcheck::k8s
