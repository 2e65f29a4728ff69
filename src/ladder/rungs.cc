#include "ladder/rungs.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "base/exit_codes.h"
#include "base/strings.h"

namespace fabcheck::ladder {
namespace {

// Which rungs cover each level.
std::vector<std::string> RungsOfLevel(int level) {
  switch (level) {
    case 1: return {std::string(kRungNode), std::string(kRungCluster)};
    case 2: return {std::string(kRungNode), std::string(kRungCluster), std::string(kRungPath)};
    case 3: return {std::string(kRungPerf)};
    case 4: return {std::string(kRungColl)};
  }
  return {};
}

std::optional<int> ParseLevel(std::string_view s) {
  if (s.size() == 2 && (s[0] == 'L' || s[0] == 'l') && s[1] >= '1' && s[1] <= '4') return s[1] - '0';
  return std::nullopt;
}

}  // namespace

const std::vector<std::string>& AllRungs() {
  static const std::vector<std::string> kAll = {std::string(kRungNode), std::string(kRungCluster),
                                                std::string(kRungPath), std::string(kRungPerf),
                                                std::string(kRungColl)};
  return kAll;
}

std::string RungTitle(std::string_view id) {
  if (id == kRungNode) return "L1/L2 per node: inventory and doctor on every member";
  if (id == kRungCluster) return "L1/L2 across nodes: settings that must agree cluster-wide";
  if (id == kRungPath) return "L2 path: path MTU and reachability per pair";
  if (id == kRungPerf) return "L3 RDMA perftest: bandwidth and latency per pair";
  if (id == kRungColl) return "L4 collectives: coll across members and what NCCL really used";
  return std::string(id);
}

Result<std::vector<std::string>> ParseRungSelection(std::string_view text) {
  const std::string kValid =
      "valid: all, L1..L4, a range like L1-L3, or rung IDs L1L2.node, L1L2.cluster, L2.path, L3, L4";
  std::set<std::string> chosen;
  auto parts = Split(text, ',', /*skip_empty=*/true);
  if (parts.empty()) return InvalidArgumentError("--rungs is empty (" + kValid + ")");
  for (const auto& raw : parts) {
    std::string part(Trim(raw));
    if (part == "all") {
      chosen.insert(AllRungs().begin(), AllRungs().end());
      continue;
    }
    if (auto dash = part.find('-'); dash != std::string::npos) {
      auto lo = ParseLevel(std::string_view(part).substr(0, dash));
      auto hi = ParseLevel(std::string_view(part).substr(dash + 1));
      if (!lo || !hi || *lo > *hi) {
        return InvalidArgumentError(fmt::format("--rungs: '{}' is not a range of levels ({})", part, kValid));
      }
      for (int l = *lo; l <= *hi; ++l) {
        for (auto& r : RungsOfLevel(l)) chosen.insert(r);
      }
      continue;
    }
    if (auto level = ParseLevel(part)) {
      for (auto& r : RungsOfLevel(*level)) chosen.insert(r);
      continue;
    }
    if (std::find(AllRungs().begin(), AllRungs().end(), part) == AllRungs().end()) {
      return InvalidArgumentError(fmt::format("--rungs: unknown rung '{}' ({})", part, kValid));
    }
    chosen.insert(part);
  }
  std::vector<std::string> out;
  for (const auto& r : AllRungs()) {
    if (chosen.count(r)) out.push_back(r);
  }
  return out;
}

StopDecision DecideStop(const model::RungResult& result, const std::vector<std::string>& members, bool keep_going) {
  StopDecision d;
  if (result.verdict == model::RungVerdict::kNotRun) {
    d.next_members = members;
    return d;
  }
  std::set<std::string> passed(result.members_passed.begin(), result.members_passed.end());
  for (const auto& m : members) {
    (passed.count(m) ? d.next_members : d.dropped).push_back(m);
  }
  if (result.verdict == model::RungVerdict::kFail && !keep_going) d.stop = true;
  if (d.next_members.empty()) d.stop = true;
  return d;
}

model::LadderVerdict ComputeVerdict(const std::vector<model::RungResult>& rungs,
                                    const std::vector<std::string>& selected, bool interrupted) {
  model::LadderVerdict v;
  std::set<std::string> asked(selected.begin(), selected.end());
  bool warn = false, fail = false, blocked = false;
  std::vector<std::string> blockers;
  for (const auto& r : rungs) {
    if (r.verdict == model::RungVerdict::kNotRun) {
      v.not_run.push_back(r.id);
      if (asked.count(r.id)) {
        blocked = true;
        blockers.push_back(fmt::format("{} not run: {}", r.id, r.reason.empty() ? "no reason recorded" : r.reason));
      }
      continue;
    }
    if (r.verdict == model::RungVerdict::kFail) {
      fail = true;
      if (v.first_failing_rung.empty()) v.first_failing_rung = r.id;
    }
    if (r.verdict == model::RungVerdict::kWarn) warn = true;
    // An L3 that measured only TCP has not shown that RDMA works.
    if (r.id == kRungPerf && r.verdict != model::RungVerdict::kFail &&
        r.parameters.value("rdma_tested", true) == false) {
      blocked = true;
      blockers.push_back("RDMA not tested: L3 ran " + r.reason);
    }
  }
  if (interrupted) {
    blocked = true;
    blockers.insert(blockers.begin(), "interrupted: the ladder did not finish");
  }
  v.go = !fail && !blocked;
  if (fail) {
    const auto it = std::find_if(rungs.begin(), rungs.end(), [&](const auto& r) { return r.id == v.first_failing_rung; });
    v.summary = fmt::format("NO-GO: first failing rung {}: {}", v.first_failing_rung, it->reason);
    v.exit_code = kExitFailures;
  } else if (blocked) {
    v.summary = "NO-GO: " + Join(blockers, "; ");
    v.exit_code = interrupted ? kExitError : kExitFailures;
  } else {
    std::vector<std::string> ran;
    for (const auto& r : rungs) {
      if (r.verdict != model::RungVerdict::kNotRun) ran.push_back(r.id);
    }
    if (ran.empty()) {
      v.go = false;
      v.summary = "NO-GO: no rung ran";
      v.exit_code = kExitError;
      return v;
    }
    v.summary = fmt::format("GO{}: {} passed", warn ? " with warnings" : "", Join(ran, ", "));
    if (!v.not_run.empty()) v.summary += fmt::format(" ({} not asked for)", Join(v.not_run, ", "));
    v.exit_code = warn ? kExitWarnings : kExitOk;
  }
  return v;
}

}  // namespace fabcheck::ladder
