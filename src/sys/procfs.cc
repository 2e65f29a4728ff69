#include "sys/procfs.h"

#include "base/strings.h"

namespace fabcheck::sys::procfs {

std::string ModuleDir(std::string_view module) { return std::string(kModuleDir) + "/" + std::string(module); }

std::set<std::string> ParseDefaultRouteInterfaces(std::string_view route_text) {
  std::set<std::string> out;
  // "Iface Destination Gateway Flags ..." with hex fields; default: Destination and Mask 00000000.
  auto lines = Split(route_text, '\n', /*skip_empty=*/true);
  for (size_t i = 1; i < lines.size(); ++i) {
    auto f = Split(lines[i], '\t', /*skip_empty=*/true);
    if (f.size() < 8) f = Split(lines[i], ' ', /*skip_empty=*/true);
    if (f.size() >= 8 && f[1] == "00000000" && f[7] == "00000000") out.insert(std::string(Trim(f[0])));
  }
  return out;
}

Result<std::set<std::string>> ReadDefaultRouteInterfaces(const SysRoot& root) {
  ASSIGN_OR_RETURN(std::string text, root.ReadFile(kNetRoute));
  return ParseDefaultRouteInterfaces(text);
}

std::map<std::string, Vlan> ParseVlanConfig(std::string_view text) {
  std::map<std::string, Vlan> vlans;
  for (const auto& line : Split(text, '\n', true)) {
    auto fields = Split(line, '|');
    if (fields.size() != 3) continue;
    auto id = ParseInt(Trim(fields[1]));
    if (!id) continue;  // the header line
    vlans[std::string(Trim(fields[0]))] = {std::string(Trim(fields[2])), static_cast<int>(*id)};
  }
  return vlans;
}

std::map<std::string, Vlan> ReadVlanConfig(const SysRoot& root) {
  auto text = root.ReadFile(kVlanConfig);
  if (!text.ok()) return {};
  return ParseVlanConfig(*text);
}

}  // namespace fabcheck::sys::procfs
