#include "fabcheck/model/diagnose.h"

namespace fabcheck::model {

std::string_view ConfidenceName(Confidence c) {
  switch (c) {
    case Confidence::kLow: return "low";
    case Confidence::kMedium: return "medium";
    case Confidence::kHigh: return "high";
  }
  return "medium";
}

Finding ToFinding(const Diagnosis& d) {
  Finding f;
  f.id = d.rule;
  f.severity = d.severity;
  f.group = d.group;
  f.object = d.object;
  f.message = d.message;
  f.evidence = d.evidence;
  if (!d.causes.empty()) {
    std::string causes;
    for (size_t i = 0; i < d.causes.size(); ++i) causes += (i ? "; " : "") + std::to_string(i + 1) + ". " + d.causes[i];
    f.evidence.push_back("likely causes: " + causes);
  }
  f.remedy = d.fix;
  if (!d.next.empty()) f.remedy += (f.remedy.empty() ? "" : " Next: ") + d.next;
  return f;
}

void to_json(nlohmann::json& j, const Confidence& v) { j = std::string(ConfidenceName(v)); }

void to_json(nlohmann::json& j, const Diagnosis& v) {
  j = {{"rule", v.rule},         {"severity", v.severity}, {"confidence", v.confidence}, {"group", v.group},
       {"object", v.object},     {"message", v.message},   {"evidence", v.evidence},     {"causes", v.causes},
       {"fix", v.fix},           {"next", v.next}};
}

void to_json(nlohmann::json& j, const DiagnoseInput& v) {
  j = {{"path", v.path}, {"kind", v.kind}, {"status", v.status}};
}

void to_json(nlohmann::json& j, const DiagnoseJob& v) {
  j = {{"id", v.id},     {"files", v.files},     {"fail", v.fail},
       {"warn", v.warn}, {"unknown", v.unknown}, {"exit_code", v.exit_code}};
}

void to_json(nlohmann::json& j, const DiagnoseReport& v) {
  j = {{"schema", v.schema},
       {"fabcheck_version", v.fabcheck_version},
       {"inputs", v.inputs},
       {"summary", {{"fail", v.fail}, {"warn", v.warn}, {"unknown", v.unknown}, {"info", v.info}, {"pass", v.pass}}},
       {"exit_code", v.exit_code},
       {"findings", v.findings}};
  if (!v.jobs.empty()) j["jobs"] = v.jobs;
}

}  // namespace fabcheck::model
