#include "sweep/localize.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "sweep/evidence.h"
#include "sweep/localize_internal.h"

namespace fabcheck::sweep {
namespace internal {

std::string MemberName(const std::vector<model::SweepMember>& members, int m) {
  const auto& x = members[static_cast<size_t>(m)];
  return !x.display.empty() ? x.display : !x.name.empty() ? x.name : fmt::format("node-{}", m);
}

std::string NicName(const std::vector<model::SweepMember>& members, int m, int rail) {
  return fmt::format("{}/r{}", MemberName(members, m), rail);
}

}  // namespace internal

namespace {

using internal::MemberName;
using internal::NicName;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

double Confidence(int consistent) { return std::min(0.99, 1 - std::pow(0.5, consistent)); }

// Per NIC (member x rail): what its running sums say against the rail's references.
struct NicTally {
  float best_q = kNaN;
  int tests = 0, slow = 0;
  int mtu_tests = 0, mtu_below = 0, mtu_partners = 0;
  int intra_tests = 0;  // tests inside the leaf (no uplink or spine on the path)
  int lossy = 0;        // ...of which lost packets
  int downtrained = 0;  // tests where this end's port ran below the rail's port rate
  model::SweepEvidence best;
  std::vector<int> slow_partners;
};

}  // namespace

int FlowsToCoverSpines(int m, double p) { return m <= 1 ? 1 : FlowsToCover(m, 1.0 / m, p); }

int FlowsToCover(int m, double each, double p) {
  if (m < 1 || !(each > 0) || each * m > 1 + 1e-9) return 1;
  for (int k = m; k < 100000; ++k) {
    // P(every target gets a flow) by inclusion-exclusion over the targets missed.
    double all = 0, binom = 1;
    for (int j = 0; j <= m; ++j) {
      all += (j % 2 ? -1 : 1) * binom * std::pow(std::max(0.0, 1.0 - j * each), k);
      binom = binom * (m - j) / (j + 1);
    }
    if (all >= p) return k;
  }
  return 100000;
}

Localization Localize(const std::vector<model::SweepPairResult>& tests, const fabric::FabricIndex& fabric,
                      const std::vector<model::SweepMember>& members, const LocalizeOptions& o) {
  Evidence evidence(fabric, o.slow);
  for (const auto& t : tests) evidence.Add(t);
  return Localize(evidence, members, o);
}

Localization Localize(const Evidence& ev, const std::vector<model::SweepMember>& members, const LocalizeOptions& o) {
  Localization out;
  const fabric::FabricIndex& fabric = ev.fabric();
  const int n = static_cast<int>(members.size());
  const int rails = fabric.rails();
  auto at = [rails](int m, int r) { return static_cast<size_t>(m) * rails + r; };

  // References per rail: bandwidth (90th percentile), path MTU and port rate (medians).
  std::vector<double> ref(rails, 0), mtu_ref(rails, 0), port_ref(rails, 0);
  for (int r = 0; r < rails; ++r) {
    const RailSums& rs = ev.rail(r);
    ref[r] = rs.bw.Quantile(0.9);
    port_ref[r] = rs.port.Quantile(0.5);
    int64_t all = 0, seen = 0;
    for (const auto& [v, c] : rs.path_mtu) all += c;
    const int64_t k = all > 0 ? static_cast<int64_t>(0.5 * static_cast<double>(all - 1) + 0.5) : 0;
    for (const auto& [v, c] : rs.path_mtu) {
      seen += c;
      if (seen > k) {
        mtu_ref[r] = v;
        break;
      }
    }
  }

  // What the rules read per NIC, from its running sums and the rail's references.
  std::vector<NicTally> nic(static_cast<size_t>(n) * rails);
  for (int m = 0; m < n && m < ev.members(); ++m) {
    for (int r = 0; r < rails; ++r) {
      const NicSums& s = ev.nic(m, r);
      NicTally& x = nic[at(m, r)];
      if (ref[r] > 0 && s.tests > 0) {
        x.best_q = static_cast<float>(s.best_bw / ref[r]);
        x.tests = s.tests;
        // Every test of a NIC is at most as fast as its best: below `slow`, all were slow.
        x.slow = x.best_q < o.slow ? s.tests : 0;
        x.slow_partners.assign(s.partners, s.partners + s.n_partners);
        x.intra_tests = s.intra_tests;
        x.lossy = s.lossy;
        for (int k = 0; k < s.n_ports; ++k) {
          if (port_ref[r] > 0 && s.ports[k].gbps < 0.9 * port_ref[r]) x.downtrained += s.ports[k].tests;
        }
        x.best = {s.best_a, s.best_b, r, s.best_round, "bw_gbps", s.best_bw, ref[r]};
      }
      x.mtu_tests = s.mtu_tests;
      std::set<int> below;
      for (int k = 0; k < s.n_mtus; ++k) {
        if (s.mtus[k].mtu >= mtu_ref[r]) continue;
        x.mtu_below += s.mtus[k].tests;
        below.insert(s.mtus[k].partners, s.mtus[k].partners + s.mtus[k].n_partners);
      }
      x.mtu_partners = static_cast<int>(below.size());
    }
  }
  out.nic_state.assign(n, std::vector<uint8_t>(rails, 0));
  internal::NicView view;
  view.rails = rails;
  view.reference = ref;
  view.good_threshold = o.good;
  view.best_q.assign(nic.size(), kNaN);
  view.bad.assign(nic.size(), 0);
  for (size_t k = 0; k < nic.size(); ++k) view.best_q[k] = nic[k].best_q;

  auto good_partners = [&](const std::vector<int>& partners, int rail) {
    int g = 0;
    for (int p : partners) g += view.good(p, rail) ? 1 : 0;
    return g;
  };

  // MTU holes first: their large-message failures must not read as flaps.
  for (int m = 0; m < n; ++m) {
    for (int r = 0; r < rails; ++r) {
      const NicTally& x = nic[at(m, r)];
      if (x.mtu_below == 0 || x.mtu_below < o.mtu_share * x.mtu_tests) continue;
      view.bad[at(m, r)] = 1;
      out.nic_state[m][r] = 2;
      if (x.mtu_below < o.min_slow_tests || x.mtu_partners < o.min_good_partners) {
        Suspect sus = MakeSuspect(Suspect::Kind::kMtu, m, r);
        sus.why = fmt::format("path MTU below the rail's in {} of {} tests, with {} partners (naming needs {} tests "
                              "and {} partners)", x.mtu_below, x.mtu_tests, x.mtu_partners, o.min_slow_tests,
                              o.min_good_partners);
        out.suspects.push_back(std::move(sus));
        continue;
      }
      model::SweepElementFinding f;
      f.kind = "mtu";
      f.element = NicName(members, m, r);
      f.rail = r;
      f.severity = model::Severity::kFail;
      f.confidence = Confidence(x.mtu_partners) * x.mtu_below / x.mtu_tests;
      f.ratio = 0;
      f.why = fmt::format("large frames vanish to and from {}: path MTU below the rail's {:.0f} with {} of {} "
                          "partners", f.element, mtu_ref[r], x.mtu_partners, x.mtu_tests);
      out.findings.push_back(std::move(f));
    }
  }
  // Flaps, greedily: the NIC with the most failed tests (not explained by an
  // MTU hole at either end) takes the blame for all of them, so its partners
  // are not blamed as well.
  std::vector<std::pair<size_t, size_t>> failed;  // NIC slots of both ends
  for (const FailedTest& t : ev.failed()) {
    if (t.a >= n || t.b >= n || view.bad[at(t.a, t.rail)] || view.bad[at(t.b, t.rail)]) continue;
    failed.push_back({at(t.a, t.rail), at(t.b, t.rail)});
  }
  std::vector<char> taken(failed.size(), 0);
  for (;;) {
    std::map<size_t, int> count;
    for (size_t i = 0; i < failed.size(); ++i) {
      if (taken[i]) continue;
      ++count[failed[i].first];
      ++count[failed[i].second];
    }
    size_t k = 0;
    int best = 0;
    for (const auto& [slot, c] : count) {
      if (c > best && nic[slot].tests > 0) k = slot, best = c;  // never once succeeded: unreachable, not a flap
    }
    if (best == 0) break;
    std::set<int> partners;
    for (size_t i = 0; i < failed.size(); ++i) {
      if (taken[i] || (failed[i].first != k && failed[i].second != k)) continue;
      taken[i] = 1;
      const size_t other = failed[i].first == k ? failed[i].second : failed[i].first;
      partners.insert(static_cast<int>(other / rails));
    }
    const int m = static_cast<int>(k / rails), r = static_cast<int>(k % rails);
    const NicTally& x = nic[k];
    view.bad[k] = 1;
    out.nic_state[m][r] = 2;
    if (best < o.flap_min_failures || partners.size() < 2) {
      // Failures with one partner only: either end may flap, so both are re-measured.
      const std::string why = fmt::format("{} failed tests with {} partners (naming needs {} with 2)", best,
                                          partners.size(), o.flap_min_failures);
      Suspect sus = MakeSuspect(Suspect::Kind::kFlap, m, r);
      sus.why = why;
      out.suspects.push_back(sus);
      for (int p : partners) {
        if (partners.size() == 1 && out.nic_state[p][r] != 2) {
          sus.member = p;
          out.suspects.push_back(sus);
        }
      }
      continue;
    }
    model::SweepElementFinding f;
    f.kind = "cable";
    f.element = fmt::format("{}~{}", NicName(members, m, r), fabric.leaf_name(r, fabric.leaf(m, r)));
    f.rail = r;
    f.severity = model::Severity::kFail;
    f.confidence = Confidence(best);
    f.ratio = static_cast<double>(x.tests) / (x.tests + best);
    f.why = fmt::format("the link of {} goes down now and then: {} of {} tests failed, with {} partners, the "
                        "others ran", NicName(members, m, r), best, x.tests + best, partners.size());
    out.findings.push_back(std::move(f));
  }

  // Slow NIC segments, then node / nic / cable.
  std::vector<std::vector<int>> slow_rails(n);
  for (int m = 0; m < n; ++m) {
    for (int r = 0; r < rails; ++r) {
      const size_t k = at(m, r);
      const NicTally& x = nic[k];
      if (x.tests == 0 || view.bad[k]) continue;
      if (x.best_q >= o.good) {
        out.nic_state[m][r] = 1;
        continue;
      }
      if (x.best_q >= o.slow) continue;  // between slow and good: not named, not cleared
      out.nic_state[m][r] = 2;
      view.bad[k] = 1;
      if (x.slow < o.min_slow_tests || good_partners(x.slow_partners, r) < o.min_good_partners) {
        Suspect sus = MakeSuspect(Suspect::Kind::kNic, m, r);
        sus.why = fmt::format("its best test reached {:.0f}% of the rail's reference, in {} slow tests with {} "
                              "known-good partners (naming needs {} with {})", x.best_q * 100, x.slow,
                              good_partners(x.slow_partners, r), o.min_slow_tests, o.min_good_partners);
        out.suspects.push_back(std::move(sus));
        continue;
      }
      slow_rails[m].push_back(r);
    }
  }
  for (int m = 0; m < n; ++m) {
    const auto& s = slow_rails[m];
    if (s.empty()) continue;
    const bool node = rails == 1 ? nic[at(m, s[0])].downtrained * 2 < nic[at(m, s[0])].tests &&
                                       nic[at(m, s[0])].lossy * 2 < std::max(1, nic[at(m, s[0])].intra_tests)
                                 : static_cast<int>(s.size()) >= std::max(2, (rails + 1) / 2);
    auto finding = [&](int r) {
      const NicTally& x = nic[at(m, r)];
      model::SweepElementFinding f;
      f.rail = r;
      f.ratio = x.best_q;
      f.severity = x.best_q < o.fail_ratio ? model::Severity::kFail : model::Severity::kWarn;
      f.confidence = Confidence(x.slow);
      f.evidence.push_back(x.best);
      return f;
    };
    if (node) {
      model::SweepElementFinding f = finding(s[0]);
      f.kind = "node";
      f.element = MemberName(members, m);
      f.rail = -1;
      double worst = 1;
      int slow_tests = 0;
      for (int r : s) {
        worst = std::min<double>(worst, nic[at(m, r)].best_q);
        slow_tests += nic[at(m, r)].slow;
        if (r != s[0]) f.evidence.push_back(nic[at(m, r)].best);
      }
      f.ratio = worst;
      f.confidence = Confidence(slow_tests);
      f.severity = worst < o.fail_ratio ? model::Severity::kFail : model::Severity::kWarn;
      f.why = fmt::format("{} is slow with every partner on {} of {} rails: its best test reached {:.0f}% of the "
                          "reference", f.element, s.size(), rails, worst * 100);
      out.findings.push_back(std::move(f));
      continue;
    }
    for (int r : s) {
      const NicTally& x = nic[at(m, r)];
      model::SweepElementFinding f = finding(r);
      const std::string nic_name = NicName(members, m, r);
      if (x.downtrained * 2 >= x.tests || (x.intra_tests > 0 && x.lossy * 2 >= x.intra_tests)) {
        f.kind = "cable";
        f.element = fmt::format("{}~{}", nic_name, fabric.leaf_name(r, fabric.leaf(m, r)));
        f.why = x.downtrained * 2 >= x.tests
                    ? fmt::format("the cable of {} trained below the rail's port rate ({:.0f} Gb/s) and every "
                                  "test of it is slow (best {:.0f}%)", nic_name, port_ref[r], x.best_q * 100)
                    : fmt::format("the cable of {} loses packets: {} of {} tests resent packets, best test "
                                  "{:.0f}% of the reference", nic_name, x.lossy, x.intra_tests, x.best_q * 100);
      } else {
        f.kind = "nic";
        f.element = nic_name;
        f.why = fmt::format("{} is slow with every partner ({} tests, best {:.0f}% of the reference) while the "
                            "node's other rails are fine; its port runs at full rate (PCIe width or speed? "
                            "firmware?)", nic_name, x.tests, x.best_q * 100);
      }
      out.findings.push_back(std::move(f));
    }
  }
  internal::LocalizeLinks(ev, view, o, &out);
  return out;
}

std::string SuspectName(const Suspect& s, const fabric::FabricIndex& fabric,
                        const std::vector<model::SweepMember>& members) {
  switch (s.kind) {
    case Suspect::Kind::kNic: return "nic " + NicName(members, s.member, s.rail);
    case Suspect::Kind::kMtu: return "mtu " + NicName(members, s.member, s.rail);
    case Suspect::Kind::kFlap:
      return fmt::format("cable {}~{}", NicName(members, s.member, s.rail),
                         fabric.leaf_name(s.rail, fabric.leaf(s.member, s.rail)));
    case Suspect::Kind::kUplink: {
      const auto& spines = fabric.spines(s.rail);
      const auto& cores = fabric.cores(s.rail);
      if (s.core >= 0 && s.core < static_cast<int>(cores.size()) && s.spine >= 0 &&
          s.spine < static_cast<int>(spines.size())) {
        const std::string& sp = spines[s.spine];
        const std::string& co = cores[s.core];
        if (s.direction == LinkIds::kUp) return fmt::format("uplink {}~{} ({}->{})", sp, co, sp, co);
        if (s.direction == LinkIds::kDown) return fmt::format("uplink {}~{} ({}->{})", sp, co, co, sp);
        return fmt::format("uplink {}~{}", sp, co);
      }
      const std::string leaf = fabric.leaf_name(s.rail, s.leaf);
      const std::string spine = s.spine >= 0 && s.spine < static_cast<int>(spines.size()) ? spines[s.spine] : "?";
      if (s.direction == LinkIds::kUp) return fmt::format("uplink {}~{} ({}->{})", leaf, spine, leaf, spine);
      if (s.direction == LinkIds::kDown) return fmt::format("uplink {}~{} ({}->{})", leaf, spine, spine, leaf);
      return fmt::format("uplink {}~{}", leaf, spine);
    }
    case Suspect::Kind::kPath:
      return fmt::format("path {} -> {} ({}->{})", NicName(members, s.member, s.rail),
                         NicName(members, s.partner, s.rail), fabric.leaf_name(s.rail, fabric.leaf(s.member, s.rail)),
                         fabric.leaf_name(s.rail, fabric.leaf(s.partner, s.rail)));
  }
  return "?";
}

std::vector<model::Finding> ElementFindings(const std::vector<model::SweepElementFinding>& elements,
                                           const std::vector<model::SweepMember>& members) {
  static const std::map<std::string, std::string> kRemedy = {
      {"node", "take the node out of the job; check CPU frequency, NUMA placement, PCIe and thermal state "
               "(fabcheck doctor on it)"},
      {"nic", "check the NIC's PCIe link (lspci -vv: LnkSta), firmware and NUMA placement (fabcheck doctor)"},
      {"cable", "reseat or replace the cable or transceiver; check the port counters for symbol errors and "
                "link downs"},
      {"uplink", "check the leaf-spine link's counters and optics; drain it from ECMP until repaired"},
      {"spine", "check the spine's drops and error counters; drain it from ECMP until repaired"},
      {"core", "check the core switch's drops and error counters; drain it from ECMP until repaired"},
      {"mtu", "set the same MTU on the NIC, its switch port and the path (ip link set dev ... mtu ...)"},
  };
  std::vector<model::Finding> out;
  for (const auto& e : elements) {
    model::Finding f;
    f.id = "sweep.element." + e.kind;
    f.severity = e.severity;
    f.group = "sweep";
    f.object = e.element;
    f.message = e.why;
    f.evidence.push_back(fmt::format("confidence {:.0f}%", e.confidence * 100));
    if (!e.direction.empty()) {
      f.evidence.push_back(e.direction == "both" ? std::string("direction: both ways")
                                                 : fmt::format("direction: {} only", e.direction));
    }
    for (const auto& x : e.evidence) {
      f.evidence.push_back(fmt::format("round {} rail {}: {} -> {}: {} {:.3g} (reference {:.3g})", x.round, x.rail,
                                       MemberName(members, x.a), MemberName(members, x.b), x.metric, x.value,
                                       x.expected));
    }
    auto it = kRemedy.find(e.kind);
    if (it != kRemedy.end()) f.remedy = it->second;
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace fabcheck::sweep
