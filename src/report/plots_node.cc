// Per node type and per member: the GPU x NIC distance matrix and the
// counter deltas of the run.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "base/strings.h"
#include "report/plots.h"
#include "report/svg.h"

namespace fabcheck::report::plots {
namespace {

const char* PathColour(model::PathType t) {
  switch (t) {
    case model::PathType::kPix: return "#2e7d32";
    case model::PathType::kPxb: return "#7cb342";
    case model::PathType::kPhb: return "#f9a825";
    case model::PathType::kNode: return "#ef6c00";
    case model::PathType::kSys: return "#c62828";
    case model::PathType::kUnknown: return "#c9ced6";
  }
  return "#c9ced6";
}

// Counters whose growth means lost or retried packets (red), flow control (amber), or traffic (grey).
const char* CounterColour(const std::string& name) {
  for (const char* bad : {"err", "discard", "retry", "timeout", "out_of_sequence", "nak", "drop", "replay", "symbol"}) {
    if (name.find(bad) != std::string::npos) return svg::kFail;
  }
  if (name.find("pause") != std::string::npos || name.find("cnp") != std::string::npos ||
      name.find("ecn") != std::string::npos) {
    return svg::kWarn;
  }
  return svg::kUnknown;
}

}  // namespace

std::vector<std::string> DistanceMatrices(const BundleEvidence& e, const std::vector<std::string>& node_types) {
  std::vector<std::string> out;
  for (const auto& type : node_types) {
    const model::Inventory* inv = nullptr;
    std::string member;
    size_t of_type = 0;
    for (const auto& m : e.manifest.members) {
      if (m.node_type != type) continue;
      ++of_type;
      if (!inv && e.InventoryOf(m.id)) inv = e.InventoryOf(m.id), member = m.id;
    }
    if (!inv) continue;
    const auto& t = inv->topology;
    if (t.gpus.empty() || t.nics.empty()) continue;
    const double cell = 40, left = 70, top = 70;
    const int width = static_cast<int>(left + cell * t.nics.size() + 200);
    const int height = static_cast<int>(top + cell * t.gpus.size() + 12);
    svg::Canvas c(width, height,
                  fmt::format("GPU x NIC distance, node type {} ({} members; drawn from {})", type.empty() ? "?" : type,
                              of_type, member));
    for (size_t n = 0; n < t.nics.size(); ++n) {
      double x = left + cell * n + cell * 0.6;
      c.Text(x, top - 6, t.nics[n], fmt::format("class=\"tick\" transform=\"rotate(-50 {:.1f} {:.1f})\"", x, top - 6));
    }
    for (size_t g = 0; g < t.gpus.size(); ++g) {
      c.Text(left - 6, top + cell * g + cell * 0.62, t.gpus[g], "text-anchor=\"end\" class=\"tick\"");
      for (size_t n = 0; n < t.nics.size() && g < t.distance.size() && n < t.distance[g].size(); ++n) {
        model::PathType d = t.distance[g][n];
        bool rail = std::any_of(t.rails.begin(), t.rails.end(), [&](const model::RailPair& r) {
          return "GPU" + std::to_string(r.gpu) == t.gpus[g] && r.nic == t.nics[n];
        });
        c.Rect(left + cell * n + 1, top + cell * g + 1, cell - 2, cell - 2, PathColour(d),
               fmt::format("{} - {}: {}{}", t.gpus[g], t.nics[n], model::PathTypeName(d), rail ? " (rail)" : ""),
               rail ? "stroke=\"#111\" stroke-width=\"2.5\"" : "");
        c.Text(left + cell * n + cell / 2, top + cell * g + cell * 0.62, model::PathTypeName(d),
               "text-anchor=\"middle\" class=\"cell\" fill=\"#fff\"");
      }
    }
    double lx = left + cell * t.nics.size() + 20;
    int k = 0;
    for (auto [p, text] : std::initializer_list<std::pair<model::PathType, const char*>>{
             {model::PathType::kPix, "PIX one PCIe switch"},
             {model::PathType::kPxb, "PXB several switches"},
             {model::PathType::kPhb, "PHB via host bridge"},
             {model::PathType::kNode, "NODE across bridges"},
             {model::PathType::kSys, "SYS across sockets"}}) {
      c.Rect(lx, top + k * 20, 14, 14, PathColour(p));
      c.Text(lx + 20, top + k * 20 + 11, text, "class=\"tick\"");
      ++k;
    }
    c.Rect(lx, top + k * 20, 14, 14, "#fff", "", "stroke=\"#111\" stroke-width=\"2.5\"");
    c.Text(lx + 20, top + k * 20 + 11, "rail (GPU's NIC)", "class=\"tick\"");
    out.push_back(c.Finish());
  }
  return out;
}

std::string CounterDeltas(const BundleEvidence& e) {
  struct Bar {
    std::string member, object, counter;
    int64_t delta = 0;
  };
  std::map<std::string, Bar> sums;
  for (const auto& r : e.manifest.rungs) {
    for (const auto& d : r.counter_deltas) {
      if (d.delta <= 0) continue;
      Bar& b = sums[d.member + "|" + d.object + "|" + d.counter];
      b.member = d.member, b.object = d.object, b.counter = d.counter;
      b.delta += d.delta;
    }
  }
  if (sums.empty()) return "";
  std::vector<Bar> bars;
  for (auto& [k, b] : sums) bars.push_back(b);
  // Error counters first, then by size.
  std::stable_sort(bars.begin(), bars.end(), [](const Bar& a, const Bar& b) {
    bool ea = CounterColour(a.counter) == svg::kFail, eb = CounterColour(b.counter) == svg::kFail;
    if (ea != eb) return ea;
    return a.delta > b.delta;
  });
  const size_t kShown = 40;
  size_t more = bars.size() > kShown ? bars.size() - kShown : 0;
  bars.resize(std::min(bars.size(), kShown));
  const double row = 18, label_w = 330, plot_w = 330;
  const int height = static_cast<int>(row * bars.size() + 40 + (more ? row : 0));
  svg::Canvas c(static_cast<int>(label_w + plot_w + 90), height, "counter deltas during the run, per member and port");
  double max_log = 0;
  for (const auto& b : bars) max_log = std::max(max_log, std::log10(static_cast<double>(b.delta) + 1));
  double y = 24;
  c.Text(label_w + 4, 14, "increase during the run (log scale)", "class=\"tick\"");
  for (const auto& b : bars) {
    c.Text(label_w - 6, y + 12, fmt::format("{} {} {}", b.member, b.object, b.counter), "text-anchor=\"end\" class=\"tick\"");
    double w = max_log > 0 ? std::log10(static_cast<double>(b.delta) + 1) / max_log * plot_w : plot_w;
    c.Rect(label_w, y + 2, std::max(w, 2.0), row - 5, CounterColour(b.counter),
           fmt::format("{} {} {}: +{}", b.member, b.object, b.counter, b.delta));
    c.Text(label_w + std::max(w, 2.0) + 6, y + 12, fmt::format("+{}", b.delta), "class=\"tick\"");
    y += row;
  }
  if (more) c.Text(label_w - 6, y + 12, fmt::format("+{} more counters (see the JSON)", more), "text-anchor=\"end\" class=\"tick\"");
  return c.Finish();
}

}  // namespace fabcheck::report::plots
