// 2. GPU, NIC, PCIe, NUMA, Rack, and Rail topology have asset records. The
// bundle is that record for what a node can see (inventory per member); rack
// and leaf come from the topology file or node labels. A record is only worth
// keeping when the nodes match it: PCIe links below their capability (doctor's
// pcie.downgraded), GPUs far from every NIC and members of one node type that
// differ from the others fail the item.
#include <fmt/format.h>

#include <map>

#include "report/checklist.h"

namespace fabcheck::report {
namespace {

std::string LinkText(const model::PciLink& l) {
  auto side = [](const std::optional<double>& gts, const std::optional<int>& width) {
    return fmt::format("{} GT/s x{}", gts ? fmt::format("{:g}", *gts) : "?", width ? std::to_string(*width) : "?");
  };
  return side(l.current_speed_gts, l.current_width) + " of " + side(l.max_speed_gts, l.max_width);
}

// "8 GPUs, 8 NICs, 2 NUMA nodes": what identical nodes share.
std::string Shape(const model::Inventory& inv) {
  return fmt::format("{} GPUs, {} NICs, {} NUMA nodes, {} rails", inv.gpus.size(), inv.nics.size(),
                     inv.numa_nodes.size(), inv.topology.rails.size());
}

}  // namespace

model::ChecklistItem CheckTopologyRecords(const BundleEvidence& e) {
  auto item = checklist::NewItem(2);
  item.rungs = {"L1L2.node"};
  size_t with_inventory = 0, with_rack = 0;
  std::map<std::string, std::map<std::string, std::vector<std::string>>> shapes;  // type -> shape -> members
  for (const auto& m : e.manifest.members) {
    if (!m.rack.empty() && !m.leaf.empty()) ++with_rack;
    const model::Inventory* inv = e.InventoryOf(m.id);
    if (!inv) {
      if (m.reachable) {
        checklist::Raise(item, model::ChecklistStatus::kUnknown);
        checklist::AddMember(item, m.id);
        item.evidence.push_back(m.id + ": no inventory in the bundle" +
                                (m.error.empty() ? std::string() : " (" + m.error + ")"));
      }
      continue;
    }
    ++with_inventory;
    shapes[m.node_type][Shape(*inv)].push_back(m.id);
    auto downgraded = [&](const std::string& what, const model::PciFunction& f) {
      if (!f.link.Degraded()) return;
      checklist::Raise(item, model::ChecklistStatus::kFail);
      checklist::AddMember(item, m.id);
      item.evidence.push_back(fmt::format("{}: {} {} PCIe link at {} (members/{}/inventory.json)", m.id, what, f.bdf,
                                          LinkText(f.link), m.id));
    };
    // The doctor's pcie.downgraded judges links (GPUs slow theirs when idle);
    // without its report, NIC links are judged from the inventory alone.
    if (!e.DoctorOf(m.id)) {
      for (const auto& n : inv->nics) downgraded("NIC " + n.label, n.pci);
    }
  }
  for (const auto& f : checklist::DoctorFindings(
           e, {"pcie.downgraded", "topo.gpu-nic.far", "topo.rail.unbalanced", "node.count"})) {
    if (f.finding->severity == model::Severity::kFail) checklist::Raise(item, model::ChecklistStatus::kFail);
    checklist::AddMember(item, f.member);
    item.evidence.push_back(checklist::Describe(f));
  }
  for (const auto& [type, by_shape] : shapes) {
    if (by_shape.size() < 2) continue;
    size_t most = 0;
    std::string majority;
    for (const auto& [shape, members] : by_shape) {
      if (members.size() > most) most = members.size(), majority = shape;
    }
    for (const auto& [shape, members] : by_shape) {
      if (shape == majority) continue;
      checklist::Raise(item, model::ChecklistStatus::kFail);
      for (const auto& id : members) {
        checklist::AddMember(item, id);
        item.evidence.push_back(fmt::format("{}: {} where the other '{}' nodes have {}", id, shape,
                                            type.empty() ? "untyped" : type, majority));
      }
    }
  }
  const size_t members = e.manifest.members.size();
  item.evidence.insert(item.evidence.begin(),
                       fmt::format("inventory (GPUs, NICs, PCIe paths, NUMA, GPU x NIC rails) for {} of {} members; "
                                   "rack and leaf for {} of {}",
                                   with_inventory, members, with_rack, members));
  if (with_rack < members) {
    checklist::Raise(item, model::ChecklistStatus::kUnknown);
    item.record.push_back("rack and leaf switch of every member: `fabcheck ladder --topology fabric.yaml` records them (`fabcheck fabric --from k8s` writes the file from node labels; a member's `rack:` key names its rack)");
  }
  if (item.status == model::ChecklistStatus::kFail) {
    item.summary = "the nodes do not match a clean record: " + checklist::Count(item.members.size(), "member", "members") +
                   " with PCIe links below capability or a topology unlike their type";
    item.remedy = "reseat or replace the card or riser of each downgraded link (check BIOS PCIe settings), then "
                  "rerun the ladder; keep this bundle's inventories as the asset record once they pass";
  } else if (item.status == model::ChecklistStatus::kUnknown) {
    item.summary = "the bundle records GPU, NIC, PCIe, NUMA and rails, but not every member's rack and leaf";
  } else {
    item.summary = "every member's GPU, NIC, PCIe, NUMA and rail topology and its rack and leaf are in the bundle";
  }
  item.record.push_back("keep this bundle (members/*/inventory.json) with the asset records of the nodes");
  return item;
}

}  // namespace fabcheck::report
