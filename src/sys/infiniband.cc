#include "sys/infiniband.h"

#include <fmt/format.h>

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

}  // namespace fabcheck::sys::infiniband
