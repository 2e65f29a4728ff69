#include "sweep/analysis.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "base/stats.h"

namespace fabcheck::sweep {
namespace {

using model::CulpritKind;
using model::PairMatrix;
using model::Severity;
using model::SweepCulprit;

constexpr size_t kMaxSamples = size_t{1} << 18;
// A node's quantile over its peers is taken from at most this many of them
// (evenly strided): an upper quartile of 512 values is as good as of 4,095,
// and it keeps 4,096 nodes x 3 metrics in the time budget.
constexpr int kMaxPeersPerScore = 512;

// Nearest-rank quantile of v[0..count), in place (nth_element, no full sort).
float QuantileInPlace(float* v, size_t count, double q) {
  size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(count)));
  rank = std::clamp<size_t>(rank, 1, count) - 1;
  std::nth_element(v, v + rank, v + count);
  return v[rank];
}

struct NodeScores {
  std::vector<double> send;     // NaN when the node has too few measured peers
  std::vector<double> receive;
};

// Row and column quantiles of `m`; a node needs two measured peers to be
// judged. With `symmetric` (latency) a node's row and column are one sample.
// A dense matrix wider than kMaxPeersPerScore is sampled: every stride-th
// column of a row and every stride-th row of a column, read in row order.
NodeScores ScoreNodes(const PairMatrix& m, size_t measured, double q, bool symmetric) {
  const int n = m.size();
  NodeScores s{std::vector<double>(static_cast<size_t>(n), NAN), std::vector<double>(static_cast<size_t>(n), NAN)};
  const size_t cells = static_cast<size_t>(n) * static_cast<size_t>(n > 0 ? n - 1 : 0);
  const bool dense = measured * 2 >= cells;
  const int stride = dense ? std::max(1, (n + kMaxPeersPerScore - 1) / kMaxPeersPerScore) : 1;
  std::vector<std::vector<float>> cols(static_cast<size_t>(n));
  std::vector<std::vector<float>> rows(static_cast<size_t>(n));
  if (dense) {
    const size_t per = static_cast<size_t>(n / stride + 2);
    for (auto& v : cols) v.reserve(per * (symmetric ? 2 : 1));
    for (auto& v : rows) v.reserve(per * (symmetric ? 2 : 1));
  }
  for (int i = 0; i < n; ++i) {
    const float* r = m.row(i);
    auto& row = rows[static_cast<size_t>(i)];
    for (int j = i % stride; j < n; j += stride) {
      if (!std::isnan(r[j])) row.push_back(r[j]);
    }
    if (i % stride != 0) continue;
    for (int j = 0; j < n; ++j) {
      if (!std::isnan(r[j])) cols[static_cast<size_t>(j)].push_back(r[j]);
    }
  }
  for (int i = 0; i < n; ++i) {
    auto& row = rows[static_cast<size_t>(i)];
    auto& col = cols[static_cast<size_t>(i)];
    if (symmetric) {
      row.insert(row.end(), col.begin(), col.end());
      if (row.size() >= 2) {
        s.send[static_cast<size_t>(i)] = s.receive[static_cast<size_t>(i)] = QuantileInPlace(row.data(), row.size(), q);
      }
      continue;
    }
    if (row.size() >= 2) s.send[static_cast<size_t>(i)] = QuantileInPlace(row.data(), row.size(), q);
    if (col.size() >= 2) s.receive[static_cast<size_t>(i)] = QuantileInPlace(col.data(), col.size(), q);
  }
  return s;
}

std::vector<double> Finite(const std::vector<double>& a, const std::vector<double>& b = {}) {
  std::vector<double> out;
  for (const auto* v : {&a, &b}) {
    for (double x : *v) {
      if (std::isfinite(x)) out.push_back(x);
    }
  }
  return out;
}

std::string Name(const std::vector<model::SweepMember>& members, int i) {
  if (i >= 0 && static_cast<size_t>(i) < members.size()) {
    const model::SweepMember& m = members[static_cast<size_t>(i)];
    if (!m.display.empty()) return m.display;  // tells apart two members with one hostname
    if (!m.name.empty()) return m.name;
  }
  return fmt::format("node-{}", i);
}

