#include "inventory/pci.h"

#include "base/strings.h"
#include "base/units.h"

namespace fabcheck::inventory {
namespace {

std::optional<double> ReadSpeed(Reader& reader, const std::string& path) {
  auto text = reader.Attr(path, Need::kOptional);  // absent for functions without a PCIe capability
  if (!text) return std::nullopt;
  if (StartsWith(*text, "Unknown")) return std::nullopt;  // the kernel's own "unknown"
  auto gts = ParsePcieSpeedGts(*text);
  if (!gts.ok()) {
    reader.Warn(path, "unparsable link speed '" + text->substr(0, 40) + "'");
    return std::nullopt;
  }
  return *gts;
}

std::optional<int> ReadWidth(Reader& reader, const std::string& path) {
  auto width = reader.Int(path, Need::kOptional);
  // 255 (0xff) is what some kernels print for an unreadable link status.
  if (!width || *width <= 0 || *width > 32) return std::nullopt;
  return static_cast<int>(*width);
}

}  // namespace

PciKind ClassifyPci(std::string_view class_code, std::string_view vendor_id) {
  std::string cls = ToLower(class_code);
  std::string vendor = ToLower(vendor_id);
  if (StartsWith(cls, "0x02")) return PciKind::kNic;  // any network controller (Ethernet, InfiniBand)
  if (vendor == "0x10de") {
    // 0x0300 VGA and 0x0302 3D controller are GPUs; 0x0680 "other bridge" is an NVSwitch.
    if (StartsWith(cls, "0x0300") || StartsWith(cls, "0x0302")) return PciKind::kGpu;
    if (StartsWith(cls, "0x0680")) return PciKind::kNvSwitch;
  }
  return PciKind::kOther;
}

std::vector<PciSummary> ListPciFunctions(Reader& reader) {
  std::vector<PciSummary> out;
  // Optional: a sysroot may hold no PCI bus (containers, partial captures).
  for (const auto& bdf : reader.List(std::string(kPciDevicesDir), Need::kOptional)) {
    if (!LooksLikeBdf(bdf)) continue;
    const sys::pci::FunctionFiles files = sys::pci::Function(bdf);
    PciSummary s;
    s.bdf = bdf;
    s.class_code = reader.Attr(files.Attribute("class")).value_or("");
    s.vendor_id = reader.Attr(files.Attribute("vendor")).value_or("");
    s.kind = ClassifyPci(s.class_code, s.vendor_id);
    out.push_back(std::move(s));
  }
  return out;
}

model::PciLink ReadPciLink(Reader& reader, const std::string& dir) {
  const sys::pci::FunctionFiles files(dir);
  model::PciLink link;
  link.current_speed_gts = ReadSpeed(reader, files.Attribute("current_link_speed"));
  link.max_speed_gts = ReadSpeed(reader, files.Attribute("max_link_speed"));
  link.current_width = ReadWidth(reader, files.Attribute("current_link_width"));
  link.max_width = ReadWidth(reader, files.Attribute("max_link_width"));
  return link;
}

model::PciFunction ReadPciFunction(Reader& reader, const std::string& bdf) {
  model::PciFunction f;
  f.bdf = bdf;
  std::string link_dir = sys::pci::Function(bdf).dir();
  auto resolved = reader.root().Resolve(link_dir);
  std::string dir = resolved.ok() ? *resolved : link_dir;
  const sys::pci::FunctionFiles files(dir);
  f.sysfs_path = dir;
  f.vendor_id = reader.Attr(files.Attribute("vendor")).value_or("");
  f.device_id = reader.Attr(files.Attribute("device")).value_or("");
  f.class_code = reader.Attr(files.Attribute("class")).value_or("");
  f.subsystem_vendor_id = reader.Attr(files.Attribute("subsystem_vendor"), Need::kOptional).value_or("");
  f.subsystem_device_id = reader.Attr(files.Attribute("subsystem_device"), Need::kOptional).value_or("");
  f.driver = reader.LinkBasename(files.Driver());
  if (auto numa = reader.Int(files.Attribute("numa_node"), Need::kOptional); numa && *numa >= 0) {
    f.numa_node = static_cast<int>(*numa);
  }
  f.local_cpulist = reader.Attr(files.Attribute("local_cpulist"), Need::kOptional).value_or("");
  f.link = ReadPciLink(reader, dir);

  // /sys/devices/pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:02.0/0000:18:00.0:
  // the first non-BDF component under /sys/devices is the host bridge, the
  // BDF components between it and the device are bridge ports.
  std::vector<std::string> parts = Split(dir, '/', /*skip_empty=*/true);
  std::string prefix;
  std::vector<std::string> bridges;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    prefix += "/" + parts[i];
    if (StartsWith(parts[i], "pci") && !LooksLikeBdf(parts[i])) {
      f.root_complex = parts[i];
      bridges.clear();
    } else if (LooksLikeBdf(parts[i])) {
      bridges.push_back(prefix);
    }
  }
  for (size_t i = 0; i < bridges.size(); ++i) {
    model::PciBridge b;
    b.bdf = Basename(bridges[i]);
    const sys::pci::FunctionFiles bridge(bridges[i]);
    b.vendor_id = reader.Attr(bridge.Attribute("vendor")).value_or("");
    b.device_id = reader.Attr(bridge.Attribute("device")).value_or("");
    b.class_code = reader.Attr(bridge.Attribute("class")).value_or("");
    if (!StartsWith(ToLower(b.class_code), "0x0604")) {
      b.role = "bridge";
    } else if (i == 0) {
      b.role = "root_port";
    } else {
      // Below the root port, PCIe switches come as upstream + downstream port pairs.
      b.role = (i % 2 == 1) ? "switch_upstream" : "switch_downstream";
    }
    b.link = ReadPciLink(reader, bridges[i]);
    f.path.push_back(std::move(b));
  }
  return f;
}

}  // namespace fabcheck::inventory
