#include "report/findings.h"

#include <set>

namespace fabcheck::report {

std::vector<model::Finding> ChecklistFindings(const std::vector<model::ChecklistItem>& checklist) {
  std::vector<model::Finding> out;
  for (const auto& item : checklist) {
    if (item.status != model::ChecklistStatus::kFail && item.status != model::ChecklistStatus::kUnknown) continue;
    model::Finding f;
    f.id = item.id;
    f.severity = item.status == model::ChecklistStatus::kFail ? model::Severity::kFail : model::Severity::kUnknown;
    f.group = "go-live";
    f.message = item.title + " -- " + (item.summary.empty() ? std::string(model::ChecklistStatusName(item.status)) : item.summary);
    f.evidence = item.evidence;
    f.remedy = item.remedy;
    if (!item.record.empty() && item.status == model::ChecklistStatus::kUnknown) f.remedy = item.record.front();
    f.next = "fabcheck explain " + item.id;
    if (item.status == model::ChecklistStatus::kFail && !item.members.empty()) {
      for (const auto& m : item.members) {
        model::Finding g = f;
        g.member = m;
        g.object = m;
        g.subject = "member";
        out.push_back(std::move(g));
      }
    } else {
      f.object = "cluster";
      out.push_back(std::move(f));
    }
  }
  return out;
}

std::vector<model::Finding> BundleFindings(const BundleEvidence& e, const std::vector<model::ChecklistItem>& checklist) {
  std::vector<model::Finding> out;
  std::set<std::pair<std::string, std::string>> seen;  // (ID, member): one each
  auto add = [&](model::Finding f) {
    if (f.severity == model::Severity::kPass || f.severity == model::Severity::kInfo) return;
    if (seen.insert({f.id, f.member}).second) out.push_back(std::move(f));
  };
  for (const auto& rung : e.manifest.rungs) {
    for (const auto& f : rung.findings) {
      model::Finding g = f;
      // Bundles written before findings named their member: the object starts with it.
      if (g.member.empty()) {
        std::string first = g.object.substr(0, g.object.find(' '));
        if (e.Member(first)) g.member = first;
      }
      add(std::move(g));
    }
  }
  for (const auto& [member, doctor] : e.doctors) {
    for (const auto& f : doctor.findings) {
      if (f.severity != model::Severity::kFail && f.severity != model::Severity::kWarn) continue;
      model::Finding g = f;
      g.member = member;
      if (g.object.rfind(member, 0) != 0) g.object = member + " " + g.object;
      add(std::move(g));
    }
  }
  for (auto& f : ChecklistFindings(checklist)) add(std::move(f));
  return out;
}

}  // namespace fabcheck::report
