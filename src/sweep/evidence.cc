#include "sweep/evidence.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace fabcheck::sweep {
namespace {

// Bins from a float's bits: its exponent and the top 10 bits of its mantissa,
// so each bin is 2^-10 (0.1%) wide and no logarithm is taken per value.
// Exponents from 2^-14 to 2^20 (6e-5 to 1e6 Gb/s); values outside go to the end bins.
constexpr int kMinExp = -14, kExps = 35, kMantBits = 10;
constexpr size_t kBins = static_cast<size_t>(kExps) << kMantBits;

size_t BinOf(double x) {
  const float f = static_cast<float>(x);
  if (!(f > 0)) return 0;
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  const int e = static_cast<int>(bits >> 23) - 127 - kMinExp;
  if (e < 0) return 0;
  if (e >= kExps) return kBins - 1;
  return (static_cast<size_t>(e) << kMantBits) | ((bits >> (23 - kMantBits)) & ((1u << kMantBits) - 1));
}

double ValueOf(size_t bin) {  // the bin's middle
  const int e = static_cast<int>(bin >> kMantBits) + kMinExp;
  const double mant = 1 + (static_cast<double>(bin & ((1u << kMantBits) - 1)) + 0.5) / (1u << kMantBits);
  return std::ldexp(mant, e);
}

}  // namespace

void QuantileSketch::Add(double x) {
  if (!std::isfinite(x)) return;
  ++count_;
  if (bins_.empty()) {
    exact_.push_back(x);
    if (exact_.size() <= kExact) return;
    bins_.assign(kBins, 0);
    for (double v : exact_) ++bins_[BinOf(v)];
    exact_.clear();
    exact_.shrink_to_fit();
    return;
  }
  ++bins_[BinOf(x)];
}

double QuantileSketch::Quantile(double q) const {
  if (count_ == 0) return 0;
  const size_t k = std::min(count_ - 1, static_cast<size_t>(q * static_cast<double>(count_ - 1) + 0.5));
  if (bins_.empty()) {
    std::vector<double> v = exact_;
    std::nth_element(v.begin(), v.begin() + static_cast<long>(k), v.end());
    return v[k];
  }
  size_t seen = 0;
  for (size_t b = 0; b < bins_.size(); ++b) {
    seen += bins_[b];
    if (seen > k) return ValueOf(b);
  }
  return ValueOf(bins_.size() - 1);
}

Evidence::Evidence(const fabric::FabricIndex& fabric, double flow_slow)
    : fabric_(fabric), members_(fabric.members()), rails_(fabric.rails()), flow_slow_(flow_slow) {
  nics_.resize(static_cast<size_t>(members_) * rails_);
  leaf_.resize(nics_.size());
  for (int m = 0; m < members_; ++m) {
    for (int r = 0; r < rails_; ++r) leaf_[Slot(m, r)] = fabric.leaf(m, r);
  }
  rail_.resize(static_cast<size_t>(rails_));
  for (int r = 0; r < rails_; ++r) {
    RailSums& s = rail_[static_cast<size_t>(r)];
    s.ids = {static_cast<int>(fabric.spines(r).size()), static_cast<int>(fabric.cores(r).size()),
             fabric.leaf_count(r)};
    s.link_flows.assign(2 * static_cast<size_t>(s.ids.links()), 0);
    s.switch_flows.assign(static_cast<size_t>(s.ids.spines + s.ids.cores), 0);
  }
}

void Evidence::Add(const model::SweepPairResult& t) {
  if (t.rail < 0 || t.rail >= rails_ || t.a < 0 || t.b < 0 || t.a >= members_ || t.b >= members_) return;
  // A member tested with itself went over loopback: no evidence of the fabric.
  if (t.a == t.b) return;
  ++tests_;
  RailSums& rs = rail_[static_cast<size_t>(t.rail)];
  if (t.bw_gbps) rs.bw.Add(*t.bw_gbps);
  if (t.path_mtu) ++rs.path_mtu[*t.path_mtu];
  if (t.a_port_gbps) rs.port.Add(*t.a_port_gbps);
  if (!t.bw_gbps && !t.error.empty()) failed_.push_back({t.a, t.b, t.rail});
  AddSide(t, t.a, t.b);
  AddSide(t, t.b, t.a);
  const int la = leaf_[Slot(t.a, t.rail)], lb = leaf_[Slot(t.b, t.rail)];
  if (!t.bw_gbps || la == lb) return;
  if (!rs.paths && std::any_of(t.flow_spine.begin(), t.flow_spine.end(), [](int16_t s) { return s >= 0; })) {
    rs.paths = true;
    rs.leaf_tests.clear();
    rs.leaf_tests.shrink_to_fit();
  }
  if (!rs.paths) rs.leaf_tests.push_back({t.a, t.b, t.round, static_cast<float>(*t.bw_gbps)});
  AddFlows(t, la, lb);
  if (rs.paths) KeepIfSlow(t, la, lb);
}