std::string Percent(double ratio) { return fmt::format("{:.1f}%", ratio * 100); }
std::string Mads(double z) {
  return std::isfinite(z) ? fmt::format("{:.1f} MADs", std::fabs(z)) : std::string("far outside a zero spread");
}

// Judges one direction-less "low is bad" (or, with high_is_bad, "high is bad")
// node score against the cluster.
struct Judged {
  bool named = false;
  double ratio = 0, z = 0;
};
Judged JudgeLow(double value, const Robust& ref, double min_drop, double zt) {
  Judged j;
  if (!std::isfinite(value) || ref.median <= 0) return j;
  j.ratio = value / ref.median;
  j.z = stats::RobustZ(value, ref.median, ref.scaled_mad);
  j.named = j.ratio < 1 - min_drop && j.z < -zt;
  return j;
}
Judged JudgeHigh(double value, const Robust& ref, double min_rise, double zt) {
  Judged j;
  if (!std::isfinite(value) || ref.median <= 0) return j;
  j.ratio = value / ref.median;
  j.z = stats::RobustZ(value, ref.median, ref.scaled_mad);
  j.named = j.ratio > 1 + min_rise && j.z > zt;
  return j;
}

class RailAnalysis {
 public:
  RailAnalysis(const model::SweepMatrices& m, const std::vector<model::SweepMember>& members,
               const AnalysisOptions& o, model::SweepVerdict& out)
      : m_(m), members_(members), o_(o), out_(out), n_(m.bw_gbps.size()) {}

  void Run() {
    model::SweepStats st;
    st.rail = m_.rail;
    st.pairs_measured = m_.bw_gbps.measured();
    Bandwidth(st);
    Latency(st);
    Mtu(st);
    out_.stats.push_back(st);
  }

 private:
  void Bandwidth(model::SweepStats& st) {
    const PairMatrix& b = m_.bw_gbps;
    const size_t measured = st.pairs_measured;
    if (measured == 0) return;
    NodeScores s = ScoreNodes(b, measured, o_.node_quantile, false);
    Robust send = RobustOf(Finite(s.send)), recv = RobustOf(Finite(s.receive));
    Robust all = RobustOf(CellValues(b, measured));
    st.bw_median_gbps = all.median;
    st.bw_mad_gbps = all.scaled_mad;
    std::vector<char> slow(static_cast<size_t>(n_), 0);
    // With few nodes the MAD of their scores is itself noisy, so a node below
    // fail_ratio of the median is named even when z stays inside the threshold.
    auto gross = [&](Judged j) {
      j.named = j.named || (j.ratio > 0 && j.ratio < o_.fail_ratio);
      return j;
    };
    for (int i = 0; i < n_; ++i) {
      Judged js = gross(JudgeLow(s.send[static_cast<size_t>(i)], send, o_.bw_min_drop, o_.z_threshold));
      Judged jr = gross(JudgeLow(s.receive[static_cast<size_t>(i)], recv, o_.bw_min_drop, o_.z_threshold));
      if (!js.named && !jr.named) continue;
      slow[static_cast<size_t>(i)] = 1;
      bool both = js.named && jr.named;
      bool use_send = js.named && (!jr.named || js.ratio <= jr.ratio);
      const Judged& j = use_send ? js : jr;
      double value = use_send ? s.send[static_cast<size_t>(i)] : s.receive[static_cast<size_t>(i)];
      double median = use_send ? send.median : recv.median;
      Add({CulpritKind::kSlowNode, SeverityFor(j.ratio), m_.rail, {i}, both ? "both" : (use_send ? "send" : "receive"),
           "bw_gbps", value, median, j.ratio, j.z});
    }
    // Links: each measured direction against what its ends reach elsewhere.
    std::vector<double> residuals;
    ForEachSampledCell(b, measured, [&](int i, int j, double v) {
      double e = std::min(s.send[static_cast<size_t>(i)], s.receive[static_cast<size_t>(j)]);
      if (std::isfinite(e) && e > 0) residuals.push_back(v / e);
    });
    Robust r = RobustOf(residuals);
    // Named when ratio < 1 - drop and z < -zt, i.e. ratio < limit: one
    // multiply and compare per cell, details only for the few named.
    const double limit = std::min(1 - o_.bw_min_drop, r.median - o_.z_threshold * r.scaled_mad);
    std::map<std::pair<int, int>, std::vector<std::tuple<int, int, double, double, Judged>>> flagged;
    ScanCells(b, s.send, s.receive, false, limit, [&](int i, int j, double v, double e) {
      // A slow end explains a merely low direction, not one far below even
      // what that end reaches elsewhere (e already holds the ends' own scores):
      // a node 27% down does not explain a link at 2%.
      if ((slow[static_cast<size_t>(i)] || slow[static_cast<size_t>(j)]) && v / e >= o_.fail_ratio) return;
      Judged jd = JudgeLow(v / e, r, o_.bw_min_drop, o_.z_threshold);
      if (jd.named) flagged[{std::min(i, j), std::max(i, j)}].push_back({i, j, v, e, jd});
    });
    for (const auto& [key, dirs] : flagged) AddLink(CulpritKind::kSlowLink, "bw_gbps", key, dirs);
  }

