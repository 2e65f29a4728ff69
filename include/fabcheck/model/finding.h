// Finding: one result of a rule, check or lint rule, anywhere in fabcheck.
//
// Principle 1 of the design: evidence, not opinion. A finding names its rule
// (a stable ID documented in the catalog), the object it is about, what was
// read or measured, and what to do about it.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fabcheck::model {

enum class Severity {
  kPass,     // the check ran and found nothing wrong
  kInfo,     // worth knowing, not a problem
  kUnknown,  // the check could not read what it needs; never a pass, never a failure
  kWarn,     // likely a problem, or a problem that costs performance
  kFail,     // wrong: the path does not work, or not as RDMA
};

std::string_view SeverityName(Severity severity);  // "pass", "info", "unknown", "warn", "fail"
std::optional<Severity> ParseSeverity(std::string_view name);

// How sure a rule is of its conclusion (diagnose rules reason from symptoms;
// a doctor check that read the value is certain and leaves it unset).
enum class Confidence { kLow, kMedium, kHigh };
std::string_view ConfidenceName(Confidence c);  // "low", "medium", "high"
std::optional<Confidence> ParseConfidence(std::string_view name);

// Where a finding points in a file (manifests, logs, profiles).
struct SourceLocation {
  std::string file;
  int line = 0;    // 1-based; 0 when unknown
  int column = 0;  // 1-based; 0 when unknown
};

struct Finding {
  std::string id;        // stable rule ID, e.g. "port.down", "k8s.rdma.no-ipc-lock"
  Severity severity = Severity::kInfo;
  std::string group;     // e.g. "L1", "L2", "RoCE", "GDR", "container", "NCCL", "workload"
  std::string object;    // e.g. "mlx5_0 port 1", "Pod ai/nccl-worker container worker"
  std::string message;   // what is wrong, in one sentence
  std::vector<std::string> evidence;  // "/sys/class/infiniband/mlx5_0/ports/1/state = 1: DOWN"
  std::string remedy;    // how to fix it
  std::optional<SourceLocation> location;
  // Added for the one verdict (docs/verdicts.md); absent in JSON when empty.
  std::string member;    // the cluster member (node) it is about; "" = the node the command looked at
  std::string subject;   // what `object` is: "node", "nic", "port", "link", "pair", "rank", "job", "manifest", "setting"
  std::optional<Confidence> confidence;  // unset: the value was read, not inferred
  std::string next;      // the command to run next, members filled in
};

// The worst of two severities in verdict order: fail > warn > unknown > info > pass.
Severity Worse(Severity a, Severity b);
// Exit status of a set of findings (README): 2 any fail, 1 any warn (or any
// unknown when `strict`), else 0.
int ExitCodeOf(const std::vector<Finding>& findings, bool strict);

void to_json(nlohmann::json& j, const Confidence& c);
void from_json(const nlohmann::json& j, Confidence& c);
void to_json(nlohmann::json& j, const Severity& s);
void from_json(const nlohmann::json& j, Severity& s);
void to_json(nlohmann::json& j, const SourceLocation& l);
void from_json(const nlohmann::json& j, SourceLocation& l);
void to_json(nlohmann::json& j, const Finding& f);
void from_json(const nlohmann::json& j, Finding& f);

}  // namespace fabcheck::model
