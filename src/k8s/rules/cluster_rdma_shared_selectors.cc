// cluster.rdma-shared.selectors: empty or contradictory selectors of the RDMA shared device plugin.
#include <map>
#include <regex>

#include "base/json_text.h"
#include "base/strings.h"
#include "k8s/rules/common.h"

namespace fabcheck::k8s::rules {
namespace {

using nlohmann::json;

std::vector<std::string> Strings(const json& j, const char* key) {
  std::vector<std::string> out;
  if (!j.is_object() || !j.contains(key) || !j[key].is_array()) return out;
  for (const auto& v : j[key]) {
    if (v.is_string()) out.push_back(v.get<std::string>());
  }
  return out;
}

void Check(const Context& ctx, Reporter& out) {
  static const std::regex kHex4("^[0-9a-fA-F]{4}$");
  std::map<std::string, const SharedRdmaResource*> names;
  std::map<std::string, std::string> interface_owner;  // netdev -> resource
  for (const auto& s : ctx.index.shared()) {
    const json& e = s.entry;
    const json selectors = e.contains("selectors") ? e["selectors"] : json::object();
    std::vector<std::string> devices = Strings(e, "devices");
    std::vector<std::string> if_names = Strings(selectors, "ifNames");
    auto report = [&](const std::string& message, std::vector<std::string> evidence, Level level) {
      Report r = ObjectReport(*s.source, s.line, "resource " + s.resource_name + ": " + message, std::move(evidence));
      r.evidence.push_back("configList entry: " + ToJsonText(e));
      r.level = level;
      out.Add(std::move(r));
    };
    if (s.short_name.empty()) report("the configList entry has no resourceName", {}, Level::kError);
    if (!e.contains("rdmaHcaMax") || !e["rdmaHcaMax"].is_number_integer() || e["rdmaHcaMax"].get<long long>() <= 0) {
      report("rdmaHcaMax is missing or not a positive integer; the plugin requires it", {}, Level::kError);
    }
    bool any_selector = !devices.empty();
    if (selectors.is_object()) {
      for (const auto& [k, v] : selectors.items()) any_selector = any_selector || (v.is_array() && !v.empty());
    }
    if (!any_selector) {
      report("no selectors and no devices: the resource selects no HCA (or, in older plugin versions, every HCA)",
             {"selectors: " + ToJsonText(selectors)}, Level::kError);
    }
    if (!devices.empty() && !if_names.empty()) {
      report("sets both the legacy devices list and selectors.ifNames; the plugin uses one of them",
             {"devices: " + Join(devices, ","), "ifNames: " + Join(if_names, ",")}, Level::kWarning);
    }
    for (const char* key : {"vendors", "deviceIDs"}) {
      for (const auto& v : Strings(selectors, key)) {
        if (!std::regex_match(v, kHex4)) {
          report(std::string("selectors.") + key + " value '" + v + "' is not a 4-digit hex PCI ID (e.g. 15b3)", {},
                 Level::kError);
        }
      }
    }
    std::vector<std::string> vendors = Strings(selectors, "vendors");
    std::vector<std::string> drivers = Strings(selectors, "drivers");
    bool mellanox_vendor = vendors.empty();
    for (const auto& v : vendors) mellanox_vendor = mellanox_vendor || ToLower(v) == "15b3";
    for (const auto& d : drivers) {
      if (StartsWith(d, "mlx5") && !mellanox_vendor) {
        report("selectors require vendor " + Join(vendors, ",") + " AND driver " + d +
                   ", which only NVIDIA/Mellanox (15b3) devices use: nothing matches",
               {}, Level::kError);
      }
    }
    // The cross-entry checks below compare with other objects; an earlier
    // definition of the same object is not another object.
    if (Superseded(ctx, *s.source)) continue;
    if (auto [it, inserted] = names.emplace(s.resource_name, &s); !inserted) {
      report("resourceName defined twice (also in " + it->second->source->Ref() + ")", {}, Level::kError);
    }
    for (const auto& dev : devices.empty() ? if_names : devices) {
      auto [it, inserted] = interface_owner.emplace(dev, s.resource_name);
      if (!inserted && it->second != s.resource_name) {
        report("interface " + dev + " is also selected by " + it->second +
                   ": one HCA advertised under two resources is over-committed",
               {}, Level::kWarning);
      }
    }
  }
}

}  // namespace

const Rule& RuleRdmaSharedSelectors() {
  static const Rule kRule{
      {"cluster.rdma-shared.selectors", Level::kError, "cluster", "RDMA shared device plugin selectors empty or contradictory",
       "Selectors are ANDed across fields and ORed within one. An entry with none selects nothing (no resource is "
       "advertised, pods stay Pending) or everything, depending on the plugin version; a vendor that contradicts "
       "the driver selects nothing; the same interface in two resources is handed out twice.",
       "Give each configList entry a resourceName, rdmaHcaMax and selectors that match the intended HCAs (vendors "
       "[\"15b3\"], deviceIDs, ifNames or linkTypes), with no interface in two entries.",
       "Mellanox/k8s-rdma-shared-dev-plugin README (selectors), #87", {}},
      &Check};
  return kRule;
}

}  // namespace fabcheck::k8s::rules