  void Latency(model::SweepStats& st) {
    const PairMatrix& l = m_.lat_median_us;
    const size_t measured = l.measured();
    if (measured == 0) return;
    // High latency is bad: the node's score is its lower quartile.
    NodeScores s = ScoreNodes(l, measured, 1 - o_.node_quantile, true);
    Robust nodes = RobustOf(Finite(s.send));
    Robust all = RobustOf(CellValues(l, measured));
    st.lat_median_us = all.median;
    st.lat_mad_us = all.scaled_mad;
    std::vector<char> high(static_cast<size_t>(n_), 0);
    for (int i = 0; i < n_; ++i) {
      Judged j = JudgeHigh(s.send[static_cast<size_t>(i)], nodes, o_.lat_min_rise, o_.z_threshold);
      if (!j.named) continue;
      high[static_cast<size_t>(i)] = 1;
      Add({CulpritKind::kHighLatencyNode, Severity::kWarn, m_.rail, {i}, "both", "lat_median_us",
           s.send[static_cast<size_t>(i)], nodes.median, j.ratio, j.z});
    }
    std::vector<double> residuals;
    ForEachSampledCell(l, measured, [&](int i, int j, double v) {
      double e = std::max(s.send[static_cast<size_t>(i)], s.send[static_cast<size_t>(j)]);
      if (std::isfinite(e) && e > 0) residuals.push_back(v / e);
    });
    Robust r = RobustOf(residuals);
    const double limit = std::max(1 + o_.lat_min_rise, r.median + o_.z_threshold * r.scaled_mad);
    std::map<std::pair<int, int>, std::vector<std::tuple<int, int, double, double, Judged>>> flagged;
    ScanCells(l, s.send, s.send, true, limit, [&](int i, int j, double v, double e) {
      if (high[static_cast<size_t>(i)] || high[static_cast<size_t>(j)]) return;
      Judged jd = JudgeHigh(v / e, r, o_.lat_min_rise, o_.z_threshold);
      if (jd.named) flagged[{std::min(i, j), std::max(i, j)}].push_back({i, j, v, e, jd});
    });
    for (const auto& [key, dirs] : flagged) AddLink(CulpritKind::kHighLatencyLink, "lat_median_us", key, dirs);
  }

