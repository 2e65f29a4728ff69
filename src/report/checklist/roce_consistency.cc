// 5. RoCE MTU, PFC, ECN, QoS, and Buffer are consistent end-to-end. From the
// hosts: the settings that must agree across members (rung L1L2.cluster:
// netdev MTU, PFC priorities, trust mode, GID type and index, link layer), the
// path MTU every pair reached against the MTU its sender believed (L2.path),
// and each node's own RoCE checks (PFC, ECN, trust). Switch buffers and
// headroom are not visible from a host: they stay a record even on a pass.
#include <fmt/format.h>

#include "report/checklist.h"

namespace fabcheck::report {

model::ChecklistItem CheckRoceConsistency(const BundleEvidence& e) {
  auto item = checklist::NewItem(5);
  item.rungs = {"L1L2.node", "L1L2.cluster", "L2.path"};
  bool observed = false;
  bool ethernet = false;
  if (const auto* cluster = e.Rung("L1L2.cluster")) {
    for (const auto& c : cluster->consistency) {
      if (c.setting == "link_layer" && c.majority == "Ethernet") ethernet = true;
      if (c.setting != "netdev_mtu" && c.setting != "pfc_priorities" && c.setting != "trust_mode" &&
          c.setting != "gid_type" && c.setting != "nccl_gid_index" && c.setting != "link_layer") {
        continue;
      }
      if (c.majority.empty()) continue;
      observed = true;
      if (c.outliers.empty()) {
        item.evidence.push_back(fmt::format("{}: {} on every member", c.setting, c.majority));
        continue;
      }
      checklist::Raise(item, model::ChecklistStatus::kFail);
      for (const auto& id : c.outliers) {
        checklist::AddMember(item, id);
        auto it = c.values.find(id);
        item.evidence.push_back(fmt::format("{}: {} = {} where the majority has {} (rung L1L2.cluster)", id, c.setting,
                                            it == c.values.end() || it->second.empty() ? "?" : it->second,
                                            c.majority));
      }
    }
  }
  if (const auto* path = e.Rung("L2.path")) {
    size_t probed = 0, holes = 0;
    for (const auto& p : path->pairs) {
      if (!p.path_mtu) continue;
      ++probed;
      if (p.local_mtu > 0 && *p.path_mtu < p.local_mtu) {
        ++holes;
        checklist::Raise(item, model::ChecklistStatus::kFail);
        checklist::AddMember(item, p.a);
        checklist::AddMember(item, p.b);
        if (holes <= 12) {
          item.evidence.push_back(fmt::format("{} -> {} rail {}: path MTU {} below the interface MTU {} (rung L2.path)",
                                              p.a, p.b, p.rail, *p.path_mtu, p.local_mtu));
        }
      }
    }
    if (holes > 12) item.evidence.push_back(fmt::format("... and {} more pairs with a path MTU hole", holes - 12));
    if (probed > 0) {
      observed = true;
      if (holes == 0) item.evidence.push_back(fmt::format("path MTU: {} pairs reach their interface MTU", probed));
    }
  }
  // A member without a usable RDMA port has no RDMA path to be consistent:
  // its MTU agreeing with the others' says nothing.
  size_t rdma_ports = 0;
  for (const auto& [member, inv] : e.inventories) {
    for (const auto& d : inv.rdma_devices) rdma_ports += d.ports.size();
  }
  for (const auto& f : checklist::DoctorFindings(e, {"rdma.none"})) {
    observed = true;
    if (f.finding->severity == model::Severity::kFail) checklist::Raise(item, model::ChecklistStatus::kFail);
    checklist::AddMember(item, f.member);
    item.evidence.push_back(checklist::Describe(f));
  }
  for (const auto& f : checklist::DoctorFindings(e, {"roce.", "netdev.mtu"})) {
    if (f.finding->id.rfind("roce.", 0) == 0) ethernet = true;
    observed = true;
    if (f.finding->severity == model::Severity::kFail) checklist::Raise(item, model::ChecklistStatus::kFail);
    checklist::AddMember(item, f.member);
    item.evidence.push_back(checklist::Describe(f));
  }
  if (!observed) {
    item.status = model::ChecklistStatus::kUnknown;
    item.summary = "neither the cluster settings nor the path MTU were compared in this bundle";
  } else if (item.status != model::ChecklistStatus::kFail && rdma_ports == 0 && !e.inventories.empty()) {
    item.status = model::ChecklistStatus::kUnknown;
    item.summary = "no member's inventory shows an RDMA port: there is no RDMA path whose settings could agree";
  } else if (item.status == model::ChecklistStatus::kFail &&
             !checklist::DoctorFindings(e, {"rdma.none"}).empty()) {
    item.summary = "no usable RDMA port on " +
                   checklist::Count(checklist::DoctorFindings(e, {"rdma.none"}).size(), "member", "members") +
                   (item.members.size() > checklist::DoctorFindings(e, {"rdma.none"}).size()
                        ? ", MTU or QoS settings disagree on others"
                        : "");
    item.remedy = "give every member a usable RDMA port first (the rdma.none findings name the cause: driver, "
                  "cabling, or devices not passed into the container), then make MTU, PFC, trust and ECN agree";
  } else if (item.status == model::ChecklistStatus::kFail) {
    item.summary = "MTU or QoS settings disagree on " + checklist::Count(item.members.size(), "member", "members");
    item.remedy = "set the same MTU on every data-plane netdev, VF and switch port of the path (jumbo end to end), "
                  "and the same PFC priority, trust mode (DSCP) and ECN on every RoCE NIC; then rerun the ladder";
  } else {
    item.summary = ethernet ? "MTU, PFC priorities, trust mode and GIDs agree across members and paths"
                            : "InfiniBand: MTU and GIDs agree (PFC, ECN and DSCP apply to RoCE only)";
  }
  item.record = {"switch side, not visible from the hosts: buffer and headroom per priority, PFC watchdog, ECN "
                 "thresholds and the DSCP/PCP mapping on every hop (switch configuration revision)"};
  return item;
}

}  // namespace fabcheck::report
