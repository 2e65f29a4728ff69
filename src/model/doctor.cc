#include "fabcheck/model/doctor.h"

#include "base/json_budget.h"

namespace fabcheck::model {

DoctorSummary Summarize(const std::vector<Finding>& findings, const std::vector<std::string>& rung_order,
                        bool strict) {
  DoctorSummary s;
  s.strict = strict;
  size_t first = rung_order.size();
  for (const auto& f : findings) {
    switch (f.severity) {
      case Severity::kPass: ++s.pass; break;
      case Severity::kInfo: ++s.info; break;
      case Severity::kUnknown: ++s.unknown; break;
      case Severity::kWarn: ++s.warn; break;
      case Severity::kFail: {
        ++s.fail;
        for (size_t i = 0; i < rung_order.size() && i < first; ++i) {
          if (rung_order[i] == f.group) first = i;
        }
        break;
      }
    }
  }
  if (first < rung_order.size()) s.first_failing_rung = rung_order[first];
  s.exit_code = ExitCodeOf(findings, strict);
  return s;
}

void to_json(nlohmann::json& j, const DoctorReport& v) {
  j = {{"schema", v.schema},
       {"fabcheck_version", v.fabcheck_version},
       {"hostname", v.hostname},
       {"kernel", v.kernel},
       {"sysroot", v.sysroot},
       {"profile", v.profile},
       {"env_sources", v.env_sources},
       {"checks", v.checks},
       {"inventory_warnings", v.inventory_warnings},
       {"findings", v.findings},
       {"summary", v.summary}};
  if (!v.capture_note.empty()) j["capture_note"] = v.capture_note;
}

void from_json(const nlohmann::json& j, DoctorReport& v) {
  std::string schema = j.at("schema").get<std::string>();
  if (schema != kDoctorSchema) {
    throw nlohmann::json::other_error::create(501, "schema is '" + schema + "', expected " + std::string(kDoctorSchema), &j);
  }
  v.schema = schema;
  v.fabcheck_version = j.value("fabcheck_version", "");
  v.hostname = j.value("hostname", "");
  v.kernel = j.value("kernel", "");
  v.sysroot = j.value("sysroot", "");
  v.profile = j.value("profile", "");
  v.env_sources = j.value("env_sources", std::vector<std::string>{});
  v.checks = j.value("checks", std::vector<std::string>{});
  v.inventory_warnings = j.value("inventory_warnings", std::vector<std::string>{});
  v.findings = j.value("findings", std::vector<Finding>{});
  v.capture_note = j.value("capture_note", "");
  if (j.contains("summary")) v.summary = j.at("summary").get<DoctorSummary>();
}

std::optional<DoctorReport> ParseDoctorJson(std::string_view text, std::string* error) {
  auto parsed = ParseJsonWithin(text, "the doctor report", kNodeDocumentBudget);
  if (!parsed.ok()) {
    if (error) *error = parsed.status().message();
    return std::nullopt;
  }
  try {
    return parsed->get<DoctorReport>();
  } catch (const nlohmann::json::exception& e) {
    if (error) *error = std::string("not a fabcheck doctor report: ") + e.what();
    return std::nullopt;
  }
}

}  // namespace fabcheck::model
