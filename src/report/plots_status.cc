// Rung strip and member x rung grid.
#include <fmt/format.h>

#include <algorithm>

#include "report/plots.h"
#include "report/svg.h"

namespace fabcheck::report::plots {

std::string RungStrip(const model::GoLiveReport& r) {
  if (r.rungs.empty()) return "";
  const int box_w = 168, box_h = 62, gap = 18;
  const int width = static_cast<int>(r.rungs.size()) * (box_w + gap) - gap + 2;
  svg::Canvas c(width, box_h + 4, "ladder rungs, bottom-up, with their verdicts");
  double x = 1;
  for (size_t i = 0; i < r.rungs.size(); ++i) {
    const auto& g = r.rungs[i];
    std::string tip = fmt::format("{} {}: {} - {} of {} members passed{}", g.id, g.title, g.verdict, g.passed, g.members,
                                  g.reason.empty() ? "" : " - " + g.reason);
    c.Rect(x, 2, box_w, box_h, svg::StatusColour(g.verdict), tip, "rx=\"6\"");
    const char* ink = g.verdict == "not_run" ? "#333" : "#fff";
    c.Text(x + 10, 22, g.id, fmt::format("class=\"strip-id\" fill=\"{}\"", ink));
    std::string verdict = g.verdict == "not_run" ? "NOT RUN" : g.verdict == "pass" ? "PASS" : g.verdict == "warn" ? "WARN" : "FAIL";
    c.Text(x + box_w - 10, 22, verdict, fmt::format("class=\"strip-id\" text-anchor=\"end\" fill=\"{}\"", ink));
    c.Text(x + 10, 40, g.title.size() > 24 ? g.title.substr(0, 23) + "…" : g.title,
           fmt::format("class=\"strip-sub\" fill=\"{}\"", ink));
    c.Text(x + 10, 55, g.members > 0 ? fmt::format("{}/{} passed, {:.0f} s", g.passed, g.members, g.duration_s) : "—",
           fmt::format("class=\"strip-sub\" fill=\"{}\"", ink));
    if (i + 1 < r.rungs.size()) {
      double ax = x + box_w + 3;
      c.Polygon({{ax, 26}, {ax + gap - 6, 33}, {ax, 40}}, "#9aa3ad");
    }
    x += box_w + gap;
  }
  return c.Finish();
}

std::string MemberGrid(const model::GoLiveReport& r) {
  if (r.members.empty() || r.rungs.empty()) return "";
  std::vector<const model::MemberSummary*> shown;
  size_t folded = 0;
  for (const auto& m : r.members) {
    bool clean = std::all_of(m.rung_status.begin(), m.rung_status.end(),
                             [](const std::string& s) { return s == "pass" || s == "warn" || s == "not_run"; });
    if (r.members.size() > kHeatmapMembers && clean) {
      ++folded;
      continue;
    }
    shown.push_back(&m);
  }
  const int row_h = 16, label_w = 150, col_w = 92, top = 24;
  const int height = top + static_cast<int>(shown.size()) * row_h + (folded ? row_h : 0) + 6;
  const int width = label_w + static_cast<int>(r.rungs.size()) * col_w + 4;
  svg::Canvas c(width, height, "status of every member on every rung");
  for (size_t j = 0; j < r.rungs.size(); ++j) {
    c.Text(label_w + j * col_w + col_w / 2.0, 15, r.rungs[j].id, "text-anchor=\"middle\" class=\"tick\"");
  }
  double y = top;
  for (const auto* m : shown) {
    std::string label = m->id.size() > 22 ? m->id.substr(0, 21) + "…" : m->id;
    c.Text(label_w - 6, y + 12, label, "text-anchor=\"end\" class=\"tick\"");
    for (size_t j = 0; j < m->rung_status.size() && j < r.rungs.size(); ++j) {
      const std::string& s = m->rung_status[j];
      std::string tip = fmt::format("{} on {}: {}{}", m->id, r.rungs[j].id, s,
                                    m->dropped_at == r.rungs[j].id && !m->dropped_reason.empty() ? " - " + m->dropped_reason : "");
      c.Rect(label_w + j * col_w + 2, y + 1, col_w - 4, row_h - 3, svg::StatusColour(s), tip, "rx=\"2\"");
    }
    y += row_h;
  }
  if (folded) {
    c.Text(label_w - 6, y + 12, fmt::format("+{} members", folded), "text-anchor=\"end\" class=\"tick\"");
    c.Text(label_w + 4, y + 12, "passed every rung they ran (not drawn one by one)", "class=\"tick\"");
  }
  return c.Finish();
}

}  // namespace fabcheck::report::plots
