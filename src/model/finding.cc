#include "fabcheck/model/finding.h"

#include "fabcheck/model/json_fields.h"

#include <stdexcept>

namespace fabcheck::model {

std::string_view SeverityName(Severity severity) {
  switch (severity) {
    case Severity::kPass: return "pass";
    case Severity::kInfo: return "info";
    case Severity::kUnknown: return "unknown";
    case Severity::kWarn: return "warn";
    case Severity::kFail: return "fail";
  }
  return "unknown";
}

std::optional<Severity> ParseSeverity(std::string_view name) {
  for (Severity s : {Severity::kPass, Severity::kInfo, Severity::kUnknown, Severity::kWarn, Severity::kFail}) {
    if (SeverityName(s) == name) return s;
  }
  return std::nullopt;
}

std::string_view ConfidenceName(Confidence c) {
  switch (c) {
    case Confidence::kLow: return "low";
    case Confidence::kMedium: return "medium";
    case Confidence::kHigh: return "high";
  }
  return "medium";
}

std::optional<Confidence> ParseConfidence(std::string_view name) {
  for (Confidence c : {Confidence::kLow, Confidence::kMedium, Confidence::kHigh}) {
    if (ConfidenceName(c) == name) return c;
  }
  return std::nullopt;
}

Severity Worse(Severity a, Severity b) { return static_cast<int>(a) >= static_cast<int>(b) ? a : b; }

int ExitCodeOf(const std::vector<Finding>& findings, bool strict) {
  Severity worst = Severity::kPass;
  for (const auto& f : findings) worst = Worse(worst, f.severity);
  if (worst == Severity::kFail) return 2;
  if (worst == Severity::kWarn || (strict && worst == Severity::kUnknown)) return 1;
  return 0;
}

void to_json(nlohmann::json& j, const Confidence& c) { j = std::string(ConfidenceName(c)); }
void from_json(const nlohmann::json& j, Confidence& c) {
  auto parsed = ParseConfidence(j.get<std::string>());
  if (!parsed) throw nlohmann::json::other_error::create(501, "unknown confidence " + j.dump(), &j);
  c = *parsed;
}

void to_json(nlohmann::json& j, const Severity& s) { j = std::string(SeverityName(s)); }
void from_json(const nlohmann::json& j, Severity& s) {
  auto parsed = ParseSeverity(j.get<std::string>());
  if (!parsed) throw nlohmann::json::other_error::create(501, "unknown severity " + j.dump(), &j);
  s = *parsed;
}

void to_json(nlohmann::json& j, const SourceLocation& l) {
  j = {{"file", l.file}, {"line", l.line}, {"column", l.column}};
}
void from_json(const nlohmann::json& j, SourceLocation& l) {
  l.file = j.at("file").get<std::string>();
  l.line = json_fields::NumberOr(j, "line", 0);
  l.column = json_fields::NumberOr(j, "column", 0);
}

void to_json(nlohmann::json& j, const Finding& f) {
  j = {{"id", f.id},           {"severity", f.severity}, {"group", f.group},   {"object", f.object},
       {"message", f.message}, {"evidence", f.evidence}, {"remedy", f.remedy}};
  if (f.location) j["location"] = *f.location;
  if (!f.member.empty()) j["member"] = f.member;
  if (!f.subject.empty()) j["subject"] = f.subject;
  if (f.confidence) j["confidence"] = *f.confidence;
  if (!f.next.empty()) j["next"] = f.next;
}
void from_json(const nlohmann::json& j, Finding& f) {
  f.id = j.at("id").get<std::string>();
  f.severity = j.at("severity").get<Severity>();
  f.group = j.value("group", "");
  f.object = j.value("object", "");
  f.message = j.value("message", "");
  f.evidence = j.value("evidence", std::vector<std::string>{});
  f.remedy = j.value("remedy", "");
  if (j.contains("location")) f.location = j.at("location").get<SourceLocation>();
  f.member = j.value("member", "");
  f.subject = j.value("subject", "");
  if (j.contains("confidence") && !j.at("confidence").is_null()) f.confidence = j.at("confidence").get<Confidence>();
  f.next = j.value("next", "");
}

}  // namespace fabcheck::model
