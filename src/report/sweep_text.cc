#include "report/sweep_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "base/units.h"
#include "report/table.h"

namespace fabcheck::report {
namespace {

// Higher is better for bandwidth and MTU; lower for latency.
char Glyph(double value, double median, bool higher_is_better) {
  if (std::isnan(value)) return '?';
  if (median <= 0) return '#';
  double r = higher_is_better ? value / median : median / value;
  if (r >= 0.9) return '#';
  if (r >= 0.75) return '+';
  if (r >= 0.5) return '-';
  if (r >= 0.1) return '.';
  return '!';
}

std::string Label(const model::SweepResult& r, int i) {
  const auto& m = r.members[static_cast<size_t>(i)];
  const std::string& name = m.display.empty() ? m.name : m.display;  // "name@host" when names repeat
  return name.empty() ? fmt::format("node-{}", i) : name;
}

size_t LabelWidth(const model::SweepResult& r, int n) {
  size_t width = 4;
  for (int i = 0; i < n; ++i) width = std::max(width, Label(r, i).size());
  return width;
}

void Heatmap(std::string& out, const model::SweepResult& r, const model::PairMatrix& m, double median,
             bool higher_is_better, const char* title) {
  const int n = m.size();
  const size_t width = LabelWidth(r, n);
  out += fmt::format("{} (row sends to column; # >= 90% of the median {:.4g}, + >= 75%, - >= 50%, . >= 10%, ! below, "
                     "? not measured)\n",
                     title, median);
  // Label, the row of glyphs, the row number again.
  TextTable table({{"", width, Align::kRight}, {"", 0, Align::kLeft, 0, "  "}, {"", 0, Align::kLeft, 0, "  "}});
  std::string digits;
  for (int j = 0; j < n; ++j) digits += static_cast<char>('0' + j % 10);
  out += TextTable({{"", width, Align::kRight}, {"", 0, Align::kLeft, 0, "  "}}).Row({"", digits});
  for (int i = 0; i < n; ++i) {
    std::string glyphs;
    for (int j = 0; j < n; ++j) glyphs += i == j ? ' ' : Glyph(m.at(i, j), median, higher_is_better);
    out += table.Row({Label(r, i), glyphs, std::to_string(i)});
  }
}

void Numbers(std::string& out, const model::SweepResult& r, const model::PairMatrix& m, const char* title,
             const char* format) {
  const int n = m.size();
  std::vector<Column> columns = {{"", LabelWidth(r, n), Align::kRight}};
  for (int j = 0; j < n; ++j) columns.push_back({std::to_string(j), 7, Align::kRight});
  TextTable table(columns);
  out += std::string(title) + "\n" + table.Header();
  for (int i = 0; i < n; ++i) {
    std::vector<std::string> cells = {Label(r, i)};
    for (int j = 0; j < n; ++j) {
      if (i == j) cells.emplace_back("");
      else if (!m.has(i, j)) cells.emplace_back("-");
      else cells.push_back(fmt::format(fmt::runtime(format), m.at(i, j)));
    }
    out += table.Row(cells);
  }
}

}  // namespace

std::string SweepProgressLine(int round, int rounds, double elapsed_s, double eta_s, int unreachable) {
  std::string line = fmt::format("sweep: round {} of {}, elapsed {}, ETA {}", round, rounds,
                                 FormatDuration(elapsed_s), FormatDuration(eta_s));
  if (unreachable > 0) line += fmt::format(", {} unreachable", unreachable);
  return line;
}

std::string RenderSweepText(const model::SweepResult& r, const SweepTextOptions& o) {
  std::string out;
  int reachable = 0;
  for (const auto& m : r.members) reachable += m.reachable ? 1 : 0;
  out += fmt::format("fabcheck sweep: {} members ({} reachable), pattern {}, {} rail(s), {} of {} rounds in {}{}\n",
                     r.members.size(), reachable, r.pattern, r.rails, r.rounds_completed, r.rounds_planned,
                     FormatDuration(r.elapsed_s), r.interrupted ? " (INTERRUPTED: partial result)" : "");
  out += fmt::format("transport: {}\n", r.transport.empty() ? "unknown" : r.transport);
  const auto& v = r.verdict;
  out += fmt::format("verdict: {} - {}\n", model::SeverityName(v.severity), v.summary);
  for (const auto& s : v.stats) {
    out += fmt::format("rail {}: {} directions measured; bandwidth median {:.4g} Gb/s (MAD {:.3g}); latency median "
                       "{:.4g} us; path MTU median {:.0f}\n",
                       s.rail, s.pairs_measured, s.bw_median_gbps, s.bw_mad_gbps, s.lat_median_us, s.path_mtu_median);
  }
  out += "\n";
  if (!v.findings.empty()) {
    out += "findings:\n";
    for (const auto& f : v.findings) {
      out += fmt::format("  [{}] {} {}: {}\n", model::SeverityName(f.severity), f.id, f.object, f.message);
      for (const auto& e : f.evidence) out += fmt::format("      evidence: {}\n", e);
      if (!f.remedy.empty()) out += fmt::format("      fix: {}\n", f.remedy);
    }
    out += "\n";
  }
  const int n = static_cast<int>(r.members.size());
  if (n > o.heatmap_up_to) {
    out += fmt::format("({} members: matrices are in --json / --output only)\n", n);
    return out;
  }
  for (size_t k = 0; k < r.matrices.size(); ++k) {
    const auto& m = r.matrices[k];
    const model::SweepStats* s = k < v.stats.size() ? &v.stats[k] : nullptr;
    std::string rail = r.rails > 1 ? fmt::format(" rail {}", m.rail) : "";
    if (m.bw_gbps.measured() > 0) {
      Heatmap(out, r, m.bw_gbps, s ? s->bw_median_gbps : 0, true, ("bandwidth" + rail).c_str());
      out += "\n";
    }
    if (m.path_mtu.measured() > 0) {
      Heatmap(out, r, m.path_mtu, s ? s->path_mtu_median : 0, true, ("path MTU" + rail).c_str());
      out += "\n";
    }
    if (n <= o.numeric_up_to) {
      if (m.bw_gbps.measured() > 0) Numbers(out, r, m.bw_gbps, ("bandwidth Gb/s" + rail).c_str(), "{:.3g}");
      if (m.lat_median_us.measured() > 0) {
        Numbers(out, r, m.lat_median_us, ("latency median us" + rail).c_str(), "{:.3g}");
      }
      if (m.path_mtu.measured() > 0) Numbers(out, r, m.path_mtu, ("path MTU bytes" + rail).c_str(), "{:.0f}");
      out += "\n";
    }
  }
  return out;
}

}  // namespace fabcheck::report