  void Mtu(model::SweepStats& st) {
    const PairMatrix& p = m_.path_mtu;
    const size_t measured = p.measured();
    if (measured == 0) return;
    NodeScores s = ScoreNodes(p, measured, o_.node_quantile, false);
    std::vector<double> node_mtu(static_cast<size_t>(n_), NAN);
    for (int i = 0; i < n_; ++i) {
      node_mtu[static_cast<size_t>(i)] = std::min(s.send[static_cast<size_t>(i)], s.receive[static_cast<size_t>(i)]);
      if (std::isnan(s.send[static_cast<size_t>(i)])) node_mtu[static_cast<size_t>(i)] = s.receive[static_cast<size_t>(i)];
      if (std::isnan(s.receive[static_cast<size_t>(i)])) node_mtu[static_cast<size_t>(i)] = s.send[static_cast<size_t>(i)];
    }
    // MTU is discrete: the cluster's figure is the median node, and anything
    // below it is a hole (no tolerance, no z: 1500 among 9000 is not noise).
    double median = RobustOf(Finite(node_mtu)).median;
    st.path_mtu_median = median;
    std::vector<char> hole(static_cast<size_t>(n_), 0);
    for (int i = 0; i < n_; ++i) {
      double v = node_mtu[static_cast<size_t>(i)];
      if (!std::isfinite(v) || v >= median) continue;
      hole[static_cast<size_t>(i)] = 1;
      bool send_low = s.send[static_cast<size_t>(i)] < median, recv_low = s.receive[static_cast<size_t>(i)] < median;
      Add({CulpritKind::kMtuHoleNode, Severity::kFail, m_.rail, {i},
           send_low && recv_low ? "both" : (send_low ? "send" : "receive"), "path_mtu", v, median, v / median,
           -std::numeric_limits<double>::infinity()});
    }
    std::map<std::pair<int, int>, std::vector<std::tuple<int, int, double, double, Judged>>> flagged;
    ScanCells(p, s.send, s.receive, false, 1.0, [&](int i, int j, double v, double e) {
      if (hole[static_cast<size_t>(i)] || hole[static_cast<size_t>(j)]) return;
      flagged[{std::min(i, j), std::max(i, j)}].push_back(
          {i, j, v, e, Judged{true, v / e, -std::numeric_limits<double>::infinity()}});
    });
    for (const auto& [key, dirs] : flagged) AddLink(CulpritKind::kMtuHoleLink, "path_mtu", key, dirs);
  }

  // Calls fn(i, j, v, e) for the cells where v < limit * e (or, with
  // high_is_bad, v > limit * e), e being expected(i -> j): min(row_i, col_j),
  // or max for high_is_bad. NaN cells and unknown expectations never match
  // (every comparison with NaN is false).
  template <typename Fn>
  void ScanCells(const PairMatrix& m, const std::vector<double>& row_score, const std::vector<double>& col_score,
                 bool high_is_bad, double limit, Fn fn) const {
    std::vector<float> col(col_score.begin(), col_score.end());
    const float lim = static_cast<float>(limit);
    for (int i = 0; i < n_; ++i) {
      const float* r = m.row(i);
      const float ri = static_cast<float>(row_score[static_cast<size_t>(i)]);
      if (std::isnan(ri)) continue;
      for (int j = 0; j < n_; ++j) {
        const float e = high_is_bad ? std::max(ri, col[static_cast<size_t>(j)]) : std::min(ri, col[static_cast<size_t>(j)]);
        const bool hit = high_is_bad ? r[j] > lim * e : r[j] < lim * e;
        if (hit && e > 0 && !std::isnan(col[static_cast<size_t>(j)])) fn(i, j, static_cast<double>(r[j]), static_cast<double>(e));
      }
    }
  }

  template <typename Fn>
  void ForEachCell(const PairMatrix& m, Fn fn) const {
    for (int i = 0; i < n_; ++i) {
      const float* r = m.row(i);
      for (int j = 0; j < n_; ++j) {
        if (!std::isnan(r[j])) fn(i, j, static_cast<double>(r[j]));
      }
    }
  }

  // Every stride-th measured cell, so at most ~kMaxSamples: the robust
  // statistics of 16M cells from 1M evenly spread ones.
  template <typename Fn>
  void ForEachSampledCell(const PairMatrix& m, size_t measured, Fn fn) const {
    const size_t stride = std::max<size_t>(1, measured / kMaxSamples);
    size_t skip = 0;  // a countdown, not a modulo per cell
    ForEachCell(m, [&](int i, int j, double v) {
      if (skip-- == 0) {
        skip = stride - 1;
        fn(i, j, v);
      }
    });
  }

  std::vector<double> CellValues(const PairMatrix& m, size_t measured) const {
    std::vector<double> v;
    v.reserve(std::min(measured, kMaxSamples + 1) + 1);
    ForEachSampledCell(m, measured, [&](int, int, double x) { v.push_back(x); });
    return v;
  }

