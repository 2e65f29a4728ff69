#include "report/inventory_text.h"

#include <fmt/format.h>

#include <map>

#include "base/strings.h"
#include "base/units.h"
#include "report/table.h"

namespace fabcheck::report {
namespace {

// 0000:18:00.0 -> 18:00.0 (domain 0 is the norm; keep others whole).
std::string ShortBdf(const std::string& bdf) { return StartsWith(bdf, "0000:") ? bdf.substr(5) : bdf; }

std::string Numa(const std::optional<int>& n) { return n ? std::to_string(*n) : "-"; }

std::string PhysShort(const std::string& phys) {
  static const std::map<std::string, std::string> kShort = {{"PortConfigurationTraining", "Training"},
                                                             {"LinkErrorRecovery", "ErrRecov"},
                                                             {"Phy Test", "PhyTest"}};
  auto it = kShort.find(phys);
  return it != kShort.end() ? it->second : phys;
}

std::string LinkPair(const model::PciLink& link) {
  std::string cur = FormatLink(link.current_speed_gts, link.current_width);
  std::string max = FormatLink(link.max_speed_gts, link.max_width);
  if (cur == "?" && max == "?") return "?";
  std::string text = cur == max ? cur : cur + "/" + max;
  return link.Degraded() ? text + " !" : text;
}

void Heading(std::string& out, std::string_view title) { out += fmt::format("\n{}\n", title); }

void RenderRdma(std::string& out, const model::Inventory& inv) {
  Heading(out, "RDMA ports");
  if (inv.rdma_devices.empty()) {
    out += inv.rdma_sysfs_present ? "  none: /sys/class/infiniband is empty (no RDMA device bound to a driver)\n"
                                  : "  none: no /sys/class/infiniband (RDMA drivers not loaded, or no RDMA NIC)\n";
    return;
  }
  TextTable table({{"DEV/PORT", 10, Align::kLeft, 10},
                   {"STATE", 7, Align::kLeft, 7},
                   {"PHYS", 9, Align::kLeft, 9},
                   {"GB/S", 5, Align::kRight},
                   {"WIDTH", 7, Align::kLeft, 7},
                   {"LL", 3},
                   {"NETDEV", 13, Align::kLeft, 13},
                   {"GID", 3, Align::kRight, 4},
                   {"NUMA", 4, Align::kRight},
                   {"FW", 0, Align::kLeft, 12}});
  out += table.Header();
  for (const auto& d : inv.rdma_devices) {
    if (d.ports.empty()) {
      out += fmt::format("{:<10} (no ports readable)\n", Cut(d.name, 10));
    }
    for (const auto& p : d.ports) {
      std::string rate = p.rate_gbps ? fmt::format("{:g}", *p.rate_gbps) : "?";
      std::string width = p.width ? fmt::format("{}X {}", *p.width, p.speed_name) : (p.rate_gbps ? "" : "?");
      std::string ll = p.link_layer == "InfiniBand" ? "IB" : p.link_layer == "Ethernet" ? "Eth" : "?";
      std::string gid = p.nccl_gid_index ? std::to_string(*p.nccl_gid_index) : (ll == "Eth" ? "none" : "?");
      out += table.Row({d.name + "/" + std::to_string(p.port), p.state.empty() ? "?" : p.state,
                        p.phys_state.empty() ? "?" : PhysShort(p.phys_state), rate, width, ll,
                        p.netdev.empty() ? "-" : p.netdev, gid, Numa(d.numa_node), d.fw_ver.empty() ? "?" : d.fw_ver});
    }
  }
  out += "  GID = the index NCCL picks by default (RoCE: first RoCE v2 IPv4 entry; IB: 0)\n";
}

bool ShowNetdev(const model::Inventory& inv, const model::NetDevice& n) {
  if (!n.pci_bdf.empty() || !n.vlan_parent.empty()) return true;
  for (const auto& d : inv.rdma_devices) {
    for (const auto& p : d.ports) {
      if (p.netdev == n.name) return true;
    }
  }
  return false;
}

std::string Addresses(const model::NetDevice& n) {
  if (!n.addresses_known) return "?";
  std::vector<std::string> shown;
  int more = 0;
  for (const auto& a : n.addresses) {
    if (a.family == "inet" && shown.size() < 2) {
      shown.push_back(a.address + "/" + std::to_string(a.prefix_len));
    } else {
      ++more;
    }
  }
  std::string addresses = Join(shown, " ");
  if (more > 0) addresses += fmt::format("{}+{} v6", addresses.empty() ? "" : " ", more);
  return addresses.empty() ? "-" : addresses;
}

void RenderNetdevs(std::string& out, const model::Inventory& inv) {
  Heading(out, "Network interfaces (on a PCI function, VLANs)");
  TextTable table({{"NAME", 15, Align::kLeft, 15},
                   {"STATE", 7, Align::kLeft, 7},
                   {"LINK", 4},
                   {"MTU", 5, Align::kRight},
                   {"SPEED", 7, Align::kRight},
                   {"PCI/VLAN", 8, Align::kLeft, 8},
                   {"ADDRESSES", 0, Align::kLeft, 32}});
  out += table.Header();
  int hidden = 0;
  for (const auto& n : inv.netdevs) {
    if (!ShowNetdev(inv, n)) {
      ++hidden;
      continue;
    }
    std::string link = n.carrier ? (*n.carrier ? "up" : "down") : "?";
    std::string speed = n.speed_mbps ? (*n.speed_mbps >= 1000 ? fmt::format("{:g}G", *n.speed_mbps / 1000.0)
                                                              : fmt::format("{}M", *n.speed_mbps))
                                     : "-";
    std::string where = !n.vlan_parent.empty() ? fmt::format("{}.{}", Cut(n.vlan_parent, 4), n.vlan_id.value_or(0))
                                               : ShortBdf(n.pci_bdf);
    out += table.Row({n.name, n.operstate.empty() ? "?" : n.operstate, link, n.mtu ? std::to_string(*n.mtu) : "?",
                      speed, where, Addresses(n)});
  }
  if (hidden > 0) out += fmt::format("  + {} virtual interface(s) (lo, bridges, veth...): see --json\n", hidden);
}

void RenderGpus(std::string& out, const model::Inventory& inv) {
  Heading(out, fmt::format("GPUs ({})", inv.gpus.size()));
  if (inv.gpus.empty()) {
    out += "  none (no NVIDIA 3D/VGA controller on the PCI bus)\n";
    return;
  }
  TextTable table({{"GPU", 5},
                   {"PCI", 8},
                   {"NUMA", 4, Align::kRight},
                   {"PCIE (CUR/MAX)", 18, Align::kLeft, 18},
                   {"NAME", 0, Align::kLeft, 40}});
  out += table.Header();
  for (const auto& g : inv.gpus) {
    std::string name = g.name.empty() ? "? (" + g.pci.device_id + ")" : g.name;
    out += table.Row({"GPU" + std::to_string(g.index), ShortBdf(g.pci.bdf), Numa(g.pci.numa_node),
                      LinkPair(g.pci.link), name});
  }
  if (!inv.nvswitches.empty()) {
    std::vector<std::string> bdfs;
    for (const auto& s : inv.nvswitches) bdfs.push_back(ShortBdf(s.pci.bdf));
    out += fmt::format("NVSwitches ({}): {}\n", inv.nvswitches.size(), Cut(Join(bdfs, " "), 62));
  }
}

void RenderNics(std::string& out, const model::Inventory& inv) {
  Heading(out, fmt::format("NICs ({})", inv.nics.size()));
  if (inv.nics.empty()) {
    out += "  none (no network controller on the PCI bus)\n";
    return;
  }
  TextTable table({{"NIC", 9, Align::kLeft, 9},
                   {"PCI", 8},
                   {"NUMA", 4, Align::kRight},
                   {"PCIE (CUR/MAX)", 18, Align::kLeft, 18},
                   {"ID", 10},
                   {"DRIVER / NETDEVS", 0, Align::kLeft, 26}});
  out += table.Header();
  for (const auto& n : inv.nics) {
    std::string id = fmt::format("{}:{}", n.pci.vendor_id.size() > 2 ? n.pci.vendor_id.substr(2) : "?",
                                 n.pci.device_id.size() > 2 ? n.pci.device_id.substr(2) : "?");
    std::string rest = (n.pci.driver.empty() ? "-" : n.pci.driver);
    if (!n.netdevs.empty()) rest += " " + Join(n.netdevs, ",");
    out += table.Row({ShortBdf(n.label), ShortBdf(n.pci.bdf), Numa(n.pci.numa_node), LinkPair(n.pci.link), id, rest});
  }
}

std::string PathText(const model::PciFunction& f) {
  std::string text = f.root_complex.empty() ? "?" : f.root_complex;
  for (const auto& b : f.path) text += " > " + ShortBdf(b.bdf) + (b.link.Degraded() ? "!" : "");
  return text;
}

void RenderPaths(std::string& out, const model::Inventory& inv) {
  if (inv.gpus.empty() && inv.nics.empty()) return;
  Heading(out, "PCIe paths (root complex > bridges; ! = link below its maximum)");
  TextTable table({{"", 9, Align::kLeft, 9}, {"", 8}, {"", 0, Align::kLeft, 61}});
  for (const auto& g : inv.gpus) out += table.Row({"GPU" + std::to_string(g.index), ShortBdf(g.pci.bdf), PathText(g.pci)});
  for (const auto& n : inv.nics) out += table.Row({ShortBdf(n.label), ShortBdf(n.pci.bdf), PathText(n.pci)});
}

void RenderNuma(std::string& out, const model::Inventory& inv) {
  Heading(out, "NUMA nodes");
  if (inv.numa_nodes.empty()) {
    out += "  none reported (/sys/devices/system/node absent)\n";
    return;
  }
  for (const auto& n : inv.numa_nodes) {
    out += fmt::format("node{:<3} {:>4} CPUs  {}\n", n.id, n.cpu_count, Cut(n.cpulist.empty() ? "-" : n.cpulist, 60));
  }
}

}  // namespace

std::string FormatLink(const std::optional<double>& gts, const std::optional<int>& width) {
  std::string speed = "?";
  if (gts) {
    int gen = PcieGeneration(*gts);
    speed = gen > 0 ? "Gen" + std::to_string(gen) : fmt::format("{:g}GT/s", *gts);
  }
  std::string lanes = width ? "x" + std::to_string(*width) : "x?";
  if (!gts && !width) return "?";
  return speed + " " + lanes;
}

std::string RenderMatrix(const model::Inventory& inv) {
  std::string out;
  const auto& t = inv.topology;
  Heading(out, "GPU x NIC distance");
  if (t.gpus.empty() || t.nics.empty()) {
    out += fmt::format("  nothing to pair: {} GPU(s), {} NIC(s)\n", t.gpus.size(), t.nics.size());
    return out;
  }
  // Columns of 7 (labels cut to 6): 10 NICs fit in 80 columns; wider nodes wrap.
  const size_t kPerBlock = 10;
  for (size_t start = 0; start < t.nics.size(); start += kPerBlock) {
    size_t end = std::min(t.nics.size(), start + kPerBlock);
    std::vector<Column> columns = {{"", 6}};
    std::vector<std::string> header = {""};
    for (size_t n = start; n < end; ++n) {
      columns.push_back({"", 6, Align::kLeft, 6});
      header.push_back(t.nics[n]);
    }
    // Rows end at their last non-blank character (no trailing padding).
    TextTable table(columns, {.indent = "", .separator = " ", .line_end = ""});
    auto trimmed = [](std::string text) {
      while (!text.empty() && text.back() == ' ') text.pop_back();
      return text + "\n";
    };
    out += trimmed(table.Row(header));
    for (size_t g = 0; g < t.gpus.size(); ++g) {
      std::vector<std::string> row = {t.gpus[g]};
      for (size_t n = start; n < end; ++n) row.emplace_back(model::PathTypeName(t.distance[g][n]));
      out += trimmed(table.Row(row));
    }
  }
  out += "Rails (nearest NIC per GPU, balanced):\n";
  std::string line;
  for (const auto& r : t.rails) {
    std::string item = fmt::format("GPU{}>{}({}{})", r.gpu, r.nic, model::PathTypeName(r.distance), r.shared ? ",shared" : "");
    if (line.size() + item.size() + 2 > 78) {
      out += " " + line + "\n";
      line.clear();
    }
    line += " " + item;
  }
  if (!line.empty()) out += " " + line + "\n";
  out += "Legend: PIX one PCIe switch, PXB several switches, PHB via the CPU's host\n"
         "bridge, NODE across host bridges in one NUMA node, SYS across sockets.\n";
  return out;
}

std::string RenderInventory(const model::Inventory& inv, const InventoryTextOptions& options) {
  std::string out;
  out += fmt::format("fabcheck inventory: {}", inv.source);
  if (!inv.host.hostname.empty()) out += fmt::format(", host {}", inv.host.hostname);
  if (!inv.host.kernel.empty()) out += fmt::format(", kernel {}", inv.host.kernel);
  out += "\n";
  if (inv.verbs.probed) out += fmt::format("libibverbs: {}\n", inv.verbs.message);
  RenderRdma(out, inv);
  RenderNetdevs(out, inv);
  RenderGpus(out, inv);
  RenderNics(out, inv);
  RenderPaths(out, inv);
  RenderNuma(out, inv);
  if (options.matrix) out += RenderMatrix(inv);
  if (!inv.warnings.empty()) {
    Heading(out, fmt::format("Unreadable ({}): those fields show as ?", inv.warnings.size()));
    for (const auto& w : inv.warnings) {
      std::string path = options.display_path ? options.display_path(w.path) : w.path;
      out += fmt::format("  {}: {}\n", path, w.message);
    }
  }
  return out;
}

}  // namespace fabcheck::report
