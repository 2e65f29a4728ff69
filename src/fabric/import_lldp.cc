// lldpcli prints neighbours in two JSON shapes. `-f json` collapses
// single-element lists and keys objects by name:
//   {"lldp": {"interface": {"eth0": {"chassis": {"leaf01": {"id": {...}}}, "port": {...}}}}}
// (with several interfaces "interface" is a list of such one-key objects);
// `-f json0` keeps every list and names in "name" fields:
//   {"lldp": [{"interface": [{"name": "eth0", "chassis": [{"name": [{"value": "leaf01"}]}]}]}]}
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

#include "fabric/importers.h"

namespace fabcheck::fabric {
namespace {

using nlohmann::json;

// The value of a json0 leaf: [{"value": "x"}] -> "x".
std::string Json0Value(const json& j) {
  if (j.is_array() && !j.empty() && j[0].is_object() && j[0].contains("value") && j[0]["value"].is_string()) {
    return j[0]["value"].get<std::string>();
  }
  return {};
}

// The neighbour's name from one interface's "chassis" (either shape).
std::string ChassisName(const json& chassis) {
  if (chassis.is_array()) {  // json0
    if (chassis.empty() || !chassis[0].is_object()) return {};
    const json& c = chassis[0];
    std::string name = c.contains("name") ? Json0Value(c["name"]) : "";
    if (name.empty() && c.contains("id") && c["id"].is_array() && !c["id"].empty() && c["id"][0].is_object()) {
      name = c["id"][0].value("value", "");
    }
    return name;
  }
  if (!chassis.is_object() || chassis.empty()) return {};
  // json: {"leaf01": {...}}, or {"id": {...}} when the neighbour sends no name.
  if (chassis.contains("id") && chassis["id"].is_object()) return chassis["id"].value("value", "");
  return chassis.begin().key();
}

Result<std::map<std::string, std::string>> Neighbours(const LldpHost& h) {
  json doc = json::parse(h.json, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("lldp")) {
    return InvalidArgumentError(fmt::format("lldp {}: not lldpcli JSON (no \"lldp\" object); give the output of "
                                            "`lldpcli -f json show neighbors` run on {}", h.host, h.host));
  }
  json lldp = doc["lldp"];
  if (lldp.is_array()) lldp = lldp.empty() ? json::object() : lldp[0];
  std::map<std::string, std::string> out;  // interface -> neighbour
  if (!lldp.is_object() || !lldp.contains("interface")) return out;  // no neighbours at all
  const json& ifaces = lldp["interface"];
  auto add = [&](const std::string& iface, const json& body) {
    if (!body.is_object() || !body.contains("chassis")) return;
    std::string name = ChassisName(body["chassis"]);
    if (!name.empty() && !out.count(iface)) out[iface] = name;  // the first neighbour of a port is its switch
  };
  if (ifaces.is_object()) {
    for (auto it = ifaces.begin(); it != ifaces.end(); ++it) add(it.key(), it.value());
  } else if (ifaces.is_array()) {
    for (const json& e : ifaces) {
      if (!e.is_object()) continue;
      if (e.contains("name") && e["name"].is_string()) {
        add(e["name"].get<std::string>(), e);  // json0
      } else {
        for (auto it = e.begin(); it != e.end(); ++it) add(it.key(), it.value());
      }
    }
  } else {
    return InvalidArgumentError(fmt::format("lldp {}: \"interface\" is neither an object nor a list", h.host));
  }
  return out;
}

}  // namespace

Result<Imported> ImportLldp(const std::vector<LldpHost>& hosts, const std::vector<std::string>& rail_ifaces) {
  if (hosts.empty()) return InvalidArgumentError("lldp: no hosts given");
  Imported out;
  out.fabric.source = "lldp";
  int rails = rail_ifaces.empty() ? 0 : static_cast<int>(rail_ifaces.size());
  for (const LldpHost& h : hosts) {
    ASSIGN_OR_RETURN(auto neighbours, Neighbours(h));
    std::vector<std::string> ifaces = rail_ifaces;
    if (ifaces.empty()) {
      for (const auto& [iface, _] : neighbours) ifaces.push_back(iface);
      std::sort(ifaces.begin(), ifaces.end(), [](const auto& a, const auto& b) { return NaturalLess(a, b); });
    }
    if (ifaces.empty()) {
      out.notes.push_back(fmt::format("{}: lldpcli saw no neighbour; left out (is lldpd running and the switch "
                                      "sending LLDP?)", h.host));
      continue;
    }
    if (rails == 0) rails = static_cast<int>(ifaces.size());
    if (static_cast<int>(ifaces.size()) != rails) {
      return InvalidArgumentError(fmt::format("lldp {}: neighbours on {} interfaces ({}), the first host had {}; "
                                              "name the rail interfaces with --iface", h.host, ifaces.size(),
                                              fmt::join(ifaces, ", "), rails));
    }
    Member m;
    m.name = h.host;
    for (const std::string& iface : ifaces) {
      auto it = neighbours.find(iface);
      if (it == neighbours.end()) {
        return NotFoundError(fmt::format("lldp {}: no neighbour on {} (cabled? lldpd listening on it?)", h.host, iface));
      }
      m.leaves.push_back(it->second);
    }
    out.fabric.members.push_back(std::move(m));
  }
  if (out.fabric.members.empty()) return NotFoundError("lldp: no host has a neighbour");
  out.fabric.rails = rails;
  RETURN_IF_ERROR(ValidateFabric(out.fabric));
  return out;
}

}  // namespace fabcheck::fabric
