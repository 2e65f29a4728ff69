// Uplinks and spines, from the flows of inter-leaf tests that were slow next
// to the best flow of their test: a slow flow went through a slow element of
// its path.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <bit>
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


// What FlowPaths named: directed links and switches.
struct Named {
  std::vector<char> dlinks, switches;
};

// Uplinks, spines, core links and cores from flows whose path is known, for
// one rail (link and switch ids: LinkIds). Links are judged per direction.
void FlowPaths(const RailSums& rs, const fabric::FabricIndex& fabric, const LocalizeOptions& o, int r,
               Localization* out, Named* named_out) {
  const LinkIds& ids = rs.ids;
  named_out->dlinks.assign(rs.link_flows.size(), 0);
  named_out->switches.assign(rs.switch_flows.size(), 0);
  const int spines = ids.spines, cores = ids.cores, n_up = ids.uplinks();
  auto ends = [&](int l) -> std::pair<std::string, std::string> {  // lower tier, upper tier
    if (l < n_up) return {fabric.leaf_name(r, l / spines), fabric.spines(r)[l % spines]};
    const int k = l - n_up;
    return {fabric.spines(r)[k / cores], fabric.cores(r)[k % cores]};
  };
  auto link_name = [&](int l) {
    auto [lo, hi] = ends(l);
    return fmt::format("{}~{}", lo, hi);
  };
  auto direction_name = [&](int d) {  // d: a directed id
    auto [lo, hi] = ends(LinkIds::link_of(d));
    return LinkIds::dir_of(d) == LinkIds::kUp ? fmt::format("{}->{}", lo, hi) : fmt::format("{}->{}", hi, lo);
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
  // leaf, so its flows stay slow even without those of its worst link, both
  // ways (which a single bad link cannot explain away).
  std::vector<int> switch_slow(sp.size(), 0);
  std::map<int, int> link_slow;      // by directed id
  std::map<int, int> link_slow_both; // by link
  for (const Flow& f : slow) {
    for (int k = 0; k < f.links; ++k) link_slow[f.link[k]] += f.count, link_slow_both[LinkIds::link_of(f.link[k])] += f.count;
    for (int k = 0; k < f.switches; ++k) {
      switch_slow[f.sw[k]] += f.count;
      sp[f.sw[k]].rounds.insert(f.rounds, f.rounds + f.n_rounds);
      sp[f.sw[k]].leaves.insert(f.leaf_a);
      sp[f.sw[k]].leaves.insert(f.leaf_b);
    }
  }
  // The rail's noise floor: the lower quartile of its directed links' slow
  // shares (a median would be a fault's own share when half the links of a
  // small fabric carry its flows: two leaves, a spine slow both ways).
  std::vector<double> shares;
  for (size_t d = 0; d < up.size(); ++d) {
    if (up[d].flows < 4) continue;
    auto it = link_slow.find(static_cast<int>(d));
    shares.push_back(it == link_slow.end() ? 0.0 : static_cast<double>(it->second) / up[d].flows);
  }
  double floor = 0;
  if (!shares.empty()) {
    std::nth_element(shares.begin(), shares.begin() + static_cast<long>(shares.size() / 4), shares.end());
    floor = shares[shares.size() / 4];
  }
  const double name_share = std::max(o.uplink_slow_share, o.noise_multiple * floor);
  const double suspect_share = std::max(o.uplink_suspect_share, o.noise_multiple * floor);
  const double spine_share = std::max(o.spine_slow_share, o.noise_multiple * floor);
  const std::string noise =
      floor > 0 ? fmt::format("; the rail's noise floor: {:.0f}% of a link's flows slow", floor * 100) : "";
  auto touches = [&](int l, int w) {  // link l ends at switch w
    if (l < n_up) return w == l % spines;
    const int k = l - n_up;
    return w == k / cores || w == spines + k % cores;
  };
  for (int w = 0; w < static_cast<int>(sp.size()); ++w) {
    int worst = -1, worst_slow = 0;
    for (const auto& [l, c] : link_slow_both) {
      if (c > worst_slow && touches(l, w)) worst = l, worst_slow = c;
    }
    const int rest_flows = sp[w].flows - (worst >= 0 ? rs.flows_across(worst) : 0);
    const double share = sp[w].flows ? static_cast<double>(switch_slow[w]) / sp[w].flows : 0;
    const double rest_share = rest_flows > 0 ? static_cast<double>(switch_slow[w] - worst_slow) / rest_flows : 0;
    if (share < spine_share || rest_share < spine_share ||
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
                        "its worst link){}", e.element, sp[w].leaves.size(), switch_slow[w], sp[w].flows,
                        rest_share * 100, noise);
    named_out->switches[static_cast<size_t>(w)] = 1;
    for (Flow& f : slow) {
      if (std::find(f.sw, f.sw + f.switches, w) == f.sw + f.switches) continue;
      if (e.evidence.size() < 4) e.evidence.push_back(evidence(f));
      f.explained = true;
    }
    out->findings.push_back(std::move(e));
  }
  // Links, one direction at a time, greedily: the directed link whose flows
  // are most often slow explains its slow flows, so the links at their far
  // ends are not blamed too.
  std::map<std::string, size_t> named;  // element -> index in out->findings (both directions merge)
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
    const int link = LinkIds::link_of(best), dir = LinkIds::dir_of(best);
    std::set<int> rounds;
    for (const Flow& f : slow) {
      if (!f.explained && f.crosses(best)) rounds.insert(f.rounds, f.rounds + f.n_rounds);
    }
    const double share = best_share;
    const bool enough = best_count >= o.uplink_min_slow_flows && static_cast<int>(rounds.size()) >= o.min_rounds;
    const bool strong = share >= name_share;
    // Below the suspect share the worst left is noise or contention; between
    // it and the naming share it is kept as a suspect and re-measured.
    if (share < suspect_share || best_count < 2) break;
    // An uplink whose every flow (this way) also crossed an uplink of the
    // same spine at the far end (only two leaves send flows through it)
    // cannot be told from that one: the pair is named, as the path through
    // the spine.
    int twin = -1;
    for (const auto& [u, c] : count) {
      const int ul = LinkIds::link_of(u);
      if (link >= n_up || ul >= n_up || ul == link || LinkIds::dir_of(u) == dir || c != best_count ||
          up[u].flows != up[best].flows || ul % spines != link % spines) {
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
    // The other direction of the same link, for the record.
    const int back = LinkIds::directed(link, 1 - dir);
    const auto back_slow = link_slow.find(back);
    const std::string other_way = fmt::format("the other way {} of {} flows", back_slow == link_slow.end() ? 0
                                                                                : back_slow->second, up[back].flows);
    if (!enough || !strong) {
      Suspect s = MakeSuspect(Suspect::Kind::kUplink, -1, r);
      s.direction = dir;
      if (link < n_up) {
        s.leaf = link / spines, s.spine = link % spines;
      } else {
        // A core link: retested from the end of a slow flow through it that
        // is in the spine's pod (the sender when the flow went up the link).
        const Flow* f = mine.empty() ? nullptr : mine.front();
        s.leaf = !f ? 0 : f->links > 3 && f->link[3] == best ? f->leaf_b : f->leaf_a;
        s.spine = (link - n_up) / cores;
        s.core = (link - n_up) % cores;
      }
      s.why = fmt::format("{} of {} flows {} were slow ({:.0f}%), in {} rounds ({}); naming needs {:.0f}% and {} "
                          "slow flows in {} rounds{}", best_count, up[best].flows, direction_name(best), share * 100,
                          rounds.size(), other_way, name_share * 100, o.uplink_min_slow_flows, o.min_rounds, noise);
      out->suspects.push_back(std::move(s));
      continue;
    }
    model::SweepElementFinding e;
    e.kind = "uplink";
    e.element = link_name(link);
    e.direction = direction_name(best);
    e.rail = r;
    e.ratio = 1 - share;
    e.severity = model::Severity::kFail;
    e.confidence = Confidence(static_cast<int>(rounds.size()) + 1) * std::min(1.0, share / 0.75);
    e.why = fmt::format("{} of {} flows {} were slow, in {} rounds, next to the other flows of their tests ({}){}",
                        best_count, up[best].flows, e.direction, rounds.size(), other_way, noise);
    if (twin >= 0) {
      const int spine = link % spines, far = LinkIds::link_of(twin) / spines;
      const int from = dir == LinkIds::kUp ? link / spines : far, to = dir == LinkIds::kUp ? far : link / spines;
      const int a = std::min(from, to), b = std::max(from, to);
      const std::string& sname = fabric.spines(r)[spine];
      e.element = fmt::format("{}~{}~{}", fabric.leaf_name(r, a), sname, fabric.leaf_name(r, b));
      e.direction = fmt::format("{}->{}->{}", fabric.leaf_name(r, from), sname, fabric.leaf_name(r, to));
      e.why = fmt::format("{} of {} flows {} were slow, in {} rounds, next to the other flows of their tests; no "
                          "other leaf sent flows through {}, so which of its two uplinks it is cannot be told: check "
                          "{}~{} and {}~{}", best_count, up[best].flows, e.direction, rounds.size(), sname,
                          fabric.leaf_name(r, a), sname, fabric.leaf_name(r, b), sname);
    }
    for (const Flow* f : mine) {
      if (e.evidence.size() < 4) e.evidence.push_back(evidence(*f));
    }
    named_out->dlinks[static_cast<size_t>(best)] = 1;
    if (twin >= 0) named_out->dlinks[static_cast<size_t>(twin)] = 1;
    auto it = named.find(e.element);
    if (it != named.end()) {
      // Both directions of one link: one finding.
      model::SweepElementFinding& first = out->findings[it->second];
      first.direction = "both";
      first.why += "; and " + e.why;
      first.ratio = std::min(first.ratio, e.ratio);
      first.confidence = std::max(first.confidence, e.confidence);
      for (const auto& x : e.evidence) {
        if (first.evidence.size() < 6) first.evidence.push_back(x);
      }
      continue;
    }
    named[e.element] = out->findings.size();
    out->findings.push_back(std::move(e));
  }
}

// Tests slow as a whole: every flow crossed the same bad element, so the
// flows are alike and FlowPaths saw nothing in them. A test between NICs
// known good elsewhere, far below the rail's reference, and not through a
// named element, is slow on the way between its ends: it is kept as a
// suspect (retested with other partners) and named, as every path from one
// leaf to the other, once such tests came from two pairs of members in two
// rounds.
void SlowTests(const RailSums& rs, const fabric::FabricIndex& fabric, const NicView& nics, const LocalizeOptions& o,
               int r, const Named& named, Localization* out) {
  const LinkIds& ids = rs.ids;
  const double ref = nics.reference[r];
  struct Path {
    std::vector<const SlowTest*> tests;
    std::set<std::pair<int, int>> pairs;
    std::set<int> rounds;
    uint64_t spines = 0;
  };
  std::map<std::pair<int, int>, Path> paths;  // directed leaf pair
  for (const SlowTest& t : rs.slow_tests) {
    if (!(t.bw < o.test_far_below * ref) || !nics.good(t.a, r) || !nics.good(t.b, r)) continue;
    bool explained = false;
    for (int s = 0; s < ids.spines && s < 64 && !explained; ++s) {
      if (!(t.spines >> s & 1)) continue;
      explained = named.switches[static_cast<size_t>(s)] ||
                  named.dlinks[static_cast<size_t>(LinkIds::directed(ids.uplink(t.leaf_a, s), LinkIds::kUp))] ||
                  named.dlinks[static_cast<size_t>(LinkIds::directed(ids.uplink(t.leaf_b, s), LinkIds::kDown))];
    }
    // A test whose flows spread over most spines was slowed by its host, not
    // its path (a busy host slows every flow alike too): a path slows only
    // the flows that crossed it.
    if (explained || std::popcount(t.spines) > std::max(1, ids.spines / 2)) continue;
    Path& p = paths[{t.leaf_a, t.leaf_b}];
    p.tests.push_back(&t);
    p.pairs.insert({t.a, t.b});
    p.rounds.insert(t.round);
    p.spines |= t.spines;
  }
  for (const auto& [key, p] : paths) {
    const std::string la = fabric.leaf_name(r, key.first), lb = fabric.leaf_name(r, key.second);
    std::vector<std::string> through;
    for (int s = 0; s < ids.spines && s < 64; ++s) {
      if (p.spines >> s & 1) through.push_back(fabric.spines(r)[static_cast<size_t>(s)]);
    }
    double worst = 1;
    for (const SlowTest* t : p.tests) worst = std::min(worst, t->bw / ref);
    // Two pairs with no member in common: one noisy host cannot make it.
    bool disjoint = false;
    for (const auto& x : p.pairs) {
      for (const auto& y : p.pairs) {
        disjoint = disjoint || (x.first != y.first && x.first != y.second && x.second != y.first &&
                                x.second != y.second);
      }
    }
    if (!disjoint || static_cast<int>(p.rounds.size()) < o.min_rounds) {
      const SlowTest& t = *p.tests.front();
      Suspect s = MakeSuspect(Suspect::Kind::kPath, t.a, r);
      s.partner = t.b;
      s.why = fmt::format("its test in round {} moved {:.0f}% of the rail's reference, every flow alike (through {}), "
                          "while both ends are fast elsewhere: both ends, or every path from {} to {}; retested with "
                          "other partners", t.round, t.bw / ref * 100, fmt::join(through, ", "), la, lb);
      out->suspects.push_back(std::move(s));
      continue;
    }
    model::SweepElementFinding e;
    e.kind = "uplink";
    e.element = fmt::format("{}~?~{}", std::min(la, lb), std::max(la, lb));
    e.direction = fmt::format("{}->{}", la, lb);
    e.rail = r;
    e.severity = model::Severity::kFail;
    e.ratio = worst;
    e.confidence = 0.5 * Confidence(static_cast<int>(p.rounds.size()) + 1);
    e.why = fmt::format("{} tests {} -> {} between NICs fast elsewhere moved as little as {:.0f}% of the rail's "
                        "reference, with {} pairs of members in {} rounds, every flow of each alike (through {}): "
                        "every path from {} to {} is slow (the uplinks of both leaves to those spines)",
                        p.tests.size(), la, lb, worst * 100, p.pairs.size(), p.rounds.size(),
                        fmt::join(through, ", "), la, lb);
    for (const SlowTest* t : p.tests) {
      if (e.evidence.size() >= 4) break;
      e.evidence.push_back({t->a, t->b, r, t->round, "bw_gbps", t->bw, ref});
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
    Named named;
    FlowPaths(rs, fabric, o, r, out, &named);
    SlowTests(rs, fabric, nics, o, r, named, out);
  }
}

}  // namespace fabcheck::sweep::internal
