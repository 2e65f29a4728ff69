#include "diagnose/engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "base/strings.h"
#include "diagnose/jobs.h"
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

// Which rules a pass runs: all, the NCCL ones (nccl-log, coll), or, when the
// logs are split by job, the log rules per job and the others once.
enum class RuleSet { kAll, kNccl, kLogs, kNotLogs };

bool IsLogRule(const Rule& rule) {
  std::string_view group = rule.group;
  return group == "NCCL" || group == "input";
}

std::vector<model::Diagnosis> RunRules(const Evidence& evidence, RuleSet set) {
  std::vector<model::Diagnosis> out;
  for (const Rule* rule : AllRules()) {
    if (set == RuleSet::kNccl && std::string_view(rule->group) != "NCCL") continue;
    if (set == RuleSet::kLogs && !IsLogRule(*rule)) continue;
    if (set == RuleSet::kNotLogs && IsLogRule(*rule)) continue;
    rule->run(evidence, &out);
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    if (Rank(a.severity) != Rank(b.severity)) return Rank(a.severity) < Rank(b.severity);
    return a.confidence > b.confidence;
  });
  return out;
}

bool AnyInputRead(const model::DiagnoseReport& report) {
  return std::any_of(report.inputs.begin(), report.inputs.end(), [](const auto& i) {
    return i.status == "read" || i.status.rfind("read in part", 0) == 0;
  });
}

// Whether anything read is evidence a rule could judge: NCCL or framework
// lines, counters, results, doctor reports, a bundle's members.
bool HoldsEvidence(const Evidence& ev) {
  bool log = ev.nccl && (ev.nccl->nccl_lines > 0 || !ev.nccl->events.empty() || !ev.nccl->warnings.empty());
  return log || !ev.counters.empty() || !ev.pairs.empty() || !ev.colls.empty() || !ev.doctors.empty() ||
         !ev.kvs.empty() || !ev.members.empty() || !ev.bundle.empty();
}

// Every rule over the evidence; logs of several jobs are judged job by job
// (jobs.h): each job's findings name it, and each job gets its verdict.
std::vector<model::Diagnosis> RunRulesByJob(const Evidence& evidence, std::vector<model::DiagnoseJob>* verdicts) {
  std::vector<JobLogs> jobs = SplitLogsByJob(evidence);
  if (jobs.empty()) return RunRules(evidence, RuleSet::kAll);
  Evidence rest = evidence;
  rest.nccl.reset();
  std::vector<model::Diagnosis> out = RunRules(rest, RuleSet::kNotLogs);
  for (auto& job : jobs) {
    Evidence one = evidence;
    one.nccl = std::move(job.nccl);
    model::DiagnoseJob verdict;
    verdict.id = job.id;
    verdict.files = job.files;
    for (auto& d : RunRules(one, RuleSet::kLogs)) {
      if (d.severity == model::Severity::kFail) ++verdict.fail;
      if (d.severity == model::Severity::kWarn) ++verdict.warn;
      if (d.severity == model::Severity::kUnknown) ++verdict.unknown;
      d.object = job.id + (d.object.empty() ? "" : ": " + d.object);
      out.push_back(std::move(d));
    }
    verdict.exit_code = verdict.fail > 0 ? 2 : verdict.warn > 0 ? 1 : 0;
    verdicts->push_back(std::move(verdict));
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
  report.findings = RunRulesByJob(evidence, &report.jobs);
  // What the doctor (and the caller: ladder judges, checklist items) already
  // judged, under the same IDs and members, so diagnose never says less than
  // the command that judged it. One per ID and member.
  const bool caller_judged = !judged.empty();
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
  // Nothing read, or read but nothing in it to judge (an empty log): exit 3,
  // never "0, nothing wrong" for evidence that was not there.
  bool anything_judged = (AnyInputRead(report) && HoldsEvidence(evidence)) || caller_judged;
  report.exit_code = report.fail > 0                                        ? 2
                     : !anything_judged                                     ? 3
                     : (report.warn > 0 || (strict && report.unknown > 0)) ? 1
                                                                            : 0;
  return report;
}

std::vector<model::Finding> NcclLogFindings(const model::NcclLogSummary& summary) {
  Evidence evidence;
  evidence.nccl = summary;
  evidence.nccl->findings.clear();
  std::vector<model::Finding> out = summary.findings;
  for (const auto& d : RunRules(evidence, RuleSet::kNccl)) out.push_back(model::ToFinding(d));
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
  if (!report.jobs.empty()) {
    out += fmt::format("the logs are {} jobs, judged apart (no cause is drawn across them):\n", report.jobs.size());
    for (const auto& j : report.jobs) {
      out += fmt::format("  {}: {} ({} fail, {} warn): {}\n", j.id, j.exit_code == 2 ? "FAIL" : j.exit_code == 1 ? "WARN" : "ok",
                         j.fail, j.warn, Join(j.files, ", "));
    }
  }
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
  if (report.exit_code == 3) {
    out += AnyInputRead(report) ? "\nnothing to judge: the inputs were read but held no evidence (no NCCL line, counter, "
                                  "result or bundle)\n"
                                : "\nnothing to judge: none of the inputs could be read (see their status above)\n";
  } else if (report.findings.empty()) {
    out += "\nno rule fired on this evidence\n";
  }
  return out;
}

}  // namespace fabcheck::diagnose