  Severity SeverityFor(double ratio) const { return ratio < o_.fail_ratio ? Severity::kFail : Severity::kWarn; }

  void AddLink(CulpritKind kind, const char* metric, std::pair<int, int> key,
               const std::vector<std::tuple<int, int, double, double, Judged>>& dirs) {
    // Report the worse direction; "both" when both directions were named.
    const auto* worst = &dirs.front();
    for (const auto& d : dirs) {
      bool worse = kind == CulpritKind::kHighLatencyLink ? std::get<4>(d).ratio > std::get<4>(*worst).ratio
                                                         : std::get<4>(d).ratio < std::get<4>(*worst).ratio;
      if (worse) worst = &d;
    }
    auto [a, b, value, expected, j] = *worst;
    Severity sev = kind == CulpritKind::kMtuHoleLink ? Severity::kFail
                   : kind == CulpritKind::kHighLatencyLink ? Severity::kWarn
                                                           : SeverityFor(j.ratio);
    std::string direction = dirs.size() > 1 ? "both" : fmt::format("{}->{}", a, b);
    Add({kind, sev, m_.rail, {key.first, key.second}, direction, metric, value, expected, j.ratio, j.z});
  }

  void Add(SweepCulprit c) { out_.culprits.push_back(std::move(c)); }

  const model::SweepMatrices& m_;
  const std::vector<model::SweepMember>& members_;
  const AnalysisOptions& o_;
  model::SweepVerdict& out_;
  int n_;
};

