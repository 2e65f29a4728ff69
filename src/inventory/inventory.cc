#include "inventory/inventory.h"

#include <algorithm>

#include "base/strings.h"
#include "base/units.h"
#include "inventory/netdev.h"
#include "inventory/pci.h"
#include "inventory/probes.h"
#include "inventory/rdma.h"
#include "inventory/reader.h"
#include "inventory/topology.h"
#include "sys/numa.h"
#include "sys/procfs.h"

namespace fabcheck::inventory {
namespace {

void LinkNics(const model::Inventory& inv, std::vector<model::Nic>* nics) {
  for (auto& nic : *nics) {
    for (const auto& d : inv.rdma_devices) {
      if (d.pci_bdf == nic.pci.bdf) nic.rdma_devices.push_back(d.name);
    }
    for (const auto& n : inv.netdevs) {
      // VLAN uppers have no device link, so only the function's own netdevs match.
      if (n.pci_bdf == nic.pci.bdf) nic.netdevs.push_back(n.name);
    }
    nic.label = !nic.rdma_devices.empty() ? nic.rdma_devices.front()
                : !nic.netdevs.empty()    ? nic.netdevs.front()
                                          : nic.pci.bdf;
  }
}

}  // namespace

std::vector<model::NumaNode> ReadNumaNodes(Reader& reader) {
  std::vector<std::string> names = reader.List(std::string(sys::numa::kNodeDir), Need::kOptional);
  std::sort(names.begin(), names.end(), NaturalLess);
  std::vector<model::NumaNode> nodes;
  for (const auto& name : names) {
    auto id = sys::numa::NodeId(name);
    if (!id) continue;
    model::NumaNode node;
    node.id = *id;
    std::string path = sys::numa::CpuListFile(name);
    // A memory-only node has an empty cpulist: not a fault.
    node.cpulist = reader.Attr(path, Need::kOptional).value_or("");
    auto cpus = ParseCpuList(node.cpulist);
    if (cpus.ok()) {
      node.cpu_count = static_cast<int>(cpus->size());
    } else {
      reader.Warn(path, "unparsable CPU list '" + node.cpulist.substr(0, 40) + "'");
      node.cpulist.clear();
    }
    nodes.push_back(std::move(node));
  }
  return nodes;
}

model::Inventory ReadInventory(const sys::SysRoot& root, const ReadOptions& options) {
  Reader reader(root);
  model::Inventory inv;
  inv.source = root.Describe();
  inv.host.hostname = reader.Attr(std::string(sys::procfs::kHostname), Need::kOptional).value_or("");
  inv.host.kernel = reader.Attr(std::string(sys::procfs::kOsRelease), Need::kOptional).value_or("");

  inv.rdma_sysfs_present = root.IsDirectory(std::string(kInfinibandDir));
  inv.rdma_devices = ReadRdmaDevices(reader);
  inv.verbs = ProbeVerbs(reader, options.query_libraries);
  inv.netdevs = ReadNetDevices(reader);

  for (const auto& summary : ListPciFunctions(reader)) {
    switch (summary.kind) {
      case PciKind::kGpu: {
        model::Gpu gpu;
        gpu.index = static_cast<int>(inv.gpus.size());
        gpu.pci = ReadPciFunction(reader, summary.bdf);
        inv.gpus.push_back(std::move(gpu));
        break;
      }
      case PciKind::kNvSwitch: {
        model::NvSwitch sw;
        sw.index = static_cast<int>(inv.nvswitches.size());
        sw.pci = ReadPciFunction(reader, summary.bdf);
        inv.nvswitches.push_back(std::move(sw));
        break;
      }
      case PciKind::kNic: {
        model::Nic nic;
        nic.pci = ReadPciFunction(reader, summary.bdf);
        inv.nics.push_back(std::move(nic));
        break;
      }
      case PciKind::kOther:
        break;
    }
  }
  LinkNics(inv, &inv.nics);
  // By name (mlx5_0, mlx5_1, ... then netdev names, then bare functions), the
  // order people and NCCL_IB_HCA use; the PCI address order is in nics[].pci.
  std::stable_sort(inv.nics.begin(), inv.nics.end(), [](const model::Nic& a, const model::Nic& b) {
    auto rank = [](const model::Nic& n) { return !n.rdma_devices.empty() ? 0 : !n.netdevs.empty() ? 1 : 2; };
    if (rank(a) != rank(b)) return rank(a) < rank(b);
    return NaturalLess(a.label, b.label);
  });
  inv.host.nvidia_driver = NameGpus(reader, options.query_libraries, &inv.gpus);
  inv.numa_nodes = ReadNumaNodes(reader);
  inv.topology = BuildTopology(inv.gpus, inv.nics);
  inv.warnings = std::move(reader.warnings());
  return inv;
}

}  // namespace fabcheck::inventory
