// The go-live checklist of the seeds (their last section), evaluated over a
// ladder bundle. One file per item under checklist/; each returns the item
// with its status and the evidence that decided it:
//   pass     the bundle shows the item holds
//   fail     it shows the item does not hold (members, evidence, remedy)
//   unknown  fabcheck could observe it but this bundle lacks the evidence
//   manual   fabcheck cannot observe it; `record` says what a person records
// Items never pass for lack of evidence.
#pragma once

#include <string>
#include <vector>

#include "fabcheck/model/catalog.h"
#include "fabcheck/model/report.h"
#include "report/evidence.h"

namespace fabcheck::report {

// All ten, in the seeds' order.
std::vector<model::ChecklistItem> EvaluateChecklist(const BundleEvidence& evidence);

// The items one by one (checklist/<name>.cc).
model::ChecklistItem CheckFabricChoice(const BundleEvidence& e);       // 1
model::ChecklistItem CheckTopologyRecords(const BundleEvidence& e);    // 2
model::ChecklistItem CheckNetworkIsolation(const BundleEvidence& e);   // 3
model::ChecklistItem CheckVersionsPinned(const BundleEvidence& e);     // 4
model::ChecklistItem CheckRoceConsistency(const BundleEvidence& e);    // 5
model::ChecklistItem CheckNcclPath(const BundleEvidence& e);           // 6
model::ChecklistItem CheckBaselines(const BundleEvidence& e);          // 7
model::ChecklistItem CheckMetricsCorrelation(const BundleEvidence& e); // 8
model::ChecklistItem CheckRehearsals(const BundleEvidence& e);         // 9
model::ChecklistItem CheckTenantIsolation(const BundleEvidence& e);    // 10

namespace checklist {

// The items as entries of the one catalog (source "report").
std::vector<model::CatalogEntry> CatalogEntries();

// The item with its number, ID and title filled in.
model::ChecklistItem NewItem(int number);
// Sets the status, keeping the worst so far (fail > unknown > pass; manual only over pass).
void Raise(model::ChecklistItem& item, model::ChecklistStatus status);
// Adds a member once.
void AddMember(model::ChecklistItem& item, const std::string& member);
// Members the rung ran on, or every reachable member when the rung is absent.
std::vector<std::string> MembersOf(const BundleEvidence& e, const model::RungResult* rung);
// "3 of 8 members", "1 pair".
std::string Count(size_t n, const char* singular, const char* plural);
// Findings of the members' doctor reports (and of rung L1L2.node) whose ID starts with a prefix.
struct MemberFinding {
  std::string member;
  const model::Finding* finding;
};
std::vector<MemberFinding> DoctorFindings(const BundleEvidence& e, const std::vector<std::string>& id_prefixes);
// "dgx-03: pcie.downgraded mlx5_2: ..." for evidence lines.
std::string Describe(const MemberFinding& f);

}  // namespace checklist
}  // namespace fabcheck::report