model::Finding ToFinding(const SweepCulprit& c, const std::vector<model::SweepMember>& members,
                         const std::vector<model::SweepPairResult>& pairs, int rails) {
  model::Finding f;
  f.severity = c.severity;
  std::string rail = rails > 1 ? fmt::format(" rail {}", c.rail) : "";
  std::string node = c.nodes.empty() ? "" : Name(members, c.nodes[0]);
  std::string link = c.nodes.size() == 2 ? fmt::format("{} <-> {}", node, Name(members, c.nodes[1])) : "";
  switch (c.kind) {
    case CulpritKind::kSlowNode:
      f.id = "sweep.node.slow";
      f.group = "L3";
      f.object = node + rail;
      f.message = fmt::format("{} is slow with its peers ({}): {:.3g} Gb/s, {} of the cluster median {:.3g} Gb/s",
                              node,
                              c.direction == "both" ? "sending and receiving"
                              : c.direction == "send" ? "sending" : "receiving",
                              c.value, Percent(c.ratio), c.median);
      f.evidence.push_back(fmt::format("upper-quartile bandwidth with its peers {:.4g} Gb/s; cluster median {:.4g} "
                                       "Gb/s; {} below",
                                       c.value, c.median, Mads(c.robust_z)));
      f.remedy = "check this node's NIC: port rate and width, PCIe link, errors and pause counters "
                 "(fabcheck inventory / doctor on the node), any traffic shaping, and the switch port it uses";
      break;
    case CulpritKind::kSlowLink:
      f.id = "sweep.link.slow";
      f.group = "L3";
      f.object = link + rail;
      f.message = fmt::format("the path {} is slow ({}): {:.3g} Gb/s, {} of what both ends reach elsewhere "
                              "({:.3g} Gb/s); the nodes themselves are fine",
                              link, c.direction, c.value, Percent(c.ratio), c.median);
      f.evidence.push_back(fmt::format("expected min(send of a, receive of b) = {:.4g} Gb/s; {} below the cluster's "
                                       "link spread",
                                       c.median, Mads(c.robust_z)));
      f.remedy = "check the cables, switch ports and switch-to-switch links on this path (a route through a "
                 "congested or down-rated uplink), and any per-flow shaping or ECMP imbalance";
      break;
    case CulpritKind::kHighLatencyNode:
      f.id = "sweep.node.latency";
      f.group = "L3";
      f.object = node + rail;
      f.message = fmt::format("{} has high latency with its peers: {:.3g} us, {:.1f}x the cluster median {:.3g} us",
                              node, c.value, c.ratio, c.median);
      f.evidence.push_back(fmt::format("lower-quartile one-way latency {:.4g} us; {} above", c.value, Mads(c.robust_z)));
      f.remedy = "check CPU frequency scaling and interrupt affinity on the node, and congestion or pause "
                 "frames on its port";
      break;
    case CulpritKind::kHighLatencyLink:
      f.id = "sweep.link.latency";
      f.group = "L3";
      f.object = link + rail;
      f.message = fmt::format("the path {} has high latency: {:.3g} us, {:.1f}x what both ends see elsewhere", link,
                              c.value, c.ratio);
      f.evidence.push_back(fmt::format("expected {:.4g} us; {} above", c.median, Mads(c.robust_z)));
      f.remedy = "check the route between these nodes (extra hops, a congested uplink)";
      break;
    case CulpritKind::kMtuHoleNode: {
      f.id = "sweep.mtu.node-hole";
      f.group = "L2";
      f.object = node + rail;
      f.message = fmt::format("MTU hole at {}: don't-fragment packets above {:.0f} bytes to/from it vanish, while "
                              "the cluster passes {:.0f}; large messages will time out",
                              node, c.value, c.median);
      const auto& m = members;
      if (c.nodes[0] < static_cast<int>(m.size()) && static_cast<size_t>(c.rail) < m[c.nodes[0]].interface_mtu.size()) {
        f.evidence.push_back(fmt::format("{} interface MTU {}", node, m[c.nodes[0]].interface_mtu[c.rail]));
      }
      for (const auto& p : pairs) {
        if (p.rail != c.rail || p.b != c.nodes[0] || !p.path_mtu || p.local_mtu <= *p.path_mtu) continue;
        f.evidence.push_back(fmt::format("black hole: {} believes MTU {} toward {}, only {} got through",
                                         Name(members, p.a), p.local_mtu, node, *p.path_mtu));
        if (f.evidence.size() >= 4) break;
      }
      f.remedy = fmt::format("set the same MTU on every endpoint, VF/PF and switch port of the data network (the "
                             "cluster uses {:.0f}): e.g. ip link set dev <if> mtu <mtu> on {}, or the NAD/SR-IOV "
                             "policy mtu in Kubernetes",
                             c.median, node);
      break;
    }
    case CulpritKind::kMtuHoleLink:
      f.id = "sweep.mtu.link-hole";
      f.group = "L2";
      f.object = link + rail;
      f.message = fmt::format("MTU hole on the path {} ({}): only {:.0f} bytes get through, both ends reach {:.0f} "
                              "elsewhere",
                              link, c.direction, c.value, c.median);
      f.remedy = "a switch port or router on this path has a smaller MTU: align it with the fabric MTU";
      break;
    case CulpritKind::kFailedLink:
      f.id = "sweep.link.failed";
      f.group = "L3";
      f.object = link + rail;
      f.message = fmt::format("the test {} failed although both agents answer", link);
      for (const auto& p : pairs) {
        if (p.rail == c.rail && !p.error.empty() &&
            ((p.a == c.nodes[0] && p.b == c.nodes[1]) || (p.a == c.nodes[1] && p.b == c.nodes[0]))) {
          f.evidence.push_back(fmt::format("{} -> {}: {}", Name(members, p.a), Name(members, p.b), p.error));
        }
      }
      f.remedy = "check routes, firewalls and addresses between the two data interfaces (ping -M do -s 1472 <peer>)";
      break;
    case CulpritKind::kUnreachable:
      f.id = "sweep.node.unreachable";
      f.group = "L2";
      f.object = node;
      f.message = fmt::format("the agent on {} did not answer; its pairs were skipped", node);
      if (c.nodes[0] < static_cast<int>(members.size())) {
        f.evidence.push_back(fmt::format("{}: {}", members[c.nodes[0]].control, members[c.nodes[0]].error));
      }
      f.remedy = "check that 'fabcheck agent' runs on the node and that its control port is reachable "
                 "(firewall, NetworkPolicy, token)";
      break;
  }
  return f;
}

}  // namespace

