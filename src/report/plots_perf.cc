// L3 and L4 plots: bandwidth against message size with the expected
// envelope, busbw per collective, latency percentiles, pair heatmaps.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "fabcheck/model/json_fields.h"
#include "report/plots.h"
#include "report/svg.h"

namespace fabcheck::report::plots {
namespace {

constexpr int kW = 720, kH = 300, kLeft = 64, kRight = 20, kTop = 18, kBottom = 48;
constexpr size_t kCurvesDrawn = 48;  // beyond, a min-max band and the failing pairs only

struct Series {
  std::string label;
  std::vector<std::pair<double, double>> points;  // bytes, value
  bool failed = false;
};

// Pass ratio the rung judged with ("pass_ratio" parameter), 0.9 by default.
double PassRatio(const model::RungResult& r) {
  if (r.parameters.is_object() && r.parameters.contains("pass_ratio") && r.parameters["pass_ratio"].is_number()) {
    double v = r.parameters["pass_ratio"].get<double>();
    if (v > 0 && v <= 1) return v;
  }
  return 0.9;
}

std::string SizeCurves(const std::vector<Series>& series, double expected, double pass_ratio, const char* y_label,
                       const char* title, const char* unit) {
  double x0 = std::numeric_limits<double>::max(), x1 = 0, y1 = expected > 0 ? expected / pass_ratio : 0;
  for (const auto& s : series) {
    for (const auto& [x, y] : s.points) {
      x0 = std::min(x0, x), x1 = std::max(x1, x), y1 = std::max(y1, y);
    }
  }
  if (x1 <= 0) return "";
  if (x0 >= x1) x0 = x1 / 2;
  svg::Canvas c(kW, kH, title);
  svg::Scale sx{x0, x1, kLeft, kW - kRight, true};
  svg::Scale sy{0, y1 * 1.08, kH - kBottom, kTop, false};
  if (expected > 0) {
    // The envelope: from the pass line up to the line rate it derives from.
    c.Rect(kLeft, sy(expected / pass_ratio), kW - kLeft - kRight, sy(expected) - sy(expected / pass_ratio), "#e6f2e7",
           fmt::format("expected envelope: {:.0f} to {:.0f} {}", expected, expected / pass_ratio, unit));
  }
  svg::Axes(c, sx, sy, "message size (bytes)", y_label, true);
  if (expected > 0) {
    c.Line(kLeft, sy(expected), kW - kRight, sy(expected), svg::kPass, 1.5, "stroke-dasharray=\"6 4\"");
    c.Text(kW - kRight - 4, sy(expected) - 5, fmt::format("pass line {:.0f} {}", expected, unit),
           "text-anchor=\"end\" class=\"note\"");
  }
  auto to_px = [&](const Series& s) {
    std::vector<std::pair<double, double>> px;
    for (const auto& [x, y] : s.points) px.push_back({sx(x), sy(y)});
    return px;
  };
  std::vector<const Series*> healthy, failed;
  for (const auto& s : series) (s.failed ? failed : healthy).push_back(&s);
  if (series.size() > kCurvesDrawn) {
    // Min-max band and median of the healthy curves per size.
    std::map<double, std::vector<double>> by_size;
    for (const auto* s : healthy) {
      for (const auto& [x, y] : s->points) by_size[x].push_back(y);
    }
    std::vector<std::pair<double, double>> lo, hi, mid;
    for (auto& [x, ys] : by_size) {
      std::sort(ys.begin(), ys.end());
      lo.push_back({sx(x), sy(ys.front())});
      hi.push_back({sx(x), sy(ys.back())});
      mid.push_back({sx(x), sy(ys[ys.size() / 2])});
    }
    std::vector<std::pair<double, double>> band = hi;
    band.insert(band.end(), lo.rbegin(), lo.rend());
    c.Polygon(band, "#9ab7dd", "fill-opacity=\"0.5\"");
    c.Polyline(mid, "#1f4e8c", 2);
    c.Text(kLeft + 8, kTop + 14, fmt::format("{} healthy curves: min-max band and median", healthy.size()), "class=\"note\"");
  } else {
    for (const auto* s : healthy) c.Polyline(to_px(*s), "#3f6fb5", 1.2, "stroke-opacity=\"0.7\"");
  }
  size_t drawn = 0;
  for (const auto* s : failed) {
    if (++drawn > kCurvesDrawn) break;
    c.Polyline(to_px(*s), svg::kFail, 2);
    if (!s->points.empty()) {
      auto [x, y] = s->points.back();
      c.Circle(sx(x), sy(y), 3, svg::kFail, s->label);
      // Labels stack upwards from the curve's end so that curves ending together stay readable.
      if (drawn <= 6) {
        c.Text(sx(x) - 6, std::max(sy(y) - 6 - 13.0 * static_cast<double>(drawn - 1), kTop + 10.0), s->label,
               "text-anchor=\"end\" class=\"note fail\"");
      }
    }
  }
  return c.Finish();
}

}  // namespace

std::string BandwidthVsSize(const BundleEvidence& e) {
  const model::RungResult* l3 = e.Rung("L3");
  if (!l3) return "";
  std::vector<Series> series;
  double expected = 0;
  for (const auto& p : l3->pairs) {
    Series s;
    s.label = fmt::format("{} -> {} rail {}", p.a, p.b, p.rail);
    s.failed = p.verdict == model::RungVerdict::kFail;
    for (const auto& pt : p.sweep) s.points.push_back({static_cast<double>(pt.bytes), pt.bw_gbps});
    if (s.points.empty() && p.bw_gbps) {
      uint64_t bytes = l3->parameters.is_object() ? model::json_fields::NumberOr(l3->parameters, "size", uint64_t{1} << 20) : uint64_t{1} << 20;
      s.points.push_back({static_cast<double>(bytes), *p.bw_gbps});
    }
    if (p.expected_gbps) expected = std::max(expected, *p.expected_gbps);
    if (!s.points.empty()) series.push_back(std::move(s));
  }
  if (series.empty()) return "";
  return SizeCurves(series, expected, PassRatio(*l3), "bandwidth (Gb/s)", "L3 bandwidth against message size", "Gb/s");
}

std::string BusBwVsSize(const BundleEvidence& e) {
  const model::RungResult* l4 = e.Rung("L4");
  if (!l4 || l4->collectives.empty()) return "";
  std::vector<Series> series;
  double expected = 0;
  for (const auto& col : l4->collectives) {
    Series s;
    s.label = col.op;
    s.failed = col.verdict == model::RungVerdict::kFail;
    for (const auto& pt : col.sweep) s.points.push_back({static_cast<double>(pt.bytes), pt.bw_gbps});
    if (s.points.empty() && col.max_bytes > 0) s.points.push_back({static_cast<double>(col.max_bytes), col.busbw_gbps});
    if (col.expected_gbps) expected = std::max(expected, *col.expected_gbps);
    if (!s.points.empty()) series.push_back(std::move(s));
  }
  if (series.empty()) return "";
  std::string plot = SizeCurves(series, expected, 1.0, "busbw (GB/s)", "L4 bus bandwidth against message size", "GB/s");
  return plot;
}

std::string LatencyPercentiles(const BundleEvidence& e) {
  const model::RungResult* l3 = e.Rung("L3");
  if (!l3) return "";
  struct Lat {
    double p50, p99;
    std::string label;
    bool failed;
  };
  std::vector<Lat> lats;
  for (const auto& p : l3->pairs) {
    if (!p.lat_p50_us || !p.lat_p99_us) continue;
    lats.push_back({*p.lat_p50_us, *p.lat_p99_us, fmt::format("{} -> {} rail {}", p.a, p.b, p.rail),
                    p.verdict == model::RungVerdict::kFail});
  }
  if (lats.empty()) return "";
  std::sort(lats.begin(), lats.end(), [](const Lat& a, const Lat& b) { return a.p99 < b.p99; });
  double ymax = 0;
  for (const auto& l : lats) ymax = std::max(ymax, l.p99);
  svg::Canvas c(kW, kH, "L3 latency p50 and p99 per pair, sorted by p99");
  svg::Scale sx{0, static_cast<double>(std::max<size_t>(lats.size() - 1, 1)), kLeft, kW - kRight, false};
  svg::Scale sy{0, ymax * 1.1, kH - kBottom, kTop, false};
  svg::Axes(c, sx, sy, "pairs, sorted by p99", "latency (us)", false);
  std::vector<std::pair<double, double>> p50, p99;
  for (size_t i = 0; i < lats.size(); ++i) {
    p50.push_back({sx(static_cast<double>(i)), sy(lats[i].p50)});
    p99.push_back({sx(static_cast<double>(i)), sy(lats[i].p99)});
  }
  c.Polyline(p50, "#3f6fb5", 2);
  c.Polyline(p99, svg::kWarn, 2);
  // Mark the worst tails by name.
  for (size_t k = 0; k < std::min<size_t>(3, lats.size()); ++k) {
    size_t i = lats.size() - 1 - k;
    c.Circle(sx(static_cast<double>(i)), sy(lats[i].p99), 3, lats[i].failed ? svg::kFail : svg::kWarn,
             fmt::format("{}: p50 {:.2f} us, p99 {:.2f} us", lats[i].label, lats[i].p50, lats[i].p99));
  }
  c.Rect(kLeft + 10, kTop + 4, 12, 4, "#3f6fb5");
  c.Text(kLeft + 28, kTop + 9, "p50", "class=\"note\"");
  c.Rect(kLeft + 64, kTop + 4, 12, 4, svg::kWarn);
  c.Text(kLeft + 82, kTop + 9, fmt::format("p99 (worst: {} at {:.2f} us)", lats.back().label, lats.back().p99),
         "class=\"note\"");
  return c.Finish();
}

std::vector<std::string> PairHeatmaps(const BundleEvidence& e) {
  std::vector<std::string> out;
  const model::RungResult* l3 = e.Rung("L3");
  if (!l3 || l3->pairs.empty()) return out;
  std::map<int, std::vector<const model::PairTest*>> by_rail;
  for (const auto& p : l3->pairs) {
    if (p.bw_gbps || p.verdict == model::RungVerdict::kFail) by_rail[p.rail].push_back(&p);
  }
  // Row/column order: by leaf, then by member order in the manifest.
  std::vector<std::string> order;
  std::map<std::string, std::string> leaf_of;
  for (const auto& m : e.manifest.members) leaf_of[m.id] = m.leaf.empty() ? "?" : m.leaf;
  for (const auto& m : e.manifest.members) order.push_back(m.id);
  std::stable_sort(order.begin(), order.end(), [&](const std::string& a, const std::string& b) { return leaf_of[a] < leaf_of[b]; });
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < order.size(); ++i) index[order[i]] = i;
  for (const auto& [rail, pairs] : by_rail) {
    const bool aggregate = order.size() > kHeatmapMembers || pairs.size() > kHeatmapCells;
    std::vector<std::string> axis;  // members, or leaves when aggregated
    std::map<std::string, size_t> pos;
    if (aggregate) {
      std::set<std::string> leaves;
      for (const auto& id : order) leaves.insert(leaf_of[id]);
      axis.assign(leaves.begin(), leaves.end());
    } else {
      axis = order;
    }
    for (size_t i = 0; i < axis.size(); ++i) pos[axis[i]] = i;
    auto where = [&](const std::string& id) { return aggregate ? pos[leaf_of[id]] : index[id]; };
    const size_t n = axis.size();
    // Per cell: worst ratio and count (aggregated cells show the worst pair).
    struct Cell {
      double worst = 2, sum = 0;
      size_t count = 0;
      std::string worst_label;
    };
    std::map<std::pair<size_t, size_t>, Cell> cells;
    for (const auto* p : pairs) {
      double ratio = p->bw_gbps && p->expected_gbps && *p->expected_gbps > 0 ? *p->bw_gbps / *p->expected_gbps
                                                                              : (p->verdict == model::RungVerdict::kFail ? 0 : std::nan(""));
      if (!p->rdma && p->verdict == model::RungVerdict::kFail) ratio = 0;
      Cell& cell = cells[{where(p->a), where(p->b)}];
      if (!std::isnan(ratio)) {
        cell.sum += ratio;
        if (ratio < cell.worst) {
          cell.worst = ratio;
          cell.worst_label = fmt::format("{} -> {}: {}{}", p->a, p->b,
                                         p->bw_gbps ? fmt::format("{:.0f} Gb/s", *p->bw_gbps) : "no figure",
                                         p->reason.empty() ? "" : " (" + p->reason + ")");
        }
      }
      ++cell.count;
    }
    const double label_w = n <= 48 ? 110 : 60;
    const double side = std::clamp(560.0 / static_cast<double>(std::max<size_t>(n, 1)), 3.0, 28.0);
    const int width = static_cast<int>(label_w + side * n + 170);
    const int height = static_cast<int>(label_w + side * n + 10);
    svg::Canvas c(width, height,
                  fmt::format("rail {}: bandwidth / expected, rows send to columns{}", rail, aggregate ? ", per leaf" : ""));
    c.Text(4, 16, fmt::format("rail {}{}", rail, aggregate ? " (per leaf: worst pair)" : ""), "class=\"axis\"");
    c.Rect(label_w, label_w, side * n, side * n, "#f4f5f7");
    const bool labels = n <= 48;
    for (size_t i = 0; i < n && labels; ++i) {
      std::string name = axis[i].size() > 14 ? axis[i].substr(0, 13) + "…" : axis[i];
      c.Text(label_w - 4, label_w + side * i + side * 0.7, name, "text-anchor=\"end\" class=\"tick\"");
      double x = label_w + side * i + side * 0.7;
      c.Text(x, label_w - 4, name, fmt::format("class=\"tick\" transform=\"rotate(-60 {:.1f} {:.1f})\"", x, label_w - 4));
    }
    for (const auto& [rc, cell] : cells) {
      double shown = cell.worst > 1.5 ? std::nan("") : cell.worst;
      std::string tip = aggregate ? fmt::format("leaf {} -> leaf {}: {} pairs, worst {}, mean ratio {:.2f}",
                                                axis[rc.first], axis[rc.second], cell.count, cell.worst_label,
                                                cell.count ? cell.sum / cell.count : 0)
                                  : cell.worst_label;
      c.Rect(label_w + side * rc.second, label_w + side * rc.first, std::max(side - 0.5, 1.0), std::max(side - 0.5, 1.0),
             svg::RatioColour(shown), tip);
    }
    // Legend.
    double lx = label_w + side * n + 20;
    for (int k = 0; k <= 6; ++k) {
      double ratio = 1.0 - k * 0.12;
      c.Rect(lx, label_w + k * 18, 16, 16, svg::RatioColour(ratio));
      c.Text(lx + 22, label_w + k * 18 + 12, fmt::format("{:.0f}% of expected", ratio * 100), "class=\"tick\"");
    }
    c.Rect(lx, label_w + 7 * 18, 16, 16, "#f4f5f7");
    c.Text(lx + 22, label_w + 7 * 18 + 12, "not measured", "class=\"tick\"");
    out.push_back(c.Finish());
  }
  return out;
}

}  // namespace fabcheck::report::plots
