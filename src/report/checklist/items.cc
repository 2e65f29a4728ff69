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
};

// The seeds' go-live checklist, in order and in their words.
constexpr ItemText kItems[] = {
    {"golive.fabric-choice",
     "The reason for choosing InfiniBand or RoCE and the operational responsibility are clear."},
    {"golive.topology-records", "GPU, NIC, PCIe, NUMA, Rack, and Rail topology have asset records."},
    {"golive.network-isolation",
     "Default network and training data network are isolated from each other, with clear routing boundaries."},
    {"golive.versions-pinned", "Multus, SR-IOV/RDMA Plugin, and Operator versions are pinned and compatible."},
    {"golive.roce-consistency", "RoCE MTU, PFC, ECN, QoS, and Buffer are consistent end-to-end."},
    {"golive.nccl-path", "Confirmed that NCCL actually uses the expected HCA, interface, and GPUDirect path."},
    {"golive.baselines", "ib_write_bw/lat and NCCL Tests have single-node, same-rack, and cross-rack baselines."},
    {"golive.metrics-correlation",
     "Network and training metrics can be correlated to Job, Pod, Rank, NIC, and switch ports."},
    {"golive.rehearsals", "Node drain, VF reclamation, Operator upgrade, and HCA failure have been rehearsed."},
    {"golive.tenant-isolation",
     "Additional network security and tenant isolation do not rely on default NetworkPolicy assumptions."},
};

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