Robust RobustOf(const std::vector<double>& values) {
  Robust r;
  r.count = values.size();
  if (values.empty()) return r;
  std::vector<double> sample;
  if (values.size() > kMaxSamples) {
    const size_t stride = values.size() / kMaxSamples;
    sample.reserve(values.size() / stride + 1);
    for (size_t i = 0; i < values.size(); i += stride) sample.push_back(values[i]);
  } else {
    sample = values;
  }
  r.median = *stats::Median(sample);
  r.scaled_mad = *stats::ScaledMad(sample);
  return r;
}

model::SweepVerdict Analyze(const std::vector<model::SweepMatrices>& matrices,
                            const std::vector<model::SweepMember>& members,
                            const std::vector<model::SweepPairResult>& pairs, const AnalysisOptions& options) {
  model::SweepVerdict v;
  for (const auto& m : matrices) RailAnalysis(m, members, options, v).Run();
  // Unreachable agents, and tests that failed between agents that answer.
  std::vector<char> unreachable(members.size(), 0);
  for (const auto& m : members) {
    if (m.reachable) continue;
    unreachable[static_cast<size_t>(m.index)] = 1;
    v.culprits.push_back({CulpritKind::kUnreachable, Severity::kFail, 0, {m.index}, "both", "", 0, 0, 0, 0});
  }
  std::map<std::tuple<int, int, int>, bool> failed;
  for (const auto& p : pairs) {
    if (p.error.empty()) continue;
    auto reach = [&](int i) { return i >= 0 && static_cast<size_t>(i) < members.size() && !unreachable[i]; };
    if (!reach(p.a) || !reach(p.b)) continue;
    failed[{p.rail, std::min(p.a, p.b), std::max(p.a, p.b)}] = true;
  }
  for (const auto& [key, unused] : failed) {
    auto [rail, a, b] = key;
    v.culprits.push_back({CulpritKind::kFailedLink, Severity::kFail, rail, {a, b}, "both", "", 0, 0, 0, 0});
  }
  const int rails = static_cast<int>(std::max<size_t>(1, matrices.size()));
  size_t counts[8] = {};
  for (const auto& c : v.culprits) {
    v.findings.push_back(ToFinding(c, members, pairs, rails));
    counts[static_cast<int>(c.kind)]++;
    if (static_cast<int>(c.severity) > static_cast<int>(v.severity)) v.severity = c.severity;
  }
  size_t measured = 0;
  for (const auto& s : v.stats) measured += s.pairs_measured;
  const int n = matrices.empty() ? static_cast<int>(members.size()) : matrices.front().bw_gbps.size();
  if (measured == 0 && v.culprits.empty()) v.severity = Severity::kUnknown;
  if (n < 3 && measured > 0) {
    model::Finding f{"sweep.too-few-members", Severity::kInfo, "L3", "sweep",
                     "with fewer than 3 members a slow node cannot be told from a slow link; the matrices are "
                     "reported, the localisation is not",
                     {fmt::format("{} members", n)}, "add members to the sweep", std::nullopt, "", "cluster",
                     std::nullopt, ""};
    v.findings.push_back(f);
  }
  std::vector<std::string> parts;
  const char* labels[8] = {"slow node", "slow link", "high-latency node", "high-latency link",
                           "MTU hole (node)", "MTU hole (link)", "failed link", "unreachable agent"};
  for (int k = 0; k < 8; ++k) {
    if (counts[k] == 0) continue;
    std::vector<std::string> who;
    for (const auto& c : v.culprits) {
      if (static_cast<int>(c.kind) != k) continue;
      who.push_back(c.nodes.size() == 2 ? Name(members, c.nodes[0]) + "<->" + Name(members, c.nodes[1])
                                        : Name(members, c.nodes[0]));
      if (who.size() == 5) {
        who.push_back("...");
        break;
      }
    }
    parts.push_back(fmt::format("{} {}{} ({})", counts[k], labels[k], counts[k] > 1 ? "s" : "", fmt::join(who, ", ")));
  }
  v.summary = parts.empty() ? fmt::format("{} members, {} measured directions: no outlier", n, measured)
                            : fmt::format("{} members, {} measured directions: {}", n, measured, fmt::join(parts, "; "));
  return v;
}

}  // namespace fabcheck::sweep
