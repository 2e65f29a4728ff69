#include "report/golive.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>

#include "report/checklist.h"
#include "report/findings.h"

namespace fabcheck::report {
namespace {

model::RungSummary Summarize(const model::RungResult& r) {
  model::RungSummary s;
  s.id = r.id;
  s.title = r.title;
  s.verdict = std::string(model::RungVerdictName(r.verdict));
  s.reason = r.reason;
  s.members = static_cast<int>(r.members.size());
  s.passed = static_cast<int>(r.members_passed.size());
  s.duration_s = r.end_unix > r.start_unix ? r.end_unix - r.start_unix : 0;
  auto count = [&](model::RungVerdict v) {
    if (v == model::RungVerdict::kFail) ++s.failures;
    if (v == model::RungVerdict::kWarn) ++s.warnings;
  };
  for (const auto& f : r.findings) {
    if (f.severity == model::Severity::kFail) ++s.failures;
    if (f.severity == model::Severity::kWarn) ++s.warnings;
  }
  for (const auto& c : r.consistency) count(c.verdict);
  for (const auto& p : r.pairs) count(p.verdict);
  for (const auto& c : r.collectives) count(c.verdict);
  for (const auto& n : r.nccl) count(n.verdict);
  for (const auto& p : r.pairs) {
    if (p.suspect) s.suspect_pairs.push_back(p);
  }
  return s;
}

// Per member and rung: "pass" when it passed the rung, "fail" when it ran it
// and did not pass, "dropped" after it left the run, "not_run" otherwise.
std::vector<std::string> RungStatus(const model::LadderMember& m, const model::LadderManifest& manifest) {
  std::vector<std::string> out;
  bool dropped = false;
  for (const auto& r : manifest.rungs) {
    if (dropped) {
      out.emplace_back("dropped");
      continue;
    }
    bool ran = std::find(r.members.begin(), r.members.end(), m.id) != r.members.end();
    bool passed = std::find(r.members_passed.begin(), r.members_passed.end(), m.id) != r.members_passed.end();
    if (!ran) {
      out.emplace_back(r.verdict == model::RungVerdict::kNotRun || !m.reachable ? "not_run" : "dropped");
    } else if (passed) {
      out.emplace_back(r.verdict == model::RungVerdict::kWarn ? "warn" : "pass");
    } else {
      out.emplace_back("fail");
    }
    if (!m.dropped_at.empty() && m.dropped_at == r.id) dropped = true;
  }
  return out;
}

}  // namespace

std::string DescribeSuspectPair(const model::PairTest& p) {
  std::string out = fmt::format("{} -> {} rail {}: {}", p.a, p.b, p.rail, p.reason);
  if (p.suspect) {
    out += fmt::format(": suspect {} of {} {} ({} confidence): {}", p.suspect->element, p.suspect->member,
                       p.suspect->port, p.suspect->confidence, p.suspect->why);
  }
  return out;
}

std::string DescribePairCounters(const model::PairTest& p) {
  std::vector<std::string> parts;
  for (const auto& d : p.counters) {
    parts.push_back(fmt::format("{} {} {} +{} ({:.0f} s)", d.member, d.object, d.counter, d.delta, d.interval_s));
  }
  return parts.empty() ? "no counter of either port moved" : fmt::format("{}", fmt::join(parts, "; "));
}

model::GoLiveReport BuildReport(const BundleEvidence& e, const ReportOptions& options) {
  // KV results given beside the bundle are rung L5, after the ladder's own.
  model::LadderManifest man = e.manifest;
  if (!e.kv.empty()) man.rungs.push_back(KvRung(e));
  model::GoLiveReport r;
  r.fabcheck_version = options.fabcheck_version;
  r.bundle = e.source;
  r.bundle_fabcheck_version = man.fabcheck_version;
  r.created_at = man.created_at;
  r.coordinator = man.coordinator;
  r.duration_s = man.end_unix > man.start_unix ? man.end_unix - man.start_unix : 0;
  r.interrupted = man.interrupted;
  r.go = man.verdict.go;
  r.verdict_summary = man.verdict.summary;
  r.first_failing_rung = man.verdict.first_failing_rung;
  if (!e.kv.empty() && man.rungs.back().verdict == model::RungVerdict::kFail) {
    r.go = false;
    if (r.first_failing_rung.empty()) r.first_failing_rung = "L5";
    r.verdict_summary += (r.verdict_summary.empty() ? "" : "; ") + std::string("L5 failed: ") + man.rungs.back().reason;
  }
  for (const auto& rung : man.rungs) r.rungs.push_back(Summarize(rung));
  std::map<std::string, size_t> types;
  for (const auto& m : man.members) {
    model::MemberSummary s;
    s.id = m.id;
    s.node_type = m.node_type;
    s.rack = m.rack;
    s.leaf = m.leaf;
    s.reachable = m.reachable;
    s.dropped_at = m.dropped_at;
    s.dropped_reason = !m.dropped_reason.empty() ? m.dropped_reason : m.error;
    s.rung_status = RungStatus(m, man);
    r.members.push_back(std::move(s));
    types[m.node_type]++;
  }
  std::vector<std::pair<std::string, size_t>> by_count(types.begin(), types.end());
  std::stable_sort(by_count.begin(), by_count.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  for (const auto& [type, n] : by_count) r.node_types.push_back(type);
  r.checklist = EvaluateChecklist(e);
  for (const auto& item : r.checklist) {
    switch (item.status) {
      case model::ChecklistStatus::kPass: ++r.counts.pass; break;
      case model::ChecklistStatus::kFail: ++r.counts.fail; break;
      case model::ChecklistStatus::kUnknown: ++r.counts.unknown; break;
      case model::ChecklistStatus::kManual: ++r.counts.manual; break;
    }
  }
  r.notes = e.notes;
  if (options.baseline) r.baseline = DiffBundles(*options.baseline, e, options.slower_threshold);
  // The verdict comes from the findings (docs/verdicts.md): the ladder's
  // no-go, any failing finding or item is 2; a warning 1; an unknown 1 only
  // with --strict (never a pass: the checklist shows it).
  r.findings = BundleFindings(e, r.checklist);
  r.strict = options.strict;
  r.exit_code = !r.go ? 2 : model::ExitCodeOf(r.findings, options.strict);
  return r;
}

}  // namespace fabcheck::report
