#include "telemetry/host_findings.h"

#include <array>
#include <map>
#include <set>
#include <tuple>

namespace fabcheck::telemetry {

void AddHostFindingMetrics(const std::vector<model::Finding>& findings, bool up, const Labels& node,
                           MetricSet& out) {
  auto& family = out.Family("fabcheck_host_finding",
                            "A finding of doctor's host checks on this node (1 per finding; severity pass, info, "
                            "unknown, warn, fail). The message and fix: `fabcheck doctor --only host` on the node.",
                            MetricType::kGauge);
  // One series per (check, severity, object): a check reporting the same
  // object twice (several IRQ vectors of one NIC) stays one series.
  std::set<std::tuple<std::string, std::string, std::string>> seen;
  std::map<std::string, int> counts;
  for (const auto& severity : {model::Severity::kPass, model::Severity::kInfo, model::Severity::kUnknown,
                               model::Severity::kWarn, model::Severity::kFail}) {
    counts[std::string(model::SeverityName(severity))] = 0;
  }
  for (const model::Finding& f : findings) {
    std::string severity(model::SeverityName(f.severity));
    ++counts[severity];
    if (!seen.insert({f.id, severity, f.object}).second) continue;
    Labels labels = node;
    labels.emplace_back("check", f.id);
    labels.emplace_back("severity", severity);
    labels.emplace_back("object", f.object);
    family.samples.push_back({std::move(labels), 1});
  }
  auto& totals = out.Family("fabcheck_host_findings",
                            "Findings of doctor's host checks on this node, by severity.", MetricType::kGauge);
  for (const auto& [severity, count] : counts) {
    Labels labels = node;
    labels.emplace_back("severity", severity);
    totals.samples.push_back({std::move(labels), static_cast<double>(count)});
  }
  out.Add("fabcheck_exporter_host_checks_up",
          "1 when the last run of the host checks succeeded (0: the findings shown are from the last good run, "
          "or none).",
          MetricType::kGauge, node, up ? 1 : 0);
}

}  // namespace fabcheck::telemetry
