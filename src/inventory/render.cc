#include "inventory/render.h"

#include <fmt/format.h>

#include <map>

#include "base/strings.h"
#include "base/units.h"

namespace fabcheck::inventory {
namespace {

std::string Cut(std::string_view s, size_t width) {
  if (s.size() <= width) return std::string(s);
  return std::string(s.substr(0, width - 1)) + "~";
}

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
  out += fmt::format("{:<10} {:<7} {:<9} {:>5} {:<7} {:<3} {:<13} {:>3} {:>4} {}\n", "DEV/PORT", "STATE", "PHYS",
                     "GB/S", "WIDTH", "LL", "NETDEV", "GID", "NUMA", "FW");
  for (const auto& d : inv.rdma_devices) {
    if (d.ports.empty()) {
      out += fmt::format("{:<10} (no ports readable)\n", Cut(d.name, 10));
    }
    for (const auto& p : d.ports) {
      std::string rate = p.rate_gbps ? fmt::format("{:g}", *p.rate_gbps) : "?";
      std::string width = p.width ? fmt::format("{}X {}", *p.width, p.speed_name) : (p.rate_gbps ? "" : "?");
      std::string ll = p.link_layer == "InfiniBand" ? "IB" : p.link_layer == "Ethernet" ? "Eth" : "?";
      std::string gid = p.nccl_gid_index ? std::to_string(*p.nccl_gid_index) : (ll == "Eth" ? "none" : "?");
      out += fmt::format("{:<10} {:<7} {:<9} {:>5} {:<7} {:<3} {:<13} {:>3} {:>4} {}\n",
                         Cut(d.name + "/" + std::to_string(p.port), 10), Cut(p.state.empty() ? "?" : p.state, 7),
                         Cut(p.phys_state.empty() ? "?" : PhysShort(p.phys_state), 9), rate, Cut(width, 7), ll,
                         Cut(p.netdev.empty() ? "-" : p.netdev, 13), Cut(gid, 4), Numa(d.numa_node),
                         Cut(d.fw_ver.empty() ? "?" : d.fw_ver, 12));
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

void RenderNetdevs(std::string& out, const model::Inventory& inv) {
  Heading(out, "Network interfaces (on a PCI function, VLANs)");
  out += fmt::format("{:<15} {:<7} {:<4} {:>5} {:>7} {:<8} {}\n", "NAME", "STATE", "LINK", "MTU", "SPEED", "PCI/VLAN",
                     "ADDRESSES");
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
    std::string addresses;
    if (!n.addresses_known) {
      addresses = "?";
    } else {
      std::vector<std::string> shown;
      int more = 0;
      for (const auto& a : n.addresses) {
        if (a.family == "inet" && shown.size() < 2) {
          shown.push_back(a.address + "/" + std::to_string(a.prefix_len));
        } else {
          ++more;
        }
      }
      addresses = Join(shown, " ");
      if (more > 0) addresses += fmt::format("{}+{} v6", addresses.empty() ? "" : " ", more);
      if (addresses.empty()) addresses = "-";
    }
    out += fmt::format("{:<15} {:<7} {:<4} {:>5} {:>7} {:<8} {}\n", Cut(n.name, 15),
                       Cut(n.operstate.empty() ? "?" : n.operstate, 7), link, n.mtu ? std::to_string(*n.mtu) : "?",
                       speed, Cut(where, 8), Cut(addresses, 32));
  }
  if (hidden > 0) out += fmt::format("  + {} virtual interface(s) (lo, bridges, veth...): see --json\n", hidden);
}

void RenderGpus(std::string& out, const model::Inventory& inv) {
  Heading(out, fmt::format("GPUs ({})", inv.gpus.size()));
  if (inv.gpus.empty()) {
    out += "  none (no NVIDIA 3D/VGA controller on the PCI bus)\n";
    return;
  }
  out += fmt::format("{:<5} {:<8} {:>4} {:<18} {}\n", "GPU", "PCI", "NUMA", "PCIE (CUR/MAX)", "NAME");
  for (const auto& g : inv.gpus) {
    std::string name = g.name.empty() ? "? (" + g.pci.device_id + ")" : g.name;
    out += fmt::format("{:<5} {:<8} {:>4} {:<18} {}\n", "GPU" + std::to_string(g.index), ShortBdf(g.pci.bdf),
                       Numa(g.pci.numa_node), Cut(LinkPair(g.pci.link), 18), Cut(name, 40));
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
  out += fmt::format("{:<9} {:<8} {:>4} {:<18} {:<10} {}\n", "NIC", "PCI", "NUMA", "PCIE (CUR/MAX)", "ID",
                     "DRIVER / NETDEVS");
  for (const auto& n : inv.nics) {
    std::string id = fmt::format("{}:{}", n.pci.vendor_id.size() > 2 ? n.pci.vendor_id.substr(2) : "?",
                                 n.pci.device_id.size() > 2 ? n.pci.device_id.substr(2) : "?");
    std::string rest = (n.pci.driver.empty() ? "-" : n.pci.driver);
    if (!n.netdevs.empty()) rest += " " + Join(n.netdevs, ",");
    out += fmt::format("{:<9} {:<8} {:>4} {:<18} {:<10} {}\n", Cut(ShortBdf(n.label), 9), ShortBdf(n.pci.bdf),
                       Numa(n.pci.numa_node), Cut(LinkPair(n.pci.link), 18), id, Cut(rest, 26));
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
  for (const auto& g : inv.gpus) {
    out += fmt::format("{:<9} {:<8} {}\n", "GPU" + std::to_string(g.index), ShortBdf(g.pci.bdf), Cut(PathText(g.pci), 61));
  }
  for (const auto& n : inv.nics) {
    out += fmt::format("{:<9} {:<8} {}\n", Cut(ShortBdf(n.label), 9), ShortBdf(n.pci.bdf), Cut(PathText(n.pci), 61));
  }
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
    std::string header = fmt::format("{:<6}", "");
    for (size_t n = start; n < end; ++n) header += fmt::format(" {:<6}", Cut(t.nics[n], 6));
    while (!header.empty() && header.back() == ' ') header.pop_back();
    out += header + "\n";
    for (size_t g = 0; g < t.gpus.size(); ++g) {
      std::string row = fmt::format("{:<6}", t.gpus[g]);
      for (size_t n = start; n < end; ++n) row += fmt::format(" {:<6}", model::PathTypeName(t.distance[g][n]));
      out += std::string(Trim(row)) + "\n";
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

std::string RenderInventory(const model::Inventory& inv, const RenderOptions& options) {
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

}  // namespace fabcheck::inventory
