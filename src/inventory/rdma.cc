#include "inventory/rdma.h"

#include <algorithm>

#include "base/strings.h"
#include "base/units.h"
#include "inventory/gid.h"
#include "sys/pci.h"

namespace fabcheck::inventory {
namespace {

void ReadCodeAndName(Reader& reader, const std::string& path, std::optional<int>* code, std::string* name) {
  auto text = reader.Attr(path);
  if (!text) return;
  auto state = sys::infiniband::ParsePortState(*text);
  if (!state) {
    reader.Warn(path, "unparsable '" + text->substr(0, 40) + "' (expected e.g. '4: ACTIVE')");
    return;
  }
  *code = state->code;
  *name = state->name;
}

std::optional<uint32_t> ReadHex(Reader& reader, const std::string& path) {
  auto value = reader.Int(path, Need::kOptional, 16);
  if (!value || *value < 0) return std::nullopt;
  return static_cast<uint32_t>(*value);
}

std::vector<model::GidEntry> ReadGids(Reader& reader, const sys::infiniband::PortFiles& files) {
  std::vector<std::string> names = reader.List(files.Gids(), Need::kOptional);
  std::sort(names.begin(), names.end(), NaturalLess);
  std::vector<model::GidEntry> gids;
  for (const auto& name : names) {
    auto index = ParseInt(name);
    if (!index) continue;
    std::string path = files.Gid(name);
    // Unused slots read as zeros; tolerate an unreadable slot quietly too,
    // since a 255-entry table with one odd slot should not drown the report.
    auto text = reader.Attr(path, Need::kOptional);
    if (!text || IsEmptyGid(*text)) continue;
    model::GidEntry entry;
    entry.index = static_cast<int>(*index);
    if (!ParseGid(*text, &entry)) {
      reader.Warn(path, "unparsable GID '" + text->substr(0, 48) + "'");
      continue;
    }
    // EINVAL on IB ports and empty slots: optional.
    entry.type = reader.Attr(files.GidType(name), Need::kOptional).value_or("");
    entry.netdev = reader.Attr(files.GidNdev(name), Need::kOptional).value_or("");
    gids.push_back(std::move(entry));
  }
  return gids;
}

// The ibdev2netdev mapping: netdevs of the same PCI function, matched to the
// port by dev_port (0-based); for RoCE the netdev of GID 0 when that fails.
std::string PortNetdev(Reader& reader, const sys::infiniband::DeviceFiles& device, const model::RdmaPort& port) {
  std::vector<std::string> netdevs = reader.List(device.Netdevs(), Need::kOptional);
  std::string fallback;
  for (const auto& name : netdevs) {
    auto dev_port = reader.Int(device.NetdevDevPort(name), Need::kOptional);
    if (dev_port && *dev_port + 1 == port.port) return name;
    if (fallback.empty() && !dev_port) fallback = name;
  }
  if (netdevs.size() == 1 && port.port == 1) return netdevs.front();
  if (port.link_layer == "Ethernet") {
    for (const auto& g : port.gids) {
      if (g.index == 0 && !g.netdev.empty()) return g.netdev;
    }
  }
  return fallback;
}

model::RdmaPort ReadPort(Reader& reader, const sys::infiniband::DeviceFiles& device, const std::string& number) {
  model::RdmaPort port;
  port.port = static_cast<int>(ParseInt(number).value_or(0));
  const sys::infiniband::PortFiles files = sys::infiniband::PortOf(device, number);
  ReadCodeAndName(reader, files.Attribute("state"), &port.state_code, &port.state);
  ReadCodeAndName(reader, files.Attribute("phys_state"), &port.phys_state_code, &port.phys_state);
  if (auto rate = reader.Attr(files.Attribute("rate"))) {
    port.rate_text = *rate;
    auto parsed = ParseIbRate(*rate);
    if (parsed.ok()) {
      port.rate_gbps = parsed->gbps;
      if (parsed->width > 0) port.width = parsed->width;
      port.speed_name = parsed->speed_name;
    } else {
      reader.Warn(files.Attribute("rate"), "unparsable rate '" + rate->substr(0, 40) + "' (expected e.g. '400 Gb/sec (4X NDR)')");
    }
  }
  port.link_layer = reader.Attr(files.Attribute("link_layer")).value_or("");
  if (port.link_layer == "Unknown") port.link_layer.clear();
  if (port.link_layer == "InfiniBand") {
    port.lid = ReadHex(reader, files.Attribute("lid"));
    port.sm_lid = ReadHex(reader, files.Attribute("sm_lid"));
  }
  port.gids = ReadGids(reader, files);
  port.nccl_gid_index = PickNcclGidIndex(port.link_layer, port.gids);
  port.netdev = PortNetdev(reader, device, port);
  return port;
}

}  // namespace

std::vector<model::RdmaDevice> ReadRdmaDevices(Reader& reader) {
  std::vector<std::string> names = reader.List(std::string(kInfinibandDir), Need::kOptional);
  std::sort(names.begin(), names.end(), NaturalLess);
  std::vector<model::RdmaDevice> devices;
  for (const auto& name : names) {
    // Resolve once: every later read then skips the class symlink.
    std::string link = sys::infiniband::DeviceDir(name);
    auto resolved = reader.root().Resolve(link);
    const sys::infiniband::DeviceFiles files(resolved.ok() ? *resolved : link);
    model::RdmaDevice d;
    d.name = name;
    d.node_type = reader.Attr(files.Attribute("node_type"), Need::kOptional).value_or("");
    d.node_guid = reader.Attr(files.Attribute("node_guid"), Need::kOptional).value_or("");
    d.sys_image_guid = reader.Attr(files.Attribute("sys_image_guid"), Need::kOptional).value_or("");
    d.fw_ver = reader.Attr(files.Attribute("fw_ver")).value_or("");
    d.hca_type = reader.Attr(files.Attribute("hca_type"), Need::kOptional).value_or("");
    d.board_id = reader.Attr(files.Attribute("board_id"), Need::kOptional).value_or("");
    if (auto device = reader.root().Resolve(files.PciDevice()); device.ok() && LooksLikeBdf(Basename(*device))) {
      d.pci_bdf = Basename(*device);
      const sys::pci::FunctionFiles pci(*device);
      if (auto numa = reader.Int(pci.Attribute("numa_node"), Need::kOptional); numa && *numa >= 0) {
        d.numa_node = static_cast<int>(*numa);
      }
      d.local_cpulist = reader.Attr(pci.Attribute("local_cpulist"), Need::kOptional).value_or("");
    }
    std::vector<std::string> ports = reader.List(files.Ports());
    std::sort(ports.begin(), ports.end(), NaturalLess);
    for (const auto& number : ports) {
      if (!ParseInt(number)) continue;
      d.ports.push_back(ReadPort(reader, files, number));
    }
    devices.push_back(std::move(d));
  }
  return devices;
}

}  // namespace fabcheck::inventory
