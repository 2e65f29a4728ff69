// The example cluster's baseline groups, as `fabcheck ladder` forms them
// (ladder/baselines.h) after L3 and L4 on the members that passed each
// rung, with figures of a healthy DGX fabric: 8 x 400 Gb/s RoCE per node,
// GPUDirect RDMA on by default and about 60% of it with NCCL_NET_GDR_LEVEL=LOC.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "base/strings.h"
#include "example_cluster.h"
#include "ladder/baselines.h"

namespace fabcheck::report::example {
namespace {

using model::BaselineGroup;
using model::RungVerdict;

std::vector<ladder::BaselineCandidate> Candidates(const BundleEvidence& e, const model::RungResult& rung, int rails) {
  std::vector<ladder::BaselineCandidate> out;
  for (const auto& id : rung.members_passed) {
    const auto* m = e.Member(id);
    ladder::BaselineCandidate c{id, m ? m->rack : "", rails, {}};
    for (int r = 0; r < rails; ++r) c.hcas.push_back(fmt::format("mlx5_{}", r));
    out.push_back(std::move(c));
  }
  return out;
}

void ResolveSameAs(std::vector<BaselineGroup>& groups) {
  for (auto& g : groups) {
    if (g.same_as.empty()) continue;
    for (const auto& e : groups) {
      if (e.scope == g.same_as) {
        g.verdict = e.verdict;
        g.reason = fmt::format("the {} group's measurement (the same test)", e.scope);
      }
    }
  }
}

model::PairTest Direction(const std::string& a, const std::string& b, int rail_a, int rail_b, double gbps) {
  model::PairTest p;
  p.a = a, p.b = b, p.rail = rail_a;
  p.transport = "verbs";
  p.rdma = true;
  p.device_a = fmt::format("mlx5_{}", rail_a);
  p.device_b = fmt::format("mlx5_{}", rail_b);
  p.bw_gbps = gbps;
  p.expected_gbps = 360;
  p.expected_basis = "400 Gb/s port x 90% (PCIe Gen5 x16 = 504 Gb/s)";
  p.lat_p50_us = a == b ? 2.41 : 2.93;
  p.lat_p99_us = a == b ? 3.05 : 4.18;
  p.verdict = RungVerdict::kPass;
  return p;
}

void PerfGroup(BaselineGroup& g) {
  const std::string& a = g.members.front();
  const std::string& b = g.members.back();
  if (a == b) {
    g.pairs.push_back(Direction(a, a, g.rails[0], g.rails[1], 391.4));
  } else {
    for (auto [x, y] : {std::pair{a, b}, std::pair{b, a}}) {
      for (int r : g.rails) g.pairs.push_back(Direction(x, y, r, r, 392.0 - 0.3 * r));
    }
  }
  double sum_ab = 0, sum_ba = 0;
  for (const auto& p : g.pairs) (p.a == a ? sum_ab : sum_ba) += *p.bw_gbps;
  g.verdict = RungVerdict::kPass;
  g.reason = a == b ? fmt::format("{} -> {} {:.1f} Gb/s; latency p50 2.41 us, p99 3.05 us", a, a, sum_ab)
                    : fmt::format("{} -> {} {:.1f} Gb/s, {} -> {} {:.1f} Gb/s{}; latency p50 2.93 us, p99 4.18 us", a,
                                  b, sum_ab, b, a, sum_ba,
                                  g.rails.size() > 1 ? fmt::format(" ({} rails at once)", g.rails.size()) : "");
  g.elapsed_s = 2.7 * static_cast<double>(a == b ? 1 : 2);
}

void CollGroup(BaselineGroup& g, int rails) {
  const bool one_node = g.members.size() == 1;
  const bool one_rail = g.scope == ladder::kScopeOneRail && !g.settings.empty();
  const bool gdr_off = g.scope == ladder::kScopeGdrOff;
  std::vector<std::string> figures;
  for (const char* op : {"all_reduce", "all_gather", "alltoall"}) {
    const bool a2a = std::string(op) == "alltoall";
    model::CollectiveCheck c;
    c.op = op;
    c.max_bytes = 1073741824;
    // Inside a node NVLink bounds it (NCCL's estimate is the line), between nodes the NICs.
    double line = one_node ? (a2a ? 296.0 : 384.0) : (a2a ? 272.0 : 320.0);
    double busbw = one_node ? (a2a ? 341.7 : 462.5) : (a2a ? 292.0 : 352.0);
    if (one_rail) {
      line /= rails;
      busbw = std::round(busbw / rails * 0.99 * 10) / 10;
    }
    if (gdr_off) busbw = std::round(busbw * 0.61 * 10) / 10;
    c.busbw_gbps = busbw;
    c.sweep = {{268435456, std::round(busbw * 0.93 * 10) / 10}, {1073741824, busbw}};
    if (!gdr_off) {
      c.expected_gbps = line;
      c.expected_basis = one_node ? "NCCL's NVLink ring estimate x 80%"
                                  : one_rail ? fmt::format("8 x 400 Gb/s NICs per node x 80%, one rail of {}", rails)
                                             : "8 x 400 Gb/s NICs per node x 80%";
    }
    c.verdict = RungVerdict::kPass;
    c.reason = c.expected_gbps ? fmt::format("busbw {:.1f} GB/s, {:.0f}% of the expected {:.1f} GB/s", busbw,
                                             busbw / line * 100, line)
                               : fmt::format("busbw {:.1f} GB/s; no expectation (port rates unknown)", busbw);
    figures.push_back(fmt::format("{} {:.1f} GB/s", op, busbw));
    g.collectives.push_back(std::move(c));
  }
  for (const auto& id : g.members) {
    model::NcclTransportCheck n;
    n.member = id;
    n.verdict = RungVerdict::kPass;
    if (one_node) {
      n.transports = {"P2P"};
      n.reason = "P2P";
    } else {
      n.gpudirect = !gdr_off;
      n.transports = {gdr_off ? "NET/IB" : "NET/IB/GDRDMA", "P2P"};
      for (int r = 0; r < (one_rail ? 1 : rails); ++r) n.hcas.push_back(fmt::format("mlx5_{}:1", r));
      n.reason = gdr_off ? "NET/IB through host memory, as this group asks (GPUDirect RDMA off)" : Join(n.transports, ", ");
    }
    g.nccl.push_back(std::move(n));
  }
  g.verdict = RungVerdict::kPass;
  g.reason = fmt::format("{} rank(s) on {}: {}", 8 * g.members.size(), Join(g.members, ", "), Join(figures, ", "));
  g.elapsed_s = one_node ? 14.2 : 21.8;
}

}  // namespace

void AddBaselineGroups(const BundleEvidence& e, model::RungResult& l3, model::RungResult& l4, int rails) {
  l3.baselines = ladder::FormBaselineGroups(ladder::BaselineRung::kPerf, Candidates(e, l3, rails), l3.id);
  for (auto& g : l3.baselines) {
    if (ladder::ToMeasure(g)) PerfGroup(g);
  }
  ResolveSameAs(l3.baselines);
  l4.baselines = ladder::FormBaselineGroups(ladder::BaselineRung::kColl, Candidates(e, l4, rails), l4.id);
  for (auto& g : l4.baselines) {
    if (ladder::ToMeasure(g)) CollGroup(g, rails);
  }
  ResolveSameAs(l4.baselines);
}

}  // namespace fabcheck::report::example
