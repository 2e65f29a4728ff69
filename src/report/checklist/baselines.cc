// 7. ib_write_bw/lat and NCCL Tests have single-node, same-rack, and cross-rack
// baselines. Read from the baseline groups the ladder runs after L3 (perf) and
// L4 (NCCL): single node, two nodes, same rack, cross rack, one rail, all
// rails, and in L4 GPUDirect RDMA on/off (docs/ladder.md). Every scope needs
// a passing group over RDMA, or the reason this cluster cannot form it (one
// rack, one rail, one member). A failing group fails the item; a group not
// run, measured over TCP only (or NCCL without GPUDirect where it should
// have it), or one whose racks are unknown leaves it unknown, with what to
// run to fill it.
#include <fmt/format.h>

#include <algorithm>

#include "base/strings.h"
#include "report/checklist.h"

namespace fabcheck::report {
namespace {

using model::BaselineGroup;
using model::RungVerdict;

// The scopes each rung must cover, in the ladder's order.
const std::vector<std::string> kPerfScopes = {"single-node", "two-nodes", "same-rack", "cross-rack", "one-rail",
                                              "all-rails"};
const std::vector<std::string> kCollScopes = {"single-node", "two-nodes", "same-rack", "cross-rack",
                                              "one-rail",    "all-rails", "gdr-on",    "gdr-off"};

enum class GroupStanding { kBaseline, kNotApplicable, kMissing, kFailed };

struct JudgedGroup {
  GroupStanding standing = GroupStanding::kMissing;
  std::string line;  // evidence
};

const BaselineGroup* FindGroup(const model::RungResult* rung, const std::string& scope) {
  if (!rung) return nullptr;
  for (const auto& g : rung->baselines) {
    if (g.scope == scope) return &g;
  }
  return nullptr;
}

JudgedGroup JudgeGroup(const std::string& kind, const BaselineGroup& g) {
  const std::string who = g.members.empty() ? "" : " (" + Join(g.members, ", ") + ")";
  const std::string settings = g.settings.empty() ? "" : " [" + Join(g.settings, "; ") + "]";
  JudgedGroup j;
  if (!g.applicable) {
    j.standing = GroupStanding::kNotApplicable;
    j.line = fmt::format("{} {}: not applicable: {}", kind, g.scope, g.reason);
    return j;
  }
  j.line = fmt::format("{} {}{}{}: {}: {}", kind, g.scope, who, settings, model::RungVerdictName(g.verdict), g.reason);
  if (g.verdict == RungVerdict::kFail) j.standing = GroupStanding::kFailed;
  else if (g.verdict == RungVerdict::kPass) j.standing = GroupStanding::kBaseline;
  else j.standing = GroupStanding::kMissing;  // not run, or warn: measured over TCP, NCCL without the path it should use
  return j;
}

// Busbw of the same collective with and without GPUDirect RDMA.
std::vector<std::string> GdrComparison(const model::RungResult* l4) {
  const BaselineGroup* on = FindGroup(l4, "gdr-on");
  const BaselineGroup* off = FindGroup(l4, "gdr-off");
  if (!on || !off) return {};
  if (!on->same_as.empty()) on = FindGroup(l4, on->same_as);
  if (!on) return {};
  std::vector<std::string> out;
  for (const auto& a : on->collectives) {
    for (const auto& b : off->collectives) {
      if (a.op != b.op || a.busbw_gbps <= 0 || b.busbw_gbps <= 0) continue;
      out.push_back(fmt::format("GPUDirect A/B {}: {:.1f} GB/s with GPUDirect RDMA, {:.1f} GB/s without "
                                "(NCCL_NET_GDR_LEVEL=LOC): {:.2f}x",
                                a.op, a.busbw_gbps, b.busbw_gbps, a.busbw_gbps / b.busbw_gbps));
    }
  }
  return out;
}

}  // namespace

model::ChecklistItem CheckBaselines(const BundleEvidence& e) {
  auto item = checklist::NewItem(7);
  item.rungs = {"L3", "L4"};
  const auto* l3 = e.Rung("L3");
  const auto* l4 = e.Rung("L4");
  const bool any = (l3 && !l3->baselines.empty()) || (l4 && !l4->baselines.empty());
  if (!any) {
    item.status = model::ChecklistStatus::kUnknown;
    item.summary = "the bundle records no baseline groups (the ladder ran without L3/L4, with --no-baselines, or "
                   "before it ran them)";
    item.record.push_back("`fabcheck ladder --topology FILE --out BUNDLE` over every member: after L3 and L4 it runs "
                          "the baseline groups (single node, two nodes, same rack, cross rack, one rail, all rails, "
                          "GPUDirect on/off; docs/ladder.md)");
    return item;
  }
  bool failed = false, missing = false;
  size_t baselines = 0, not_applicable = 0;
  auto judge_rung = [&](const char* kind, const model::RungResult* rung, const std::vector<std::string>& scopes,
                        const std::string& fill) {
    for (const auto& scope : scopes) {
      const BaselineGroup* g = FindGroup(rung, scope);
      if (!g) {
        missing = true;
        item.evidence.push_back(fmt::format("{} {}: none", kind, scope));
        item.record.push_back(fmt::format("{} {}: {}", kind, scope, fill));
        continue;
      }
      JudgedGroup j = JudgeGroup(kind, *g);
      item.evidence.push_back(j.line);
      switch (j.standing) {
        case GroupStanding::kBaseline: ++baselines; break;
        case GroupStanding::kNotApplicable: ++not_applicable; break;
        case GroupStanding::kFailed:
          failed = true;
          for (const auto& m : g->members) checklist::AddMember(item, m);
          break;
        case GroupStanding::kMissing:
          missing = true;
          item.record.push_back(fmt::format("{} {}: {}", kind, scope,
                                            g->reason.find("--topology") != std::string::npos ? g->reason : fill));
          break;
      }
    }
  };
  judge_rung("perf", l3, kPerfScopes,
             "rerun `fabcheck ladder --rungs L3 --topology FILE` once the members pass L3 over RDMA");
  judge_rung("NCCL", l4, kCollScopes,
             "rerun `fabcheck ladder --rungs L4 --topology FILE` on GPU members with CUDA and NCCL");
  for (const auto& line : GdrComparison(l4)) item.evidence.push_back(line);
  // A rung that failed: its groups cover only the members that passed it,
  // so the cluster as a whole has no baseline yet (the failing pairs and
  // members are named, as the rung names them).
  std::vector<std::string> failed_rungs;
  if (l3 && l3->verdict == RungVerdict::kFail) {
    failed_rungs.push_back("L3");
    size_t shown = 0, failing = 0;
    for (const auto& p : l3->pairs) {
      if (p.verdict != RungVerdict::kFail) continue;
      ++failing;
      checklist::AddMember(item, p.a);
      checklist::AddMember(item, p.b);
      if (++shown <= 10) {
        item.evidence.push_back(fmt::format("L3 pair {} -> {} rail {}: {}{}", p.a, p.b, p.rail,
                                            p.reason.empty() ? "failed" : p.reason,
                                            p.bw_gbps ? fmt::format(" ({:.0f} Gb/s)", *p.bw_gbps) : ""));
      }
    }
    if (failing > shown) item.evidence.push_back(fmt::format("... and {} more failing L3 pairs", failing - shown));
  }
  if (l4 && l4->verdict == RungVerdict::kFail) {
    failed_rungs.push_back("L4");
    for (const auto& n : l4->nccl) {
      if (n.verdict != RungVerdict::kFail) continue;
      checklist::AddMember(item, n.member);
      item.evidence.push_back(fmt::format("L4 {}: {}", n.member, n.reason));
    }
    for (const auto& c : l4->collectives) {
      if (c.verdict == RungVerdict::kFail) item.evidence.push_back(fmt::format("L4 {}: {}", c.op, c.reason));
    }
  }
  // Records of one scope often share their fix: keep each once.
  std::vector<std::string> record;
  for (auto& r : item.record) {
    if (std::find(record.begin(), record.end(), r) == record.end()) record.push_back(std::move(r));
  }
  item.record = std::move(record);
  if (failed || !failed_rungs.empty()) {
    item.status = model::ChecklistStatus::kFail;
    item.summary = failed ? "some baseline groups fail: the fabric does not deliver in those scopes, so they are no "
                            "baseline"
                          : fmt::format("{} failed: the baseline groups cover only the members that passed, so the "
                                        "cluster has no baseline yet",
                                        Join(failed_rungs, " and "));
    item.remedy = "fix the named groups' path (cables, NIC, switch port or uplink, TCP fallback) and rerun the ladder; "
                  "keep the passing bundle as the baseline (`fabcheck report --baseline` compares later runs with it)";
  } else if (missing) {
    item.status = model::ChecklistStatus::kUnknown;
    item.summary = "baselines are missing for some scopes (see what to record)";
  } else {
    item.status = model::ChecklistStatus::kPass;
    item.summary = fmt::format("perf and NCCL baselines pass in every scope this cluster has ({} groups{})", baselines,
                               not_applicable ? fmt::format(", {} not applicable", not_applicable) : "");
  }
  return item;
}

}  // namespace fabcheck::report
