// DoctorReport: the result of `fabcheck doctor` on one node
// ("schema": "fabcheck.doctor/v1").
//
// Findings in ladder order (L1, L2, RoCE, GDR, container, NCCL), with what
// was read (sysroot, profile, where the NCCL settings came from), so a report
// saved on one node can be judged on another. Later v1 versions only ADD fields.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fabcheck/model/finding.h"

namespace fabcheck::model {

inline constexpr std::string_view kDoctorSchema = "fabcheck.doctor/v1";

struct DoctorSummary {
  int pass = 0;
  int info = 0;
  int unknown = 0;
  int warn = 0;
  int fail = 0;
  // The lowest rung with a failure ("" when none): fix it first, the rungs
  // above may only be failing because of it.
  std::string first_failing_rung;
  int exit_code = 0;  // 0 pass, 1 warnings only (or unknowns with strict), 2 any failure
  bool strict = false;  // --strict: an unknown exits 1 (docs/verdicts.md)
};

struct DoctorReport {
  std::string schema{kDoctorSchema};
  std::string fabcheck_version;
  std::string hostname;
  std::string kernel;
  std::string sysroot;  // "live node", "capture x.tar.gz"
  std::string profile;  // the profile file ("" when none)
  std::vector<std::string> env_sources;  // "environment", "--env-file job.env", "/etc/nccl.conf"
  std::vector<std::string> checks;  // IDs that ran, in order
  std::vector<std::string> inventory_warnings;  // what the inventory could not read
  std::vector<Finding> findings;
  // Set when the sysroot is a capture taken before some checks recorded what
  // they read: says once how many unknowns come from that ("" otherwise).
  std::string capture_note;
  DoctorSummary summary;
};

// Counts by severity, first failing rung (by `rung_order`), exit code.
DoctorSummary Summarize(const std::vector<Finding>& findings, const std::vector<std::string>& rung_order,
                        bool strict = false);

// A plain struct: every key always present (json_fields.h).
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(DoctorSummary, pass, info, unknown, warn, fail, first_failing_rung,
                                                exit_code, strict)
void to_json(nlohmann::json& j, const DoctorReport& v);
void from_json(const nlohmann::json& j, DoctorReport& v);

// Parses a saved `fabcheck doctor --json`; nullopt and *error on failure.
std::optional<DoctorReport> ParseDoctorJson(std::string_view text, std::string* error);

}  // namespace fabcheck::model
