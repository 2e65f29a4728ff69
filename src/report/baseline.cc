// What changed since an earlier bundle of the same cluster: members added or
// gone, rungs that regressed, pairs that got slower or lost RDMA, new PCIe
// downgrades (and restored links), MTU changes on data-plane netdevs, and
// counters that started rising. Matching is by member ID, device and pair.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "report/golive.h"

namespace fabcheck::report {
namespace {

using model::BaselineChange;
using model::Severity;

int SeverityRank(Severity s) {
  switch (s) {
    case Severity::kFail: return 0;
    case Severity::kWarn: return 1;
    case Severity::kUnknown: return 2;
    case Severity::kInfo: return 3;
    case Severity::kPass: return 4;
  }
  return 5;
}

std::string Link(const model::PciLink& l) {
  return fmt::format("{} GT/s x{}", l.current_speed_gts ? fmt::format("{:g}", *l.current_speed_gts) : "?",
                     l.current_width ? std::to_string(*l.current_width) : "?");
}

double LinkValue(const model::PciLink& l) {
  return l.current_speed_gts.value_or(0) * l.current_width.value_or(0);
}

using PairKey = std::tuple<std::string, std::string, int>;

std::map<PairKey, const model::PairTest*> L3Pairs(const BundleEvidence& e) {
  std::map<PairKey, const model::PairTest*> out;
  if (const auto* r = e.Rung("L3")) {
    for (const auto& p : r->pairs) out[{p.a, p.b, p.rail}] = &p;
  }
  return out;
}

// member/object/counter -> total positive delta over the run's rungs.
std::map<std::string, int64_t> CounterTotals(const BundleEvidence& e) {
  std::map<std::string, int64_t> out;
  for (const auto& r : e.manifest.rungs) {
    for (const auto& d : r.counter_deltas) {
      if (d.delta > 0) out[d.member + " " + d.object + " " + d.counter] += d.delta;
    }
  }
  return out;
}

void ComparePci(const std::string& id, const model::Inventory& before, const model::Inventory& after,
                std::vector<BaselineChange>& out) {
  auto compare = [&](const std::string& what, const model::PciFunction& now, bool width_only) {
    const model::PciFunction* old = nullptr;
    for (const auto& n : before.nics) {
      if (n.pci.bdf == now.bdf) old = &n.pci;
    }
    for (const auto& g : before.gpus) {
      if (g.pci.bdf == now.bdf) old = &g.pci;
    }
    if (!old) return;
    double a = width_only ? old->link.current_width.value_or(0) : LinkValue(old->link);
    double b = width_only ? now.link.current_width.value_or(0) : LinkValue(now.link);
    if (a <= 0 || b <= 0 || a == b) return;
    if (b < a) {
      out.push_back({"pcie.downgrade", Severity::kFail, id + " " + what, Link(old->link), Link(now.link),
                     fmt::format("the PCIe link of {} {} dropped from {} to {}", id, what, Link(old->link),
                                 Link(now.link))});
    } else {
      out.push_back({"pcie.restored", Severity::kInfo, id + " " + what, Link(old->link), Link(now.link),
                     fmt::format("the PCIe link of {} {} is back from {} to {}", id, what, Link(old->link),
                                 Link(now.link))});
    }
  };
  for (const auto& n : after.nics) compare(n.label, n.pci, false);
  // GPUs lower their link speed when idle: only a narrower link is a change.
  for (const auto& g : after.gpus) compare("GPU" + std::to_string(g.index), g.pci, true);
}

void CompareMtu(const std::string& id, const model::Inventory& before, const model::Inventory& after,
                std::vector<BaselineChange>& out) {
  for (const auto& n : after.netdevs) {
    if (n.pci_bdf.empty() && n.vlan_parent.empty()) continue;  // data plane only
    const model::NetDevice* old = before.FindNetDevice(n.name);
    if (!old || !old->mtu || !n.mtu || *old->mtu == *n.mtu) continue;
    out.push_back({"mtu.change", Severity::kWarn, id + " " + n.name, std::to_string(*old->mtu), std::to_string(*n.mtu),
                   fmt::format("the MTU of {} on {} changed from {} to {}", n.name, id, *old->mtu, *n.mtu)});
  }
}

}  // namespace

model::BaselineDiff DiffBundles(const BundleEvidence& before, const BundleEvidence& after, double slower_threshold) {
  model::BaselineDiff diff;
  diff.baseline = before.source;
  diff.baseline_created_at = before.manifest.created_at;
  diff.slower_threshold = slower_threshold;
  auto& out = diff.changes;
  std::set<std::string> old_ids, new_ids;
  for (const auto& m : before.manifest.members) old_ids.insert(m.id);
  for (const auto& m : after.manifest.members) new_ids.insert(m.id);
  for (const auto& id : new_ids) {
    if (!old_ids.count(id)) {
      out.push_back({"member.added", Severity::kInfo, id, "", "present", id + " is new since the baseline"});
    }
  }
  for (const auto& id : old_ids) {
    if (!new_ids.count(id)) {
      out.push_back({"member.gone", Severity::kWarn, id, "present", "", id + " was in the baseline and is gone"});
    }
  }
  for (const auto& r : after.manifest.rungs) {
    const model::RungResult* old = before.Rung(r.id);
    if (!old) continue;
    bool was_ok = old->verdict == model::RungVerdict::kPass || old->verdict == model::RungVerdict::kWarn;
    if (was_ok && r.verdict == model::RungVerdict::kFail) {
      out.push_back({"rung.regressed", Severity::kFail, r.id, std::string(model::RungVerdictName(old->verdict)),
                     "fail", fmt::format("rung {} passed in the baseline and fails now: {}", r.id, r.reason)});
    }
  }
  auto old_pairs = L3Pairs(before);
  for (const auto& [key, now] : L3Pairs(after)) {
    auto it = old_pairs.find(key);
    if (it == old_pairs.end()) continue;
    const model::PairTest* was = it->second;
    std::string object = fmt::format("{} -> {} rail {}", now->a, now->b, now->rail);
    if (was->rdma && !now->rdma && !now->transport.empty()) {
      out.push_back({"pair.rdma-lost", Severity::kFail, object, was->transport, now->transport,
                     fmt::format("{} ran over {} in the baseline and over {} now", object, was->transport,
                                 now->transport)});
      continue;
    }
    if (!was->bw_gbps || !now->bw_gbps || *was->bw_gbps <= 0) continue;
    double ratio = *now->bw_gbps / *was->bw_gbps;
    if (ratio < 1 - slower_threshold) {
      out.push_back({"pair.slower", now->verdict == model::RungVerdict::kFail ? Severity::kFail : Severity::kWarn,
                     object, fmt::format("{:.0f} Gb/s", *was->bw_gbps), fmt::format("{:.0f} Gb/s", *now->bw_gbps),
                     fmt::format("{} lost {:.0f}% of its bandwidth", object, (1 - ratio) * 100)});
    }
  }
  for (const auto& id : new_ids) {
    const model::Inventory* a = before.InventoryOf(id);
    const model::Inventory* b = after.InventoryOf(id);
    if (!a || !b) continue;
    ComparePci(id, *a, *b, out);
    CompareMtu(id, *a, *b, out);
  }
  auto old_counters = CounterTotals(before);
  for (const auto& [key, delta] : CounterTotals(after)) {
    if (old_counters.count(key)) continue;
    out.push_back({"counter.rising", Severity::kWarn, key, "0", fmt::format("+{}", delta),
                   fmt::format("{} rose by {} during the run; it did not move in the baseline", key, delta)});
  }
  std::stable_sort(out.begin(), out.end(), [](const BaselineChange& x, const BaselineChange& y) {
    return SeverityRank(x.severity) < SeverityRank(y.severity);
  });
  return diff;
}

}  // namespace fabcheck::report
