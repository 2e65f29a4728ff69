// Uplinks and spines, from the flows of inter-leaf tests that were slow next
// to the best flow of their test: a slow flow went through a slow element of
// its path.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "sweep/localize_internal.h"

namespace fabcheck::sweep::internal {
namespace {

struct LinkTally {
  int flows = 0;
  std::set<int> rounds;  // rounds with a slow flow
  std::set<int> leaves;  // leaves of slow flows (spines)
};

double Confidence(int consistent) { return std::min(0.99, 1 - std::pow(0.5, consistent)); }

// Without per-flow paths (a transport that cannot tell which spine a flow
// took) a slow path between two leaves can still be told from its ends: the
// tests between them are slow while both NICs are fast elsewhere. It is
// pinned to a leaf's uplinks ("leaf~?") when that leaf is slow with most of
// the leaves it was measured with, else to the pair ("a~?~b").
void LeafPaths(const std::vector<LeafTest>& tests, const fabric::FabricIndex& fabric, const NicView& nics,
               const LocalizeOptions& o, int r, Localization* out) {
  struct Pair {
    int tests = 0, slow = 0;
    std::set<int> rounds;
    std::vector<int> slow_tests;
  };
  std::map<std::pair<int, int>, Pair> pairs;
  for (size_t i = 0; i < tests.size(); ++i) {
    const LeafTest& t = tests[i];
    const int la = fabric.leaf(t.a, r), lb = fabric.leaf(t.b, r);
    if (la == lb || !nics.good(t.a, r) || !nics.good(t.b, r)) continue;
    Pair& p = pairs[std::minmax(la, lb)];
    ++p.tests;
    if (t.bw < o.slow * nics.reference[r]) {
      ++p.slow;
      p.rounds.insert(t.round);
      p.slow_tests.push_back(static_cast<int>(i));
    }
  }
  std::map<int, int> observed, bad;
  std::vector<std::pair<int, int>> candidates;
  for (const auto& [key, p] : pairs) {
    ++observed[key.first];
    ++observed[key.second];
    if (p.slow >= o.uplink_min_slow_flows && p.slow >= o.uplink_slow_share * p.tests &&
        static_cast<int>(p.rounds.size()) >= o.min_rounds) {
      candidates.push_back(key);
      ++bad[key.first];
      ++bad[key.second];
    }
  }
  auto finding = [&](std::string element, std::string why, const std::vector<std::pair<int, int>>& keys) {
    model::SweepElementFinding e;
    e.kind = "uplink";
    e.element = std::move(element);
    e.rail = r;
    e.severity = model::Severity::kFail;
    int slow = 0, all = 0;
    std::set<int> rounds;
    for (const auto& k : keys) {
      const Pair& p = pairs[k];
      slow += p.slow, all += p.tests;
      rounds.insert(p.rounds.begin(), p.rounds.end());
      for (int i : p.slow_tests) {
        if (e.evidence.size() >= 4) break;
        const LeafTest& t = tests[static_cast<size_t>(i)];
        e.evidence.push_back({t.a, t.b, r, t.round, "bw_gbps", t.bw, nics.reference[r]});
      }
    }
    e.ratio = 1 - static_cast<double>(slow) / std::max(1, all);
    // Lower than a pinned uplink's: the spine is not known.
    e.confidence = 0.5 * Confidence(static_cast<int>(rounds.size()) + 1);
    e.why = fmt::format("{}: {} of {} tests between NICs fast elsewhere were slow, in {} rounds; which uplink it "
                        "is needs per-flow paths, which this transport does not report", why, slow, all, rounds.size());
    out->findings.push_back(std::move(e));
  };
  std::set<std::pair<int, int>> explained;
  for (const auto& [leaf, count] : bad) {
    if (count < 2 || count * 2 < observed[leaf]) continue;
    std::vector<std::pair<int, int>> keys;
    for (const auto& k : candidates) {
      if (k.first == leaf || k.second == leaf) keys.push_back(k), explained.insert(k);
    }
    finding(fmt::format("{}~?", fabric.leaf_name(r, leaf)),
            fmt::format("the uplinks of {} are slow to {} leaves", fabric.leaf_name(r, leaf), count), keys);
  }
  for (const auto& k : candidates) {
    if (explained.count(k)) continue;
    finding(fmt::format("{}~?~{}", fabric.leaf_name(r, k.first), fabric.leaf_name(r, k.second)),
            fmt::format("the path between {} and {} through the spines is slow", fabric.leaf_name(r, k.first),
                        fabric.leaf_name(r, k.second)),
            {k});
  }
}


// Uplinks, spines, core links and cores from flows whose path is known, for
// one rail (link and switch ids: LinkIds).
void FlowPaths(const RailSums& rs, const fabric::FabricIndex& fabric, const LocalizeOptions& o, int r,
               Localization* out) {
  const LinkIds& ids = rs.ids;
  const int spines = ids.spines, cores = ids.cores, n_up = ids.uplinks();
  auto link_name = [&](int l) {
    if (l < n_up) return fmt::format("{}~{}", fabric.leaf_name(r, l / spines), fabric.spines(r)[l % spines]);
    const int k = l - n_up;
    return fmt::format("{}~{}", fabric.spines(r)[k / cores], fabric.cores(r)[k % cores]);
  };
  auto switch_name = [&](int w) { return w < spines ? fabric.spines(r)[w] : fabric.cores(r)[w - spines]; };
  std::vector<LinkTally> up(rs.link_flows.size()), sp(rs.switch_flows.size());
  for (size_t k = 0; k < up.size(); ++k) up[k].flows = rs.link_flows[k];
  for (size_t k = 0; k < sp.size(); ++k) sp[k].flows = rs.switch_flows[k];
  // Slow flows, grouped by path (evidence.h); explained ones are marked in a
  // copy, so the evidence stays as it came.
  struct Flow : SlowFlow {
    bool explained = false;
  };
  std::vector<Flow> slow;
  slow.reserve(rs.slow.size());
  for (const SlowFlow& f : rs.slow) slow.push_back(Flow{f});
  if (slow.empty()) return;
  auto evidence = [&](const SlowFlow& f) {
    return model::SweepEvidence{f.a, f.b, r, f.round, "flow_gbps", f.gbps, f.expected};
  };
  // Switches first: a spine or core that drops packets slows flows from every
  // leaf, so its flows stay slow even without those of its worst link (which
  // a single bad link cannot explain away).
  std::vector<int> switch_slow(sp.size(), 0);
  std::map<int, int> link_slow;
  for (const Flow& f : slow) {
    for (int k = 0; k < f.links; ++k) link_slow[f.link[k]] += f.count;
    for (int k = 0; k < f.switches; ++k) {
      switch_slow[f.sw[k]] += f.count;
      sp[f.sw[k]].rounds.insert(f.rounds, f.rounds + f.n_rounds);
      sp[f.sw[k]].leaves.insert(f.leaf_a);
      sp[f.sw[k]].leaves.insert(f.leaf_b);
    }
  }
  auto touches = [&](int l, int w) {  // link l ends at switch w
    if (l < n_up) return w == l % spines;
    const int k = l - n_up;
    return w == k / cores || w == spines + k % cores;
  };
  for (int w = 0; w < static_cast<int>(sp.size()); ++w) {
    int worst = -1, worst_slow = 0;
    for (const auto& [l, c] : link_slow) {
      if (c > worst_slow && touches(l, w)) worst = l, worst_slow = c;
    }
    const int rest_flows = sp[w].flows - (worst >= 0 ? up[worst].flows : 0);
    const double share = sp[w].flows ? static_cast<double>(switch_slow[w]) / sp[w].flows : 0;
    const double rest_share = rest_flows > 0 ? static_cast<double>(switch_slow[w] - worst_slow) / rest_flows : 0;
    if (share < o.spine_slow_share || rest_share < o.spine_slow_share ||
        static_cast<int>(sp[w].leaves.size()) < o.spine_min_leaves ||
        static_cast<int>(sp[w].rounds.size()) < o.min_rounds) {
      continue;
    }
    model::SweepElementFinding e;
    e.kind = w < spines ? "spine" : "core";
    e.element = switch_name(w);
    e.rail = r;
    e.ratio = 1 - share;
    e.severity = model::Severity::kFail;
    e.confidence = Confidence(static_cast<int>(sp[w].rounds.size()) + 1) * std::min(1.0, rest_share / 0.5);
    e.why = fmt::format("{} slows flows from {} leaves: {} of {} flows through it were slow ({:.0f}% without "
                        "its worst link)", e.element, sp[w].leaves.size(), switch_slow[w], sp[w].flows,
                        rest_share * 100);
    for (Flow& f : slow) {
      if (std::find(f.sw, f.sw + f.switches, w) == f.sw + f.switches) continue;
      if (e.evidence.size() < 4) e.evidence.push_back(evidence(f));
      f.explained = true;
    }
    out->findings.push_back(std::move(e));
  }
  // Links, greedily: the link whose flows are most often slow explains its
  // slow flows, so the links at their far ends are not blamed too.
  for (;;) {
    std::map<int, int> count;
    for (const Flow& f : slow) {
      if (f.explained) continue;
      for (int k = 0; k < f.links; ++k) count[f.link[k]] += f.count;
    }
    int best = -1, best_count = 0;
    double best_share = 0;
    for (const auto& [u, c] : count) {
      const double share = static_cast<double>(c) / std::max(1, up[u].flows);
      if (share > best_share || (share == best_share && c > best_count)) best = u, best_count = c, best_share = share;
    }
    if (best < 0) break;
    std::set<int> rounds;
    for (const Flow& f : slow) {
      if (!f.explained && f.crosses(best)) rounds.insert(f.rounds, f.rounds + f.n_rounds);
    }
    const double share = best_share;
    const bool enough = best_count >= o.uplink_min_slow_flows && static_cast<int>(rounds.size()) >= o.min_rounds;
    if (share < o.uplink_slow_share) break;  // the worst left is noise or contention
    // An uplink whose every flow also crossed another uplink of the same
    // spine (only two leaves send flows through it) cannot be told from that
    // one: the pair is named, as the path through the spine.
    int twin = -1;
    for (const auto& [u, c] : count) {
      if (best >= n_up || u >= n_up || u == best || c != best_count || up[u].flows != up[best].flows ||
          u % spines != best % spines) {
        continue;
      }
      bool same = true;
      for (const Flow& f : slow) {
        if (!f.explained && f.crosses(best) != f.crosses(u)) {
          same = false;
          break;
        }
      }
      if (same) {
        twin = u;
        break;
      }
    }
    std::vector<const Flow*> mine;
    for (Flow& f : slow) {
      if (f.explained || !f.crosses(best)) continue;
      f.explained = true;
      mine.push_back(&f);
    }
    if (!enough) {
      Suspect s{Suspect::Kind::kUplink, -1, r, -1, -1};
      if (best < n_up) {
        s.leaf = best / spines, s.spine = best % spines;
      } else {
        // A core link: retested from the end of a slow flow through it that
        // is in the spine's pod (the sender when the flow went up the link).
        const Flow* f = mine.empty() ? nullptr : mine.front();
        s.leaf = !f ? 0 : f->links > 3 && f->link[3] == best ? f->leaf_b : f->leaf_a;
        s.spine = (best - n_up) / cores;
        s.core = (best - n_up) % cores;
      }
      out->suspects.push_back(s);
      continue;
    }
    model::SweepElementFinding e;
    e.kind = "uplink";
    e.element = link_name(best);
    e.rail = r;
    e.ratio = 1 - share;
    e.severity = model::Severity::kFail;
    e.confidence = Confidence(static_cast<int>(rounds.size()) + 1) * std::min(1.0, share / 0.75);
    e.why = fmt::format("{} of {} flows through {} were slow, in {} rounds, next to the other flows of their "
                        "tests", best_count, up[best].flows, e.element, rounds.size());
    if (twin >= 0) {
      const int spine = best % spines;
      const int a = std::min(best / spines, twin / spines), b = std::max(best / spines, twin / spines);
      e.element = fmt::format("{}~{}~{}", fabric.leaf_name(r, a), fabric.spines(r)[spine], fabric.leaf_name(r, b));
      e.why = fmt::format("{} of {} flows through {} between {} and {} were slow, in {} rounds, next to the "
                          "other flows of their tests; no other leaf sent flows through {}, so which of its two "
                          "uplinks it is cannot be told: check {}~{} and {}~{}", best_count, up[best].flows,
                          fabric.spines(r)[spine], fabric.leaf_name(r, a), fabric.leaf_name(r, b), rounds.size(),
                          fabric.spines(r)[spine], fabric.leaf_name(r, a), fabric.spines(r)[spine],
                          fabric.leaf_name(r, b), fabric.spines(r)[spine]);
    }
    for (const Flow* f : mine) {
      if (e.evidence.size() < 4) e.evidence.push_back(evidence(*f));
    }
    out->findings.push_back(std::move(e));
  }
}

}  // namespace

void LocalizeLinks(const Evidence& ev, const NicView& nics, const LocalizeOptions& o, Localization* out) {
  const fabric::FabricIndex& fabric = ev.fabric();
  for (int r = 0; r < fabric.rails(); ++r) {
    const RailSums& rs = ev.rail(r);
    if (nics.reference[r] <= 0 || fabric.leaf_count(r) < 2) continue;
    if (rs.ids.spines == 0 || !rs.paths) {
      LeafPaths(rs.leaf_tests, fabric, nics, o, r, out);
      continue;
    }
    FlowPaths(rs, fabric, o, r, out);
  }
}

}  // namespace fabcheck::sweep::internal
