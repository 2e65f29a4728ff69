#include "sys/infiniband.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <set>

#include "base/strings.h"

namespace fabcheck::sys::infiniband {

std::string DeviceDir(std::string_view device) { return fmt::format("{}/{}", kClassDir, device); }
std::string PortsDir(std::string_view device) { return fmt::format("{}/{}/ports", kClassDir, device); }
std::string PortDir(std::string_view device, int port) { return fmt::format("{}/{}/ports/{}", kClassDir, device, port); }
std::string PortFile(std::string_view device, int port, std::string_view name) {
  return fmt::format("{}/{}/ports/{}/{}", kClassDir, device, port, name);
}
std::string CountersDir(std::string_view device, int port) { return PortFile(device, port, "counters"); }
std::string HwCountersDir(std::string_view device, int port) { return PortFile(device, port, "hw_counters"); }
std::string NumaNodeFile(std::string_view device) { return fmt::format("{}/{}/device/numa_node", kClassDir, device); }

std::optional<PortState> ParsePortState(std::string_view text) {
  text = Trim(text);
  size_t colon = text.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  auto number = ParseInt(Trim(text.substr(0, colon)));
  if (!number || *number < 0 || *number > 255) return std::nullopt;
  PortState state;
  state.code = static_cast<int>(*number);
  state.name = std::string(Trim(text.substr(colon + 1)));
  if (state.name.empty()) return std::nullopt;
  return state;
}

Result<std::vector<std::string>> ListDevices(const SysRoot& root) { return root.ListDir(kClassDir); }

std::vector<int> PortNumbers(const std::vector<std::string>& names) {
  std::vector<int> ports;
  for (const auto& name : names) {
    auto n = ParseInt(name);
    if (n && *n > 0 && *n < 256) ports.push_back(static_cast<int>(*n));
  }
  std::sort(ports.begin(), ports.end());
  return ports;
}

Result<std::vector<int>> ListPorts(const SysRoot& root, std::string_view device) {
  ASSIGN_OR_RETURN(auto names, root.ListDir(PortsDir(device)));
  return PortNumbers(names);
}

std::string DeviceOfPath(std::string_view path) {
  const std::string prefix = std::string(kClassDir) + "/";
  if (path.rfind(prefix, 0) != 0) return "";
  std::string_view rest = path.substr(prefix.size());
  return std::string(rest.substr(0, rest.find('/')));
}

std::vector<std::string> PortGidNetdevs(const SysRoot& root, std::string_view device, int port) {
  PortFiles files = Port(device, port);
  std::set<std::string> out;
  auto indexes = root.ListDir(files.GidNdevs());
  for (const auto& index : indexes.ok() ? *indexes : std::vector<std::string>{}) {
    auto name = root.ReadAttribute(files.GidNdev(index));
    if (name.ok() && !name->empty()) out.insert(*name);
  }
  return {out.begin(), out.end()};
}

std::string VerbsIbdevFile(std::string_view uverbs) { return fmt::format("{}/{}/ibdev", kVerbsClassDir, uverbs); }
std::string VerbsCharDevice(std::string_view uverbs) { return fmt::format("{}/{}", kVerbsDevDir, uverbs); }

CharDeviceAccess ProbeLiveAccess(const std::string& path) {
  CharDeviceAccess a;
  a.exists = ::access(path.c_str(), F_OK) == 0;
  a.accessible = a.exists && ::access(path.c_str(), R_OK | W_OK) == 0;
  return a;
}

}  // namespace fabcheck::sys::infiniband
