#include "report/markdown.h"

#include <fmt/format.h>

#include "base/strings.h"
#include "base/terminal_text.h"
#include "report/golive.h"

namespace fabcheck::report {
namespace {

constexpr size_t kMembersListed = 128;

std::string StatusBadge(model::ChecklistStatus s) {
  switch (s) {
    case model::ChecklistStatus::kPass: return "PASS";
    case model::ChecklistStatus::kFail: return "**FAIL**";
    case model::ChecklistStatus::kUnknown: return "UNKNOWN";
    case model::ChecklistStatus::kManual: return "MANUAL";
  }
  return "?";
}

// A rung status comes from the bundle: anything but the known words is text.
std::string RungBadge(const std::string& v) {
  if (v == "fail") return "**fail**";
  if (v == "not_run") return "not run";
  return MarkdownEscape(v);
}

}  // namespace

std::string MarkdownEscape(std::string_view text) {
  // Newlines would end a table row or start a block: one line, always.
  std::string line(text);
  for (char& c : line) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  std::string out;
  out.reserve(line.size());
  for (char c : NeutralizeControls(line)) {
    switch (c) {
      // Emphasis, code spans, tables, headings, strikethrough and the
      // backslash itself: shown as typed.
      case '\\': case '*': case '_': case '`': case '|': case '#': case '~':
      // Links and images ([x](javascript:...), ![x](https://tracker/)) and
      // their reference definitions need '[': none can start.
      case '[': case ']': case '!':
        out += '\\';
        out += c;
        break;
      // Raw HTML (<script>, <img src=...>) and character references.
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string RenderMarkdown(const model::GoLiveReport& r) {
  auto esc = [](std::string_view s) { return MarkdownEscape(s); };
  std::string out;
  out += fmt::format("# Go-live report: {}\n\n", r.go ? "GO" : "NO-GO");
  out += fmt::format("- bundle: {} (fabcheck {}, created {} on {})\n", esc(r.bundle), esc(r.bundle_fabcheck_version),
                     esc(r.created_at), esc(r.coordinator.empty() ? "?" : r.coordinator));
  out += fmt::format("- members: {}; node types: {}\n", r.members.size(),
                     esc(r.node_types.empty() ? "-" : Join(r.node_types, ", ")));
  out += fmt::format("- ladder verdict: {}{}\n", esc(r.verdict_summary),
                     r.first_failing_rung.empty() ? "" : fmt::format(" (first failing rung: {})", esc(r.first_failing_rung)));
  if (r.interrupted) out += "- the run was interrupted: what was measured until then is kept\n";
  out += fmt::format("- checklist: {} pass, {} fail, {} unknown, {} manual\n\n", r.counts.pass, r.counts.fail,
                     r.counts.unknown, r.counts.manual);

  out += "## Go-live checklist\n\n| # | Item | Status | Why |\n|---|---|---|---|\n";
  for (const auto& item : r.checklist) {
    out += fmt::format("| {} | {} | {} | {} |\n", item.number, esc(item.title), StatusBadge(item.status),
                       esc(item.summary));
  }
  out += "\n";
  for (const auto& item : r.checklist) {
    out += fmt::format("### {}. {} — {}\n\n", item.number, esc(item.title), StatusBadge(item.status));
    out += fmt::format("{} (`{}`)\n\n", esc(item.summary), esc(item.id));
    if (!item.members.empty()) {
      out += fmt::format("Members: {}\n\n", esc(Join(item.members, ", ")));
    }
    if (!item.evidence.empty()) {
      out += "Evidence:\n\n";
      for (const auto& e : item.evidence) out += "- " + esc(e) + "\n";
      out += "\n";
    }
    if (!item.remedy.empty()) out += "Fix: " + esc(item.remedy) + "\n\n";
    if (!item.record.empty()) {
      out += item.status == model::ChecklistStatus::kManual ? "To record:\n\n" : "To decide or complete it:\n\n";
      for (const auto& rec : item.record) out += "- [ ] " + esc(rec) + "\n";
      out += "\n";
    }
  }

  out += "## Rungs\n\n| Rung | Verdict | Ran on | Passed | Duration | Failures | Reason |\n|---|---|---|---|---|---|---|\n";
  for (const auto& g : r.rungs) {
    out += fmt::format("| {} {} | {} | {} | {} | {:.1f} s | {} | {} |\n", esc(g.id), esc(g.title), RungBadge(g.verdict),
                       g.members, g.passed, g.duration_s, g.failures, esc(g.reason));
  }
  bool any_suspect = false;
  for (const auto& g : r.rungs) any_suspect |= !g.suspect_pairs.empty();
  if (any_suspect) {
    out += "\nFailing pairs whose own counters name a suspect:\n\n";
    for (const auto& g : r.rungs) {
      for (const auto& p : g.suspect_pairs) {
        out += "- " + g.id + " " + esc(DescribeSuspectPair(p)) + "\n  - counters in " + g.id + ": " +
               esc(DescribePairCounters(p)) + "\n";
      }
    }
  }
  out += "\n## Members\n\n";
  std::string header = "| Member | Type | Rack | Leaf |";
  std::string rule = "|---|---|---|---|";
  for (const auto& g : r.rungs) {
    header += " " + esc(g.id) + " |";
    rule += "---|";
  }
  out += header + " Left the run |\n" + rule + "---|\n";
  size_t listed = 0, skipped = 0;
  for (const auto& m : r.members) {
    bool healthy = m.dropped_at.empty() && m.reachable;
    if (r.members.size() > kMembersListed && healthy) {
      ++skipped;
      continue;
    }
    ++listed;
    std::string row = fmt::format("| {} | {} | {} | {} |", esc(m.id), esc(m.node_type), esc(m.rack), esc(m.leaf));
    for (const auto& s : m.rung_status) row += " " + RungBadge(s) + " |";
    row += " " + (m.dropped_at.empty() ? std::string(m.reachable ? "" : "unreachable") : esc(m.dropped_at)) +
           (m.dropped_reason.empty() ? "" : ": " + esc(m.dropped_reason)) + " |";
    out += row + "\n";
  }
  if (skipped > 0) out += fmt::format("\n{} members that passed every rung they ran are not listed.\n", skipped);
  if (r.baseline) {
    const auto& b = *r.baseline;
    out += fmt::format("\n## Changes since the baseline\n\nBaseline: {} (created {}); a pair counts as slower below "
                       "{:.0f}% of its baseline bandwidth.\n\n",
                       esc(b.baseline), esc(b.baseline_created_at), (1 - b.slower_threshold) * 100);
    if (b.changes.empty()) {
      out += "No change.\n";
    } else {
      out += "| Severity | Change | Object | Before | After | What |\n|---|---|---|---|---|---|\n";
      for (const auto& c : b.changes) {
        out += fmt::format("| {} | {} | {} | {} | {} | {} |\n", model::SeverityName(c.severity), esc(c.kind), esc(c.object),
                           esc(c.before), esc(c.after), esc(c.message));
      }
    }
  }
  if (!r.notes.empty()) {
    out += "\n## Notes\n\n";
    for (const auto& n : r.notes) out += "- " + esc(n) + "\n";
  }
  out += fmt::format("\n---\nfabcheck report {} (schema {})\n", esc(r.fabcheck_version), esc(r.schema));
  return out;
}

}  // namespace fabcheck::report
