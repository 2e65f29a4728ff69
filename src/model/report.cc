#include "fabcheck/model/report.h"

namespace fabcheck::model {

std::string_view ChecklistStatusName(ChecklistStatus s) {
  switch (s) {
    case ChecklistStatus::kPass: return "pass";
    case ChecklistStatus::kFail: return "fail";
    case ChecklistStatus::kUnknown: return "unknown";
    case ChecklistStatus::kManual: return "manual";
  }
  return "unknown";
}

std::optional<ChecklistStatus> ParseChecklistStatus(std::string_view name) {
  for (auto s : {ChecklistStatus::kPass, ChecklistStatus::kFail, ChecklistStatus::kUnknown, ChecklistStatus::kManual}) {
    if (ChecklistStatusName(s) == name) return s;
  }
  return std::nullopt;
}

void to_json(nlohmann::json& j, const ChecklistStatus& v) { j = std::string(ChecklistStatusName(v)); }

void to_json(nlohmann::json& j, const ChecklistItem& v) {
  j = {{"number", v.number},   {"id", v.id},         {"title", v.title},     {"status", v.status},
       {"summary", v.summary}, {"evidence", v.evidence}, {"members", v.members}, {"record", v.record},
       {"remedy", v.remedy},   {"rungs", v.rungs}};
}

void to_json(nlohmann::json& j, const RungSummary& v) {
  j = {{"id", v.id},           {"title", v.title},         {"verdict", v.verdict},   {"reason", v.reason},
       {"members", v.members}, {"passed", v.passed},       {"duration_s", v.duration_s},
       {"failures", v.failures}, {"warnings", v.warnings}};
  // Only the pair, its figure, its counters and its suspect: the full pair
  // with its size sweep is in the bundle.
  if (!v.suspect_pairs.empty()) {
    nlohmann::json pairs = nlohmann::json::array();
    for (const auto& p : v.suspect_pairs) {
      nlohmann::json one = {{"a", p.a}, {"b", p.b}, {"rail", p.rail}, {"reason", p.reason}, {"counters", p.counters}};
      if (p.suspect) one["suspect"] = *p.suspect;
      pairs.push_back(std::move(one));
    }
    j["suspect_pairs"] = std::move(pairs);
  }
}

void to_json(nlohmann::json& j, const MemberSummary& v) {
  j = {{"id", v.id},
       {"node_type", v.node_type},
       {"rack", v.rack},
       {"leaf", v.leaf},
       {"reachable", v.reachable},
       {"dropped_at", v.dropped_at},
       {"dropped_reason", v.dropped_reason},
       {"rung_status", v.rung_status}};
}

void to_json(nlohmann::json& j, const BaselineChange& v) {
  j = {{"kind", v.kind},     {"severity", v.severity}, {"object", v.object},
       {"before", v.before}, {"after", v.after},       {"message", v.message}};
}

void to_json(nlohmann::json& j, const BaselineDiff& v) {
  j = {{"baseline", v.baseline},
       {"baseline_created_at", v.baseline_created_at},
       {"slower_threshold", v.slower_threshold},
       {"changes", v.changes}};
}

void to_json(nlohmann::json& j, const ChecklistCounts& v) {
  j = {{"pass", v.pass}, {"fail", v.fail}, {"unknown", v.unknown}, {"manual", v.manual}};
}

void to_json(nlohmann::json& j, const GoLiveReport& v) {
  j = {{"schema", v.schema},
       {"fabcheck_version", v.fabcheck_version},
       {"bundle", v.bundle},
       {"bundle_fabcheck_version", v.bundle_fabcheck_version},
       {"created_at", v.created_at},
       {"coordinator", v.coordinator},
       {"duration_s", v.duration_s},
       {"interrupted", v.interrupted},
       {"go", v.go},
       {"verdict_summary", v.verdict_summary},
       {"first_failing_rung", v.first_failing_rung},
       {"rungs", v.rungs},
       {"members", v.members},
       {"node_types", v.node_types},
       {"checklist", v.checklist},
       {"counts", v.counts},
       {"baseline", v.baseline ? nlohmann::json(*v.baseline) : nlohmann::json(nullptr)},
       {"notes", v.notes},
       {"findings", v.findings},
       {"strict", v.strict},
       {"exit_code", v.exit_code}};
}

}  // namespace fabcheck::model
