// The judgement catalog: one entry per ID a finding can carry, whichever
// command judges it (doctor checks, ladder judges, diagnose rules, the
// report's checklist items, k8s lint rules). `fabcheck explain` and
// docs/catalog.md are generated from it; docs/verdicts.md says how findings
// become verdicts and exit codes.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

#include "fabcheck/model/finding.h"

namespace fabcheck::model {

inline constexpr std::string_view kCatalogSchema = "fabcheck.catalog/v1";

struct CatalogEntry {
  std::string id;        // stable: "port.down", "ladder.perf.fail", "golive.nccl-path", "k8s.rdma.no-ipc-lock"
  std::string source;    // who judges it: "doctor", "ladder", "diagnose", "report", "k8s"
  std::string group;     // rung or group: "L1", "L3", "NCCL", "counters", "workload"...
  std::optional<Severity> severity;  // a fixed default level, where the rule has one (k8s lint)
  std::string title;     // fires when ...
  std::string why;       // why it matters
  std::string fix;       // how to fix it (findings carry the specific remedy)
};

void to_json(nlohmann::json& j, const CatalogEntry& e);

}  // namespace fabcheck::model
