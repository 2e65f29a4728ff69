// The checklist's wording and the helpers every item uses.
#include <fmt/format.h>

#include <algorithm>

#include "base/strings.h"
#include "report/checklist.h"

namespace fabcheck::report {
namespace checklist {
namespace {

struct ItemText {
  const char* id;
  const char* title;
  const char* why;  // what the item decides from a ladder bundle (catalog)
  const char* fix;
};

// The seeds' go-live checklist, in order and in their words.
constexpr ItemText kItems[] = {
    {"golive.fabric-choice",
     "The reason for choosing InfiniBand or RoCE and the operational responsibility are clear.",
     "Fails when the members' link layers disagree or a member has no RDMA device at all; the reason and the owner "
     "are recorded by a person.",
     "Give every member the same working fabric (doctor's L1 findings name what is missing), then record the choice."},
    {"golive.topology-records", "GPU, NIC, PCIe, NUMA, Rack, and Rail topology have asset records.",
     "Read from each member's inventory (GPU x NIC matrix, PCIe paths, NUMA) and the rack/leaf/rail the bundle "
     "records.",
     "Run the ladder with the fabric file so every member's rack, leaf and rail is recorded."},
    {"golive.network-isolation",
     "Default network and training data network are isolated from each other, with clear routing boundaries.",
     "Decided from the members' data-plane interfaces, addresses and routes in the bundle.",
     "Put the data plane on its own interfaces and subnets, with no default route through them."},
    {"golive.versions-pinned", "Multus, SR-IOV/RDMA Plugin, and Operator versions are pinned and compatible.",
     "Driver, firmware, NCCL and CUDA versions must agree across members (L1L2.cluster); the Kubernetes stack's "
     "versions are recorded by a person or checked by `fabcheck k8s lint`.",
     "Install one version of each on every member; pin the images."},
    {"golive.roce-consistency", "RoCE MTU, PFC, ECN, QoS, and Buffer are consistent end-to-end.",
     "Fails on any member without a usable RDMA port, on outliers of MTU, GID, PFC and trust (L1L2.cluster), on MTU "
     "holes (L2.path) and on the members' doctor findings for them.",
     "Fix the named members' settings (the doctor findings and cluster outliers say which)."},
    {"golive.nccl-path", "Confirmed that NCCL actually uses the expected HCA, interface, and GPUDirect path.",
     "Read from L4: the transport NCCL chose on each member (NET/IB, GPUDirect) against what it should use.",
     "Follow the L4 findings; `fabcheck diagnose BUNDLE` names the cause from NCCL's own log."},
    {"golive.baselines", "ib_write_bw/lat and NCCL Tests have single-node, same-rack, and cross-rack baselines.",
     "Read from the baseline groups the ladder runs after L3 and L4 (single node, two nodes, same rack, cross rack, "
     "one rail, all rails, GPUDirect RDMA on/off): each scope needs a passing group over RDMA, or the reason this "
     "cluster cannot form it (one rack, one rail, one member).",
     "Fix the failing groups' path, then rerun `fabcheck ladder --topology FILE` (racks come from the fabric file)."},
    {"golive.metrics-correlation",
     "Network and training metrics can be correlated to Job, Pod, Rank, NIC, and switch ports.",
     "Counter deltas per rung must be present and attributable to members and ports.",
     "Run the exporter on every node and keep the ladder's counter snapshots."},
    {"golive.rehearsals", "Node drain, VF reclamation, Operator upgrade, and HCA failure have been rehearsed.",
     "Not observable from a bundle: a person records the rehearsals.", "Rehearse them and record the outcome."},
    {"golive.tenant-isolation",
     "Additional network security and tenant isolation do not rely on default NetworkPolicy assumptions.",
     "Not observable from a bundle alone; `fabcheck k8s lint` checks the manifests.",
     "Isolate tenants on the data plane (separate NADs/VFs/partitions), not with NetworkPolicy."},
};

}  // namespace

std::vector<model::CatalogEntry> CatalogEntries() {
  std::vector<model::CatalogEntry> out;
  for (const auto& item : kItems) out.push_back({item.id, "report", "go-live", std::nullopt, item.title, item.why, item.fix});
  return out;
}

namespace {

int Rank(model::ChecklistStatus s) {
  switch (s) {
    case model::ChecklistStatus::kPass: return 0;
    case model::ChecklistStatus::kManual: return 1;
    case model::ChecklistStatus::kUnknown: return 2;
    case model::ChecklistStatus::kFail: return 3;
  }
  return 2;
}

}  // namespace

model::ChecklistItem NewItem(int number) {
  model::ChecklistItem item;
  item.number = number;
  item.id = kItems[number - 1].id;
  item.title = kItems[number - 1].title;
  item.status = model::ChecklistStatus::kPass;
  return item;
}

void Raise(model::ChecklistItem& item, model::ChecklistStatus status) {
  if (Rank(status) > Rank(item.status)) item.status = status;
}

void AddMember(model::ChecklistItem& item, const std::string& member) {
  if (std::find(item.members.begin(), item.members.end(), member) == item.members.end()) {
    item.members.push_back(member);
  }
}

std::vector<std::string> MembersOf(const BundleEvidence& e, const model::RungResult* rung) {
  if (rung && !rung->members.empty()) return rung->members;
  std::vector<std::string> out;
  for (const auto& m : e.manifest.members) {
    if (m.reachable) out.push_back(m.id);
  }
  return out;
}

std::string Count(size_t n, const char* singular, const char* plural) {
  return fmt::format("{} {}", n, n == 1 ? singular : plural);
}

std::vector<MemberFinding> DoctorFindings(const BundleEvidence& e, const std::vector<std::string>& id_prefixes) {
  std::vector<MemberFinding> out;
  auto wanted = [&](const model::Finding& f) {
    if (f.severity != model::Severity::kFail && f.severity != model::Severity::kWarn) return false;
    return std::any_of(id_prefixes.begin(), id_prefixes.end(), [&](const std::string& p) { return StartsWith(f.id, p); });
  };
  for (const auto& [member, doctor] : e.doctors) {
    for (const auto& f : doctor.findings) {
      if (wanted(f)) out.push_back({member, &f});
    }
  }
  // The rung's own findings carry the member ID at the start of `object`; use
  // them for members whose doctor report the bundle lacks.
  if (const auto* rung = e.Rung("L1L2.node")) {
    for (const auto& f : rung->findings) {
      if (!wanted(f)) continue;
      std::string member = f.object.substr(0, f.object.find(' '));
      if (e.doctors.count(member) == 0) out.push_back({member, &f});
    }
  }
  return out;
}

std::string Describe(const MemberFinding& f) {
  return fmt::format("{}: {} [{}] {}: {}", f.member, f.finding->id, model::SeverityName(f.finding->severity),
                     f.finding->object, f.finding->message);
}

}  // namespace checklist

std::vector<model::ChecklistItem> EvaluateChecklist(const BundleEvidence& e) {
  return {CheckFabricChoice(e),     CheckTopologyRecords(e), CheckNetworkIsolation(e), CheckVersionsPinned(e),
          CheckRoceConsistency(e),  CheckNcclPath(e),        CheckBaselines(e),        CheckMetricsCorrelation(e),
          CheckRehearsals(e),       CheckTenantIsolation(e)};
}

}  // namespace fabcheck::report
