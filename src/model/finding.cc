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
}

}  // namespace fabcheck::model
