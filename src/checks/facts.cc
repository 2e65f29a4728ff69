#include "checks/facts.h"

#include <algorithm>

#include "base/strings.h"
#include "base/units.h"
#include "checks/nccl_match.h"

namespace fabcheck::checks {

const char* NcclPathName(int path) {
  static const char* kNames[] = {"LOC", "NVL", "NVB", "PIX", "PXB", "PXN", "PHB", "SYS", "NET", "DIS"};
  return path >= 0 && path <= kPathDis ? kNames[path] : "?";
}

std::optional<int> NcclPathFor(model::PathType type) {
  switch (type) {
    case model::PathType::kPix: return kPathPix;
    case model::PathType::kPxb: return kPathPxb;
    case model::PathType::kPhb: return kPathPhb;
    case model::PathType::kNode: return kPathPhb;
    case model::PathType::kSys: return kPathSys;
    case model::PathType::kUnknown: return std::nullopt;
  }
  return std::nullopt;
}

bool IsCheckedRdmaNic(const Context& ctx, const model::Nic& nic) {
  for (const auto& dev : nic.rdma_devices) {
    if (!ctx.profile || ctx.profile->IsComputeNic(dev)) return true;
  }
  return false;
}

std::vector<Nearest> NearestRdmaNics(const Context& ctx) {
  std::vector<Nearest> out;
  if (!ctx.inventory) return out;
  const auto& topo = ctx.inventory->topology;
  for (size_t g = 0; g < topo.gpus.size() && g < topo.distance.size(); ++g) {
    Nearest n;
    if (g < ctx.inventory->gpus.size()) n.gpu = &ctx.inventory->gpus[g];
    for (size_t c = 0; c < topo.nics.size() && c < topo.distance[g].size(); ++c) {
      const model::Nic* nic = ctx.inventory->FindNic(topo.nics[c]);
      if (!nic || !IsCheckedRdmaNic(ctx, *nic)) continue;
      model::PathType d = topo.distance[g][c];
      if (d == model::PathType::kUnknown) continue;
      // The enum is ordered nearest first (PIX < PXB < PHB < NODE < SYS).
      if (n.nics.empty() || static_cast<int>(d) < static_cast<int>(n.distance)) {
        n.distance = d;
        n.nics = {nic};
      } else if (d == n.distance) {
        n.nics.push_back(nic);
      }
    }
    out.push_back(std::move(n));
  }
  return out;
}

std::string PhysicalNetdev(const Context& ctx, const Context::PortRef& ref) {
  const auto* inv = ctx.inventory;
  if (!inv) return "";
  if (const auto* nd = inv->FindNetDevice(ref.port->netdev); nd && !nd->pci_bdf.empty() && nd->vlan_parent.empty()) {
    return nd->name;
  }
  const model::NetDevice* best = nullptr;
  for (const auto& nd : inv->netdevs) {
    if (nd.pci_bdf != ref.device->pci_bdf || !nd.vlan_parent.empty()) continue;
    // A two-port function: dev_port is 0-based, RDMA ports 1-based.
    if (nd.dev_port && *nd.dev_port + 1 == ref.port->port) return nd.name;
    if (!best) best = &nd;
  }
  return best ? best->name : "";
}


std::vector<const model::Nic*> CheckedRdmaNics(const Context& ctx) {
  std::vector<const model::Nic*> out;
  if (!ctx.inventory) return out;
  for (const auto& nic : ctx.inventory->nics) {
    if (!nic.rdma_devices.empty() && IsCheckedRdmaNic(ctx, nic)) out.push_back(&nic);
  }
  return out;
}

std::vector<const model::Nic*> NcclRdmaNics(const Context& ctx, std::string* filter) {
  auto nics = CheckedRdmaNics(ctx);
  auto hca = ctx.env ? ctx.env->Get("NCCL_IB_HCA") : std::nullopt;
  if (!hca || Trim(hca->value).empty()) return nics;
  NcclList list = ParseNcclList(hca->value, kNcclMaxIbDevs);
  std::vector<const model::Nic*> out;
  for (const auto* nic : nics) {
    bool hit = false;
    for (const auto& dev : nic->rdma_devices) {
      for (const auto& entry : list.entries) hit |= NcclEntryMatches(entry, list.exact, dev, -1);
    }
    if (hit != list.exclude) out.push_back(nic);
  }
  if (filter) *filter = ctx.env->Describe("NCCL_IB_HCA");
  return out;
}

std::vector<int> LocalCpus(const Context& ctx, const model::PciFunction& pci) {
  if (!pci.local_cpulist.empty()) {
    if (auto cpus = ParseCpuList(pci.local_cpulist); cpus.ok() && !cpus->empty()) return *cpus;
  }
  if (pci.numa_node && ctx.inventory) {
    for (const auto& node : ctx.inventory->numa_nodes) {
      if (node.id != *pci.numa_node) continue;
      if (auto cpus = ParseCpuList(node.cpulist); cpus.ok()) return *cpus;
    }
  }
  return {};
}

std::set<int> NodesOfCpus(const Context& ctx, const std::vector<int>& cpus) {
  std::set<int> out;
  if (!ctx.inventory) return out;
  for (const auto& node : ctx.inventory->numa_nodes) {
    auto node_cpus = ParseCpuList(node.cpulist);
    if (node_cpus.ok() && !CpuIntersection(*node_cpus, cpus).empty()) out.insert(node.id);
  }
  return out;
}

std::string NodesLabel(const std::set<int>& nodes) {
  if (nodes.empty()) return "NUMA node ?";
  std::vector<std::string> ids;
  for (int n : nodes) ids.push_back(std::to_string(n));
  return (nodes.size() == 1 ? "NUMA node " : "NUMA nodes ") + Join(ids, ", ");
}

std::string NodeLabel(std::optional<int> node) { return node ? "NUMA node " + std::to_string(*node) : "NUMA node ?"; }

std::vector<int> CpuUnion(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<int> out;
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}
std::vector<int> CpuIntersection(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<int> out;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}
std::vector<int> CpuDifference(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<int> out;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

std::string JoinLimited(const std::vector<std::string>& items, size_t limit) {
  if (items.size() <= limit) return Join(items, ", ");
  std::vector<std::string> head(items.begin(), items.begin() + static_cast<long>(limit));
  return Join(head, ", ") + " and " + std::to_string(items.size() - limit) + " more";
}

}  // namespace fabcheck::checks
