#include "report/ladder_text.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/strings.h"

namespace fabcheck::report {
namespace {

std::string Clip(const std::string& s, size_t n) { return s.size() <= n ? s : s.substr(0, n - 3) + "..."; }

}  // namespace

std::string LadderProgressLine(const std::string& rung, int rung_number, int rungs, int members, size_t done,
                               size_t total, double elapsed_s, double eta_s) {
  std::string line = fmt::format("[{}/{} {}] {} member{}", rung_number, rungs, rung, members, members == 1 ? "" : "s");
  if (total > 0) line += fmt::format(", {}/{} done", done, total);
  line += fmt::format(", {:.1f} s elapsed", elapsed_s);
  if (eta_s >= 0) line += fmt::format(", ETA {:.0f} s", eta_s);
  return line;
}

std::string RenderLadderVerdict(const model::LadderManifest& m, const std::string& bundle) {
  std::string out;
  const auto& v = m.verdict;
  out += fmt::format("fabcheck ladder: {}\n", v.summary);
  int unreachable = 0;
  std::vector<std::string> gone;
  for (const auto& mem : m.members) {
    if (!mem.reachable) {
      ++unreachable;
      gone.push_back(mem.id);
    }
  }
  out += fmt::format("  {} member(s){}, {:.1f} s{}{}\n\n", m.members.size(),
                     unreachable ? fmt::format(" ({} unreachable: {})", unreachable, Join(gone, ", ")) : "",
                     m.end_unix - m.start_unix, m.interrupted ? ", INTERRUPTED" : "",
                     bundle.empty() ? "" : ", evidence in " + bundle);
  out += fmt::format("  {:<13} {:<8} {:>7} {:>6}  {}\n", "rung", "verdict", "members", "passed", "why");
  for (const auto& r : m.rungs) {
    out += fmt::format("  {:<13} {:<8} {:>7} {:>6}  {}\n", r.id, model::RungVerdictName(r.verdict), r.members.size(),
                       r.verdict == model::RungVerdict::kNotRun ? std::string("-") : std::to_string(r.members_passed.size()),
                       Clip(r.reason, 110));
  }
  // The baseline groups of L3 and L4, one line each (docs/ladder.md).
  std::string groups;
  for (const auto& r : m.rungs) {
    for (const auto& g : r.baselines) {
      const std::string verdict = g.applicable ? std::string(model::RungVerdictName(g.verdict)) : "n/a";
      const std::string what = !g.same_as.empty() ? "the " + g.same_as + " measurement"
                               : g.members.empty() ? g.reason
                                                   : Join(g.members, ", ") + ": " + g.reason;
      groups += fmt::format("  {:<3} {:<11} {:<8} {}\n", r.id, g.scope, verdict, Clip(what, 120));
    }
  }
  if (!groups.empty()) out += "\nBaseline groups:\n" + groups;
  // Failures first (with evidence and fix), then warnings in one line each.
  std::string failures, warnings;
  for (const auto& r : m.rungs) {
    for (const auto& f : r.findings) {
      if (f.severity == model::Severity::kFail) {
        failures += fmt::format("  [{}] {}: {}\n", r.id, f.object, f.message);
        for (size_t i = 0; i < f.evidence.size() && i < 4; ++i) failures += "      evidence: " + Clip(f.evidence[i], 150) + "\n";
        if (f.evidence.size() > 4) failures += fmt::format("      ... {} more in the bundle\n", f.evidence.size() - 4);
        if (!f.remedy.empty()) failures += "      fix: " + f.remedy + "\n";
      } else if (f.severity == model::Severity::kWarn) {
        warnings += fmt::format("  [{}] {}: {}\n", r.id, f.object, Clip(f.message, 140));
      }
    }
  }
  if (!failures.empty()) out += "\nFailures:\n" + failures;
  if (!warnings.empty()) out += "\nWarnings:\n" + warnings;
  std::string dropped;
  for (const auto& mem : m.members) {
    if (!mem.dropped_at.empty()) dropped += fmt::format("  {} at {}: {}\n", mem.id, mem.dropped_at, Clip(mem.dropped_reason, 140));
  }
  if (!dropped.empty()) out += "\nDropped:\n" + dropped;
  if (!bundle.empty()) out += fmt::format("\nRender it: fabcheck report {} -o report.html\n", bundle);
  return out;
}

}  // namespace fabcheck::report
