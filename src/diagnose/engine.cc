#include "diagnose/engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "base/strings.h"
#include "diagnose/registry.h"
#include "fabcheck/version.h"

namespace fabcheck::diagnose {
namespace {

int Rank(model::Severity s) {
  switch (s) {
    case model::Severity::kFail: return 0;
    case model::Severity::kWarn: return 1;
    case model::Severity::kUnknown: return 2;
    case model::Severity::kInfo: return 3;
    case model::Severity::kPass: return 4;
  }
  return 5;
}

std::vector<model::Diagnosis> RunRules(const Evidence& evidence, bool nccl_only) {
  std::vector<model::Diagnosis> out;
  for (const Rule* rule : AllRules()) {
    if (nccl_only && std::string_view(rule->group) != "NCCL") continue;
    rule->run(evidence, &out);
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    if (Rank(a.severity) != Rank(b.severity)) return Rank(a.severity) < Rank(b.severity);
    return a.confidence > b.confidence;
  });
  return out;
}

}  // namespace

model::Diagnosis Make(const Rule& rule, model::Severity severity, model::Confidence confidence, std::string object,
                      std::string message) {
  model::Diagnosis d;
  d.rule = rule.id;
  d.group = rule.group;
  d.severity = severity;
  d.confidence = confidence;
  d.object = std::move(object);
  d.message = std::move(message);
  return d;
}

static std::vector<model::Diagnosis> CarriedDoctorFindings(const Evidence& evidence) {
  std::vector<model::Diagnosis> out;
  for (const auto& doc : evidence.doctors) {
    for (const auto& f : doc.findings) {
      if (f.severity != model::Severity::kFail && f.severity != model::Severity::kWarn) continue;
      out.push_back(model::FromFinding(f, doc.host, doc.source));
    }
  }
  return out;
}

model::DiagnoseReport Diagnose(const Evidence& evidence, std::vector<model::Diagnosis> judged, bool strict) {
  model::DiagnoseReport report;
  report.fabcheck_version = kVersion;
  report.inputs = evidence.inputs;
  report.findings = RunRules(evidence, false);
  // What the doctor (and the caller: ladder judges, checklist items) already
  // judged, under the same IDs and members, so diagnose never says less than
  // the command that judged it. One per ID and member.
  std::vector<model::Diagnosis> carried = CarriedDoctorFindings(evidence);
  carried.insert(carried.end(), std::make_move_iterator(judged.begin()), std::make_move_iterator(judged.end()));
  std::set<std::pair<std::string, std::string>> seen;
  for (const auto& d : report.findings) seen.insert({d.rule, d.member});
  for (auto& d : carried) {
    if (seen.insert({d.rule, d.member}).second) report.findings.push_back(std::move(d));
  }
  std::stable_sort(report.findings.begin(), report.findings.end(), [](const auto& a, const auto& b) {
    if (Rank(a.severity) != Rank(b.severity)) return Rank(a.severity) < Rank(b.severity);
    return a.confidence > b.confidence;
  });
  for (const auto& d : report.findings) {
    switch (d.severity) {
      case model::Severity::kFail: ++report.fail; break;
      case model::Severity::kWarn: ++report.warn; break;
      case model::Severity::kUnknown: ++report.unknown; break;
      case model::Severity::kInfo: ++report.info; break;
      case model::Severity::kPass: ++report.pass; break;
    }
  }
  bool any_read = std::any_of(report.inputs.begin(), report.inputs.end(), [](const auto& i) {
    return i.status == "read" || i.status.rfind("read in part", 0) == 0;
  });
  report.exit_code = !any_read ? 3 : report.fail > 0 ? 2 : (report.warn > 0 || (strict && report.unknown > 0)) ? 1 : 0;
  return report;
}

std::vector<model::Finding> NcclLogFindings(const model::NcclLogSummary& summary) {
  Evidence evidence;
  evidence.nccl = summary;
  evidence.nccl->findings.clear();
  std::vector<model::Finding> out = summary.findings;
  for (const auto& d : RunRules(evidence, true)) out.push_back(model::ToFinding(d));
  return out;
}

std::string FormatDiagnoseReport(const model::DiagnoseReport& report, bool verbose) {
  std::string out;
  out += "inputs:\n";
  for (const auto& in : report.inputs) {
    out += fmt::format("  {} ({}){}\n", in.path, in.kind, in.status == "read" ? "" : ": " + in.status);
  }
  out += fmt::format("diagnoses: {} fail, {} warn, {} unknown, {} info\n", report.fail, report.warn, report.unknown,
                     report.info);
  for (const auto& d : report.findings) {
    if (d.severity == model::Severity::kPass && !verbose) continue;
    out += fmt::format("\n[{}] {} ({} confidence): {}\n", model::SeverityName(d.severity), d.rule,
                       model::ConfidenceName(d.confidence), d.message);
    if (!d.object.empty()) out += fmt::format("  on: {}\n", d.object);
    size_t shown = 0;
    for (const auto& e : d.evidence) {
      if (!verbose && shown == 8) {
        out += fmt::format("  ... {} more evidence lines (--verbose)\n", d.evidence.size() - shown);
        break;
      }
      out += fmt::format("  evidence: {}\n", e);
      ++shown;
    }
    for (size_t i = 0; i < d.causes.size(); ++i) out += fmt::format("  cause {}: {}\n", i + 1, d.causes[i]);
    if (!d.fix.empty()) out += fmt::format("  fix: {}\n", d.fix);
    if (!d.next.empty()) out += fmt::format("  next: {}\n", d.next);
  }
  if (report.findings.empty()) out += "\nno rule fired on this evidence\n";
  return out;
}

}  // namespace fabcheck::diagnose
