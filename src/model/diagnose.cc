#include "fabcheck/model/diagnose.h"

namespace fabcheck::model {

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
  f.confidence = d.confidence;
  f.member = d.member;
  f.next = d.next;
  f.remedy = d.fix;
  if (!d.next.empty()) f.remedy += (f.remedy.empty() ? "" : " Next: ") + d.next;
  return f;
}


Diagnosis FromFinding(const Finding& f, const std::string& member, const std::string& source) {
  Diagnosis d;
  d.rule = f.id;
  d.severity = f.severity;
  d.confidence = f.confidence.value_or(Confidence::kHigh);
  d.group = f.group;
  d.member = member.empty() ? f.member : member;
  d.object = f.object;
  if (!d.member.empty() && d.object.rfind(d.member, 0) != 0) d.object = d.member + (d.object.empty() ? "" : ": " + d.object);
  d.message = f.message;
  d.evidence = f.evidence;
  if (!source.empty()) d.evidence.push_back("judged in " + source);
  d.fix = f.remedy;
  d.next = f.next.empty() ? "fabcheck explain " + f.id : f.next;
  return d;
}

void to_json(nlohmann::json& j, const Diagnosis& v) {
  j = {{"rule", v.rule},         {"severity", v.severity}, {"confidence", v.confidence}, {"group", v.group},
       {"object", v.object},     {"message", v.message},   {"evidence", v.evidence},     {"causes", v.causes},
       {"fix", v.fix},           {"next", v.next}};
  if (!v.member.empty()) j["member"] = v.member;
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