void Evidence::KeepIfSlow(const model::SweepPairResult& t, int la, int lb) {
  RailSums& rs = rail_[static_cast<size_t>(t.rail)];
  // The reference moves while tests arrive: recomputed on every test while
  // few, then each time the count has grown by a quarter (amortised O(1)).
  const size_t n = rs.bw.count();
  if (n < 256 || n >= rs.running_ref_at + rs.running_ref_at / 4) {
    rs.running_ref = rs.bw.Quantile(0.9);
    rs.running_ref_at = n;
  }
  const double bw = *t.bw_gbps;
  if (rs.slow_tests.size() >= RailSums::kSlowTestsMax || !(bw < RailSums::kSlowTestKeep * rs.running_ref)) return;
  SlowTest x;
  x.a = t.a, x.b = t.b, x.round = t.round, x.leaf_a = la, x.leaf_b = lb, x.bw = static_cast<float>(bw);
  for (int16_t s : t.flow_spine) {
    if (s >= 0) x.spines |= uint64_t{1} << std::min<int>(s, 63);
  }
  if (x.spines) rs.slow_tests.push_back(x);
}

void Evidence::Add(const std::vector<model::SweepPairResult>& tests) {
  constexpr size_t kAhead = 4;
  for (size_t i = 0; i < tests.size(); ++i) {
    if (i + kAhead < tests.size()) {
      const auto& next = tests[i + kAhead];
      const char* g = reinterpret_cast<const char*>(next.flow_gbps.data());
      for (size_t k = 0; k < next.flow_gbps.size() * sizeof(float); k += 64) __builtin_prefetch(g + k);
      const char* s = reinterpret_cast<const char*>(next.flow_spine.data());
      for (size_t k = 0; k < next.flow_spine.size() * sizeof(int16_t); k += 64) __builtin_prefetch(s + k);
    }
    Add(tests[i]);
  }
}

void Evidence::AddSide(const model::SweepPairResult& t, int me, int other) {
  NicSums& x = nics_[Slot(me, t.rail)];
  if (t.bw_gbps) {
    const float bw = static_cast<float>(*t.bw_gbps);
    ++x.tests;
    if (!(x.best_bw >= bw)) {
      x.best_bw = bw;
      x.best_a = t.a, x.best_b = t.b, x.best_round = t.round;
    }
    // Distinct partners; when full, one with a better best test than the
    // worst kept (as it was when kept) replaces it.
    int* end = x.partners + x.n_partners;
    if (std::find(x.partners, end, other) == end) {
      const float b = nics_[Slot(other, t.rail)].best_bw;
      const float other_best = b == b ? b : -1.0f;
      if (x.n_partners < NicSums::kPartners) {
        x.partner_best[x.n_partners] = other_best;
        x.partners[x.n_partners++] = other;
      } else {
        float* worst = std::min_element(x.partner_best, x.partner_best + NicSums::kPartners);
        if (other_best > *worst) {
          *worst = other_best;
          x.partners[worst - x.partner_best] = other;
        }
      }
    }
    // Loss on a path through the spines may be theirs: the cable is judged by tests inside its leaf.
    if (leaf_[Slot(t.a, t.rail)] == leaf_[Slot(t.b, t.rail)]) {
      ++x.intra_tests;
      if (t.loss && *t.loss >= 1e-4) ++x.lossy;
    }
    const auto& port = me == t.a ? t.a_port_gbps : t.b_port_gbps;
    if (port) {
      const float g = static_cast<float>(*port);
      NicSums::Port* p = std::find_if(x.ports, x.ports + x.n_ports, [g](const NicSums::Port& v) { return v.gbps == g; });
      if (p == x.ports + x.n_ports) {
        if (x.n_ports < NicSums::kValues) {
          x.ports[x.n_ports++] = {g, 0};
        } else {  // more distinct rates than a port trains at: count it with the nearest
          p = std::min_element(x.ports, x.ports + x.n_ports, [g](const auto& u, const auto& v) {
            return std::fabs(u.gbps - g) < std::fabs(v.gbps - g);
          });
        }
      }
      ++p->tests;
    }
  }
  if (t.path_mtu) {
    ++x.mtu_tests;
    const int v = *t.path_mtu;
    NicSums::Mtu* m = std::find_if(x.mtus, x.mtus + x.n_mtus, [v](const NicSums::Mtu& e) { return e.mtu == v; });
    if (m == x.mtus + x.n_mtus) {
      if (x.n_mtus < NicSums::kValues) {
        x.mtus[x.n_mtus++].mtu = v;
      } else {  // counted with the nearest MTU at or below it (the lowest when none), so a hole stays one
        NicSums::Mtu* below = nullptr;
        m = x.mtus;
        for (NicSums::Mtu* e = x.mtus; e != x.mtus + x.n_mtus; ++e) {
          if (e->mtu <= v && (!below || e->mtu > below->mtu)) below = e;
          if (e->mtu < m->mtu) m = e;
        }
        if (below) m = below;
      }
    }
    ++m->tests;
    int* end = m->partners + m->n_partners;
    if (m->n_partners < NicSums::kPartners && std::find(m->partners, end, other) == end) {
      m->partners[m->n_partners++] = other;
    }
  }
}

