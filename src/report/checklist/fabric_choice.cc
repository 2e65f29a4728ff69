// 1. The reason for choosing InfiniBand or RoCE and the operational
// responsibility are clear. A decision and an owner are not observable; the
// report shows which fabric the members actually run, so the record matches it.
#include <fmt/format.h>

#include <map>

#include "report/checklist.h"

namespace fabcheck::report {

model::ChecklistItem CheckFabricChoice(const BundleEvidence& e) {
  auto item = checklist::NewItem(1);
  item.status = model::ChecklistStatus::kManual;
  std::map<std::string, int> ports_by_layer;  // link layer -> RDMA ports
  std::map<std::string, int> members_by_layer;
  for (const auto& [member, inv] : e.inventories) {
    std::map<std::string, int> mine;
    for (const auto& d : inv.rdma_devices) {
      for (const auto& p : d.ports) mine[p.link_layer.empty() ? "unknown" : p.link_layer]++;
    }
    for (const auto& [layer, n] : mine) {
      ports_by_layer[layer] += n;
      members_by_layer[layer]++;
    }
  }
  if (ports_by_layer.empty()) {
    item.summary = "no inventory in the bundle shows an RDMA port: record the fabric and its owner";
  } else {
    std::string observed;
    for (const auto& [layer, n] : ports_by_layer) {
      std::string name = layer == "Ethernet" ? "RoCE (Ethernet link layer)" : layer;
      observed += fmt::format("{}{}: {} ports on {}", observed.empty() ? "" : "; ", name, n,
                              checklist::Count(static_cast<size_t>(members_by_layer[layer]), "member", "members"));
    }
    item.evidence.push_back("observed fabric: " + observed + " (members/*/inventory.json)");
    item.summary = ports_by_layer.size() == 1
                       ? "the members run one fabric; the decision and its owner are a record, not a measurement"
                       : "the members run more than one link layer: record which ports carry the training fabric";
  }
  // A member that cannot do RDMA at all runs no fabric: the choice is moot
  // until it does.
  for (const auto& f : checklist::DoctorFindings(e, {"rdma.none"})) {
    if (f.finding->severity != model::Severity::kFail) continue;
    checklist::Raise(item, model::ChecklistStatus::kFail);
    checklist::AddMember(item, f.member);
    item.evidence.push_back(checklist::Describe(f));
  }
  if (item.status == model::ChecklistStatus::kFail) {
    item.summary = "no usable RDMA port on " + checklist::Count(item.members.size(), "member", "members") +
                   ": traffic between them can only use TCP";
    item.remedy = "follow the rdma.none findings (driver not loaded, no device, no ACTIVE port, devices not passed "
                  "into the container), then record the fabric and its owner";
  }
  item.record = {"why InfiniBand or RoCE (scale, skills, switch estate, cost) and who decided",
                 "who operates the fabric: team, on-call rotation, escalation to the switch vendor",
                 "who owns the subnet manager (InfiniBand) or the switch QoS configuration (RoCE)"};
  item.rungs = {"L1L2.node"};
  return item;
}

}  // namespace fabcheck::report
