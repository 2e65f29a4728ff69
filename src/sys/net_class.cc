#include "sys/net_class.h"

#include <fmt/format.h>

#include "base/strings.h"

namespace fabcheck::sys::net_class {

InterfaceFiles Interface(std::string_view name) { return InterfaceFiles(fmt::format("{}/{}", kClassDir, name)); }

Result<std::vector<std::string>> ListInterfaces(const SysRoot& root) { return root.ListDir(kClassDir); }

std::vector<std::string> UpperDevices(const SysRoot& root, std::string_view name) {
  std::vector<std::string> out;
  auto entries = root.ListDir(Interface(name).dir());
  if (!entries.ok()) return out;
  for (const std::string& entry : *entries) {
    if (StartsWith(entry, "upper_")) out.push_back(entry.substr(6));
  }
  return out;
}

Result<int> ReadMtu(const SysRoot& root, std::string_view name) {
  const std::string path = Interface(name).Mtu();
  ASSIGN_OR_RETURN(std::string text, root.ReadAttribute(path));
  auto value = ParseInt(text);
  if (!value || *value < 0 || *value > (1 << 20)) {
    return DataLossError("unexpected content in " + root.DisplayPath(path) + ": \"" + text.substr(0, 40) + "\"");
  }
  return static_cast<int>(*value);
}

std::optional<int> ReadNumaNode(const SysRoot& root, std::string_view name) {
  auto text = root.ReadAttribute(Interface(name).NumaNode());
  if (!text.ok()) return std::nullopt;
  auto value = ParseInt(*text);
  if (!value || *value < 0) return std::nullopt;
  return static_cast<int>(*value);
}

Result<std::map<std::string, uint64_t>> ReadStatistics(const SysRoot& root, std::string_view name) {
  const std::string dir = Interface(name).Statistics();
  ASSIGN_OR_RETURN(auto files, root.ListDir(dir));
  std::map<std::string, uint64_t> out;
  for (const auto& file : files) {
    auto text = root.ReadAttribute(dir + "/" + file);
    if (!text.ok()) continue;
    if (auto value = ParseUint(*text)) out[file] = *value;
  }
  return out;
}

}  // namespace fabcheck::sys::net_class
