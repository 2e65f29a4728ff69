// 7. ib_write_bw/lat and NCCL Tests have single-node, same-rack, and cross-rack
// baselines. The L3 pairs are grouped by where their ends sit (one member,
// one rack, two racks); each L4 collective counts for the scope its members
// span (the rung's members unless it names its own). A
// group with failing pairs is not a baseline (slow pairs, TCP fallbacks are
// named); a missing group is unknown with the command that fills it.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "base/stats.h"
#include "report/checklist.h"

namespace fabcheck::report {
namespace {

struct Group {
  size_t measured = 0;
  size_t failed = 0;
  std::vector<double> bw, p50, p99;
};

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The scope an L4 run covers: one member, one rack, several racks.
std::string CollScope(const BundleEvidence& e, const std::vector<std::string>& members) {
  if (members.size() == 1) return "single-node";
  std::set<std::string> racks;
  for (const auto& m : members) {
    std::string r = e.RackOf(m);
    if (r.empty()) return "unknown-rack";
    racks.insert(r);
  }
  return racks.size() == 1 ? "same-rack" : "cross-rack";
}

}  // namespace

model::ChecklistItem CheckBaselines(const BundleEvidence& e) {
  auto item = checklist::NewItem(7);
  item.rungs = {"L3", "L4"};
  static const std::vector<std::string> kScopes = {"single-node", "same-rack", "cross-rack"};
  std::map<std::string, Group> perf;
  size_t shown = 0;
  if (const auto* l3 = e.Rung("L3")) {
    for (const auto& p : l3->pairs) {
      if (p.verdict == model::RungVerdict::kNotRun) continue;
      Group& g = perf[PairScope(e, p.a, p.b)];
      ++g.measured;
      if (p.bw_gbps && p.rdma) g.bw.push_back(*p.bw_gbps);
      if (p.lat_p50_us) g.p50.push_back(*p.lat_p50_us);
      if (p.lat_p99_us) g.p99.push_back(*p.lat_p99_us);
      if (p.verdict != model::RungVerdict::kFail) continue;
      ++g.failed;
      checklist::AddMember(item, p.a);
      checklist::AddMember(item, p.b);
      if (++shown <= 10) {
        item.evidence.push_back(fmt::format("{} -> {} rail {} ({}): {}{}", p.a, p.b, p.rail, PairScope(e, p.a, p.b),
                                            p.reason.empty() ? "failed" : p.reason,
                                            p.bw_gbps ? fmt::format(" ({:.0f} Gb/s)", *p.bw_gbps) : ""));
      }
    }
  }
  if (shown > 10) item.evidence.push_back(fmt::format("... and {} more failing pairs", shown - 10));
  std::vector<std::string> lines;
  bool failed = false, missing = false;
  for (const auto& scope : kScopes) {
    auto it = perf.find(scope);
    if (it == perf.end() || it->second.measured == 0) {
      missing = true;
      item.record.push_back(scope == "single-node"
                                ? "single-node perf baseline: `fabcheck perf` between two NICs of one node"
                                : "perf baseline " + scope + ": the ladder's L3 with members in " +
                                      (scope == "same-rack" ? "one rack" : "two racks") + " (--pattern pairwise)");
      lines.push_back("perf " + scope + ": none");
      continue;
    }
    const Group& g = it->second;
    failed = failed || g.failed > 0;
    lines.push_back(fmt::format("perf {}: {} pairs, {} failing; bandwidth median {:.0f} Gb/s over {} RDMA pairs; "
                                "latency p50 {:.2f} us, p99 {:.2f} us",
                                scope, g.measured, g.failed, Median(g.bw), g.bw.size(), Median(g.p50), Median(g.p99)));
  }
  if (auto it = perf.find("unknown-rack"); it != perf.end()) {
    missing = true;
    lines.push_back(fmt::format("perf with an unrecorded rack: {} pairs ({} failing)", it->second.measured,
                                it->second.failed));
    failed = failed || it->second.failed > 0;
  }
  std::set<std::string> coll_scopes;
  if (const auto* l4 = e.Rung("L4"); l4 && l4->verdict != model::RungVerdict::kNotRun && !l4->collectives.empty()) {
    for (const auto& c : l4->collectives) {
      std::string scope = CollScope(e, c.members.empty() ? l4->members : c.members);
      if (c.verdict != model::RungVerdict::kNotRun) coll_scopes.insert(scope);
      lines.push_back(fmt::format("NCCL {} {}: busbw {:.1f} GB/s{} ({})", scope, c.op, c.busbw_gbps,
                                  c.expected_gbps ? fmt::format(" of {:.1f} expected", *c.expected_gbps) : "",
                                  model::RungVerdictName(c.verdict)));
      if (c.verdict == model::RungVerdict::kFail) failed = true;
    }
  }
  for (const auto& scope : kScopes) {
    if (coll_scopes.count(scope)) continue;
    missing = true;
    item.record.push_back("NCCL baseline " + scope + ": `fabcheck coll` " +
                          (scope == "single-node" ? "on one node (all its GPUs)" : "across members in " +
                                                                                       std::string(scope == "same-rack" ? "one rack" : "two racks")));
  }
  item.evidence.insert(item.evidence.begin(), lines.begin(), lines.end());
  if (failed) {
    item.status = model::ChecklistStatus::kFail;
    item.summary = "some baseline groups contain failing pairs or collectives: they are not a baseline yet";
    item.remedy = "fix the named pairs (cables, NIC, switch port, TCP fallback) and rerun; keep the passing bundle "
                  "as the baseline (`fabcheck report --baseline` compares later runs with it)";
  } else if (missing) {
    item.status = model::ChecklistStatus::kUnknown;
    item.summary = "baselines are missing for some scopes (see what to record)";
  } else {
    item.summary = "perf and NCCL baselines exist for single-node, same-rack and cross-rack, all passing";
  }
  return item;
}

}  // namespace fabcheck::report
