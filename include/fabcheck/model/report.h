// GoLiveReport: what `fabcheck report` concludes from a ladder evidence bundle
// ("schema": "fabcheck.report/v1"): the go-live checklist of the seeds (ten
// items, each pass / fail / unknown / manual with the evidence that decides
// it), a summary of the rungs and members, and optionally what changed since a
// baseline bundle. Later v1 versions only ADD fields.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fabcheck/model/finding.h"
#include "fabcheck/model/ladder.h"

namespace fabcheck::model {

inline constexpr std::string_view kReportSchema = "fabcheck.report/v1";

enum class ChecklistStatus {
  kPass,     // the bundle's evidence shows the item holds
  kFail,     // the evidence shows it does not (members and evidence say where)
  kUnknown,  // fabcheck could observe it, but this bundle lacks the evidence (`record` says what would decide it)
  kManual,   // fabcheck cannot observe it: a person records it (`record` says what)
};
std::string_view ChecklistStatusName(ChecklistStatus s);  // "pass", "fail", "unknown", "manual"
std::optional<ChecklistStatus> ParseChecklistStatus(std::string_view name);

struct ChecklistItem {
  int number = 0;                      // 1..10, the seeds' order
  std::string id;                      // stable: "golive.topology-records", ...
  std::string title;                   // the checklist's wording
  ChecklistStatus status = ChecklistStatus::kUnknown;
  std::string summary;                 // one line: what decided the status
  std::vector<std::string> evidence;   // the values and bundle files that decided it
  std::vector<std::string> members;    // members at fault (fail) or lacking evidence (unknown)
  std::vector<std::string> record;     // manual / unknown: what to record, or run, to decide it
  std::string remedy;                  // fail: what to do
  std::vector<std::string> rungs;      // rung IDs whose evidence was used
};

struct RungSummary {
  std::string id;
  std::string title;
  std::string verdict;                 // RungVerdictName
  std::string reason;
  int members = 0;                     // ran on
  int passed = 0;
  double duration_s = 0;
  int failures = 0;                    // failing findings, pairs, checks of the rung
  int warnings = 0;
  // Failing pairs whose counters name a suspect (bundle/correlate.h), with
  // both ends' counter deltas of the rung.
  std::vector<PairTest> suspect_pairs;
};

struct MemberSummary {
  std::string id;
  std::string node_type;
  std::string rack;
  std::string leaf;
  bool reachable = true;
  std::string dropped_at;              // rung where it left the run ("" = stayed)
  std::string dropped_reason;
  std::vector<std::string> rung_status;  // per rung of the report, in order: "pass", "warn", "fail", "not_run", "dropped"
};

// One difference against the baseline bundle.
struct BaselineChange {
  std::string kind;        // "pair.slower", "pcie.downgrade", "mtu.change", "counter.rising",
                           // "member.added", "member.gone", "rung.regressed", "pair.faster", "pcie.restored"
  Severity severity = Severity::kInfo;
  std::string object;      // "dgx-02 -> dgx-07 rail 1", "dgx-03 mlx5_2", "dgx-05 ens2np0"
  std::string before;      // "392 Gb/s"; "" for an added member
  std::string after;
  std::string message;     // one sentence
};

struct BaselineDiff {
  std::string baseline;              // the baseline bundle as described ("bundle old.tar.gz")
  std::string baseline_created_at;
  std::vector<BaselineChange> changes;  // worst first
  double slower_threshold = 0.1;     // a pair is "slower" when it lost more than this fraction
};

struct ChecklistCounts {
  int pass = 0;
  int fail = 0;
  int unknown = 0;
  int manual = 0;
};

struct GoLiveReport {
  std::string schema{kReportSchema};
  std::string fabcheck_version;        // of the report
  std::string bundle;                  // "bundle run1.tar.gz"
  std::string bundle_fabcheck_version; // of the ladder run
  std::string created_at;              // the ladder run's
  std::string coordinator;
  double duration_s = 0;
  bool interrupted = false;
  bool go = false;                     // the ladder verdict
  std::string verdict_summary;
  std::string first_failing_rung;
  std::vector<RungSummary> rungs;
  std::vector<MemberSummary> members;
  std::vector<std::string> node_types; // distinct node types, most common first
  std::vector<ChecklistItem> checklist;
  ChecklistCounts counts;
  std::optional<BaselineDiff> baseline;
  std::vector<std::string> notes;      // evidence the bundle names but could not be read
  // What the verdict and exit status come from (report/findings.h): the rungs'
  // and members' failures and warnings, the checklist's failing and unknown items.
  std::vector<Finding> findings;
  bool strict = false;                 // --strict: an unknown exits 1
  int exit_code = 0;                   // 2 no-go or a failure, 1 a warning (or an unknown with strict), else 0
};

void to_json(nlohmann::json& j, const ChecklistStatus& v);
void to_json(nlohmann::json& j, const ChecklistItem& v);
void to_json(nlohmann::json& j, const RungSummary& v);
void to_json(nlohmann::json& j, const MemberSummary& v);
void to_json(nlohmann::json& j, const BaselineChange& v);
void to_json(nlohmann::json& j, const BaselineDiff& v);
void to_json(nlohmann::json& j, const ChecklistCounts& v);
void to_json(nlohmann::json& j, const GoLiveReport& v);

}  // namespace fabcheck::model
