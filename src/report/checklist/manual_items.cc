// 8, 9 and 10: what a host cannot observe. Each is "manual" with what to
// record, and with what the bundle does show that helps the record.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>

#include "report/checklist.h"

namespace fabcheck::report {

// 8. Network and training metrics can be correlated to Job, Pod, Rank, NIC,
// and switch ports.
model::ChecklistItem CheckMetricsCorrelation(const BundleEvidence& e) {
  auto item = checklist::NewItem(8);
  item.status = model::ChecklistStatus::kManual;
  std::set<std::string> counted_members, ports;
  for (const auto& r : e.manifest.rungs) {
    for (const auto& d : r.counter_deltas) {
      counted_members.insert(d.member);
      ports.insert(d.member + "/" + d.object);
    }
  }
  size_t with_leaf = 0;
  for (const auto& m : e.manifest.members) with_leaf += m.leaf.empty() ? 0 : 1;
  size_t ranks = 0;
  if (const auto* l4 = e.Rung("L4")) ranks = l4->nccl.size();
  item.evidence = {
      fmt::format("NIC port counters with a delta in the bundle: {} ports on {} members", ports.size(),
                  counted_members.size()),
      fmt::format("leaf switch recorded for {} of {} members", with_leaf, e.manifest.members.size()),
      fmt::format("NCCL ranks mapped to members in L4: {}", ranks)};
  item.summary = "correlation lives in the monitoring stack; the bundle shows which NICs and leaves to map";
  item.record = {"`fabcheck exporter` (DaemonSet) labels RDMA counters with node, device, port and the pod holding "
                 "the device (kubelet PodResources): confirm the pod and job labels in Prometheus",
                 "the switch port each NIC is cabled to (LLDP or the cabling plan), joined to the leaf above",
                 "that training jobs export their rank -> node and rank -> NIC mapping (NCCL_DEBUG=INFO logs kept)"};
  item.rungs = {"L3", "L4"};
  return item;
}

// 9. Node drain, VF reclamation, Operator upgrade, and HCA failure have been
// rehearsed.
model::ChecklistItem CheckRehearsals(const BundleEvidence& e) {
  auto item = checklist::NewItem(9);
  item.status = model::ChecklistStatus::kManual;
  item.summary = "rehearsals are events, not state: record each with its date and outcome";
  item.record = {"node drain: VFs and RDMA resources returned (allocatable back to the full count) and pods rescheduled",
                 "VF reclamation after pod deletion (SR-IOV device plugin) and after a node reboot",
                 "Network Operator / GPU Operator upgrade on one node pool, with the ladder rerun after it",
                 "HCA or cable failure: the job fails over or fails clearly; the exporter alerts on the port",
                 "after each rehearsal: `fabcheck ladder` again and `fabcheck report --baseline` against this "
                 "bundle shows members gone or added and any regression"};
  item.evidence = {fmt::format("this bundle: {} members, created {}", e.manifest.members.size(),
                               e.manifest.created_at.empty() ? "?" : e.manifest.created_at)};
  return item;
}

// 10. Additional network security and tenant isolation do not rely on default
// NetworkPolicy assumptions.
model::ChecklistItem CheckTenantIsolation(const BundleEvidence& e) {
  auto item = checklist::NewItem(10);
  item.status = model::ChecklistStatus::kManual;
  item.summary = "Multus interfaces bypass the default CNI's NetworkPolicy: record what isolates the data plane";
  item.record = {"how the data plane is isolated per tenant: InfiniBand PKey, VLAN, VRF, switch ACL or a separate "
                 "fabric, and who may change it",
                 "who may create or edit NetworkAttachmentDefinitions, and which namespaces may request RDMA / SR-IOV "
                 "resources",
                 "`fabcheck k8s lint` on the workloads flags privileged pods, hostNetwork and device mounts next to "
                 "RDMA resources"};
  std::set<std::string> subnets;
  for (const auto& m : e.manifest.members) {
    for (const auto& a : m.data_addresses) {
      if (a.find('.') != std::string::npos) subnets.insert(a.substr(0, a.rfind('.')) + ".0/24");
    }
  }
  if (!subnets.empty()) {
    item.evidence.push_back(fmt::format("data-plane address ranges seen: {}", subnets.size() > 8
                                                                              ? std::to_string(subnets.size()) + " /24s"
                                                                              : fmt::format("{}", fmt::join(subnets, ", "))));
  }
  return item;
}

}  // namespace fabcheck::report
