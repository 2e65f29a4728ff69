// What `fabcheck diagnose` concluded from the evidence it was given
// ("schema": "fabcheck.diagnose/v1"). Each diagnosis names its rule (a
// stable ID from docs/diagnose.md), how sure the rule is, the evidence
// (file:line, or a counter and its change over time), the likely causes
// ranked, the fix, and what to run next with the members filled in.
// Later v1 versions only ADD fields.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "fabcheck/model/finding.h"

namespace fabcheck::model {

inline constexpr std::string_view kDiagnoseSchema = "fabcheck.diagnose/v1";


struct Diagnosis {
  std::string rule;                    // "nccl.ib.wc-error"
  Severity severity = Severity::kInfo;
  Confidence confidence = Confidence::kMedium;
  std::string group;                   // "NCCL", "counters", "perf", "input"
  std::string object;                  // "node-a mlx5_0 -> 10.0.0.2", "node-a mlx5_0/1"
  std::string message;                 // one sentence
  std::vector<std::string> evidence;   // "job.log:812: NET/IB: Got completion ...", "mlx5_0/1 packet_seq_err +420 over 60 s"
  std::vector<std::string> causes;     // most likely first
  std::string fix;
  std::string next;                    // the rung or command to run next, members filled in
  std::string member;                  // the cluster member it is about, when one ("" otherwise)
};

// One input and what it was read as.
struct DiagnoseInput {
  std::string path;
  std::string kind;    // "nccl-log", "metrics", "counter-sample", "perf", "sweep", "coll", "doctor", "ladder", "snapshot"
  std::string status;  // "read", or why it could not be used
};

// One job's logs when several were given together (diagnose/jobs.h): judged
// on their own, with their own verdict.
struct DiagnoseJob {
  std::string id;                  // "job 0x849599a5"
  std::vector<std::string> files;
  int fail = 0, warn = 0, unknown = 0;
  int exit_code = 0;               // 0, 1 or 2, as the command's
};

struct DiagnoseReport {
  std::string schema{kDiagnoseSchema};
  std::string fabcheck_version;
  std::vector<DiagnoseInput> inputs;
  std::vector<Diagnosis> findings;     // worst first
  std::vector<DiagnoseJob> jobs;       // when the logs were several jobs (absent from JSON otherwise)
  int fail = 0, warn = 0, unknown = 0, info = 0, pass = 0;
  int exit_code = 0;                   // 0 nothing wrong, 1 warnings, 2 failures, 3 nothing to judge
};

// The common Finding view of a diagnosis (nccl-log and coll print these):
// remedy = fix, then "Next: <next>"; causes go into the evidence's end.
Finding ToFinding(const Diagnosis& d);
// The diagnosis view of a finding judged elsewhere (a doctor check, a ladder
// judge, a checklist item), so diagnose names the same failures under the
// same IDs: fix = remedy, confidence high unless the finding says otherwise.
Diagnosis FromFinding(const Finding& f, const std::string& member, const std::string& source);

void to_json(nlohmann::json& j, const Diagnosis& v);
void to_json(nlohmann::json& j, const DiagnoseInput& v);
void to_json(nlohmann::json& j, const DiagnoseJob& v);
void to_json(nlohmann::json& j, const DiagnoseReport& v);

}  // namespace fabcheck::model