void Evidence::AddFlows(const model::SweepPairResult& t, int la, int lb) {
  // One flow cannot be told from its host: there is nothing in the test to compare it with.
  const size_t n = t.flow_gbps.size();
  if (n < 2) return;
  RailSums& rs = rail_[static_cast<size_t>(t.rail)];
  const int spines = rs.ids.spines, cores = rs.ids.cores, n_up = rs.ids.uplinks();
  // The test's reference flow: its best, or with 4 flows or more its second
  // best. Real TCP flows sharing a host's bottleneck are not fair within a
  // second: one flow often runs a third above the rest, and against it the
  // healthy others read as slow (measured on the namespace Clos:
  // tests/sweep/netns_clos.sh).
  float best = 0, second = 0;
  for (float g : t.flow_gbps) {
    if (g > best) {
      second = best, best = g;
    } else if (g > second) {
      second = g;
    }
  }
  if (n >= 4) best = second;
  if (!(best > 0)) return;
  const float slow = static_cast<float>(flow_slow_) * best;
  // Every flow of every test between leaves passes here (68 million at 4,096
  // members by the topology strategy): one tight loop, no allocation.
  const float* gbps = t.flow_gbps.data();
  const int16_t* spine = t.flow_spine.data();
  const int16_t* core = t.flow_core.size() >= n ? t.flow_core.data() : nullptr;
  const int16_t* down = t.flow_spine_down.size() >= n ? t.flow_spine_down.data() : nullptr;
  const size_t n_spine = std::min(n, t.flow_spine.size());
  int* link_flows = rs.link_flows.data();
  int* switch_flows = rs.switch_flows.data();
  const int up_a = la * spines, up_b = lb * spines;
  for (size_t f = 0; f < n_spine; ++f) {
    const int s = spine[f];
    if (s < 0 || s >= spines) continue;
    const int c = core ? core[f] : -1;
    const int s2 = down && down[f] >= 0 ? down[f] : s;
    if (s2 >= spines || c >= cores) continue;
    // Directed ids (LinkIds): up the sender's uplink, down the receiver's.
    const int l_up = LinkIds::directed(up_a + s, LinkIds::kUp), l_down = LinkIds::directed(up_b + s2, LinkIds::kDown);
    const int c_up = c >= 0 ? LinkIds::directed(n_up + s * cores + c, LinkIds::kUp) : -1;
    const int c_down = c >= 0 ? LinkIds::directed(n_up + s2 * cores + c, LinkIds::kDown) : -1;
    ++link_flows[l_up], ++link_flows[l_down], ++switch_flows[s];
    if (s2 != s) ++switch_flows[s2];
    if (c >= 0) ++link_flows[c_up], ++link_flows[c_down], ++switch_flows[spines + c];
    if (!(gbps[f] < slow)) continue;
    // The path's key: its up and down uplinks and, between pods, its core
    // (the down spine is in the down uplink).
    const uint64_t key = (static_cast<uint64_t>(up_a + s) * static_cast<uint64_t>(n_up) +
                          static_cast<uint64_t>(up_b + s2)) * static_cast<uint64_t>(cores + 1) +
                         static_cast<uint64_t>(c + 1);
    auto [it, fresh] = rs.slow_index.try_emplace(key, static_cast<uint32_t>(rs.slow.size()));
    if (fresh) {
      SlowFlow x;
      x.leaf_a = la, x.leaf_b = lb, x.a = t.a, x.b = t.b, x.round = t.round;
      x.link[x.links++] = l_up;
      x.link[x.links++] = l_down;
      x.sw[x.switches++] = s;
      if (s2 != s) x.sw[x.switches++] = s2;
      if (c >= 0) {
        x.link[x.links++] = c_up;  // the order the flow went: kept so link[3] is the way down
        x.link[x.links++] = c_down;
        x.sw[x.switches++] = spines + c;
      }
      x.gbps = gbps[f];
      x.expected = best;
      rs.slow.push_back(x);
    }
    SlowFlow& x = rs.slow[it->second];
    ++x.count;
    if (x.n_rounds < SlowFlow::kRounds && std::find(x.rounds, x.rounds + x.n_rounds, t.round) == x.rounds + x.n_rounds) {
      x.rounds[x.n_rounds++] = t.round;
    }
  }
}

}  // namespace fabcheck::sweep
