// The baseline groups of rungs L3 and L4 (ladder/baselines.h says which):
// after the rung, on members that passed it, one representative test per
// scope within --baseline-timeout. L3 groups run perf directions over the
// agents' POST /v1/test like the rung's pairs; L4 groups run one `coll` job
// each over POST /v1/coll, with NCCL_NET_GDR_LEVEL or NCCL_IB_HCA set for the
// GPUDirect-off and one-rail groups.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "base/strings.h"
#include "ladder/baselines.h"
#include "ladder/coll_judge.h"
#include "ladder/internal.h"
#include "ladder/judge.h"
#include "net/auth.h"

namespace fabcheck::ladder::internal {
namespace {

using model::BaselineGroup;
using model::RungVerdict;

// Why no group of the rung runs at all ("" when they may).
std::string GroupsBlockedBy(const Run& run, const model::RungResult& r) {
  if (run.Stopped()) return "interrupted (Ctrl-C) before the baseline groups";
  if (r.verdict == RungVerdict::kFail && !run.options.keep_going) {
    return r.id + " failed: baselines are measured on members that pass it (--keep-going measures them on those)";
  }
  return "";
}

std::vector<std::string> BaselineCandidateIds(const Run& run, const model::RungResult& r) {
  std::vector<std::string> out;
  for (const auto& id : r.verdict == RungVerdict::kNotRun ? r.members : r.members_passed) {
    const Member* m = run.Find(id);
    if (m && m->alive) out.push_back(id);
  }
  return out;
}

// A group that is another's measurement takes its verdict.
void TakeSameAsVerdicts(std::vector<BaselineGroup>& groups) {
  for (auto& g : groups) {
    if (g.same_as.empty()) continue;
    for (const auto& e : groups) {
      if (e.scope != g.same_as) continue;
      g.verdict = e.verdict;
      // Its figures are the other group's; a reason it did not run is repeated.
      g.reason = fmt::format("the {} group's measurement (the same test){}", e.scope,
                               e.verdict == RungVerdict::kNotRun ? ": " + e.reason : "");
    }
  }
}

// A failing group fails the rung (the members still pass: it proves a
// scope, not a member) and is named in a finding.
void FailRungOn(model::RungResult& r, const BaselineGroup& g) {
  if (g.verdict != RungVerdict::kFail || !g.same_as.empty()) return;
  model::Finding f;
  f.id = "ladder.baseline.fail";
  f.severity = model::Severity::kFail;
  f.group = r.id;
  f.object = fmt::format("{} ({} baseline)", Join(g.members, " -> "), g.scope);
  f.member = g.members.empty() ? "" : g.members.front();
  f.subject = g.members.size() > 1 ? "pair" : "node";
  f.message = fmt::format("the {} baseline group fails: {}", g.scope, g.reason);
  for (const auto& p : g.pairs) {
    if (p.verdict == RungVerdict::kFail) f.evidence.push_back(fmt::format("{} -> {} rail {}: {}", p.a, p.b, p.rail, p.reason));
  }
  for (const auto& c : g.collectives) {
    if (c.verdict == RungVerdict::kFail) f.evidence.push_back(c.op + ": " + c.reason);
  }
  for (const auto& n : g.nccl) {
    if (n.verdict == RungVerdict::kFail) f.evidence.push_back(n.member + ": " + n.reason);
  }
  f.remedy = g.members.size() > 1
                 ? "the scope's path is slower than its members' ports allow: run `fabcheck perf` between them and "
                   "read both ends' counters; across racks look at the uplinks (`fabcheck sweep --topology FILE`)"
                 : "run `fabcheck doctor` on the member (PCIe, NUMA, GPU/NIC affinity)";
  if (r.verdict != RungVerdict::kFail) {
    r.verdict = RungVerdict::kFail;
    r.reason = f.message;
  } else {
    r.reason += "; " + f.message;
  }
  r.findings.push_back(std::move(f));
}

std::optional<double> TcpBest(const model::RungResult& r) {
  std::vector<double> tcp;
  for (const auto& p : r.pairs) {
    if (!p.rdma && p.bw_gbps) tcp.push_back(*p.bw_gbps);
  }
  if (tcp.size() < 3) return std::nullopt;  // as the rung: two figures cannot say which is slow
  return *std::max_element(tcp.begin(), tcp.end());
}

std::string PerfSummary(const BaselineGroup& g) {
  // Bandwidth per direction, summed over the rails measured at once.
  std::map<std::pair<std::string, std::string>, double> per_direction;
  std::vector<double> p50, p99;
  for (const auto& p : g.pairs) {
    if (p.bw_gbps) per_direction[{p.a, p.b}] += *p.bw_gbps;
    if (p.lat_p50_us) p50.push_back(*p.lat_p50_us);
    if (p.lat_p99_us) p99.push_back(*p.lat_p99_us);
  }
  std::vector<std::string> parts;
  for (const auto& [dir, bw] : per_direction) parts.push_back(fmt::format("{} -> {} {:.1f} Gb/s", dir.first, dir.second, bw));
  std::string out = Join(parts, ", ");
  if (g.rails.size() > 1 && g.members.size() > 1) out += fmt::format(" ({} rails at once)", g.rails.size());
  if (!p50.empty()) out += fmt::format("; latency p50 {:.2f} us, p99 {:.2f} us", Median(p50), Median(p99));
  const bool tcp = std::any_of(g.pairs.begin(), g.pairs.end(), [](const auto& p) { return !p.transport.empty() && !p.rdma; });
  if (tcp && g.members.size() == 1) out += " (over TCP a node's test with itself stays in the kernel: no evidence of the fabric)";
  for (const auto& p : g.pairs) {
    if (p.verdict == RungVerdict::kFail || p.verdict == RungVerdict::kWarn) {
      out += fmt::format("; {} -> {} rail {}: {}", p.a, p.b, p.rail, p.reason);
      break;
    }
  }
  return out.empty() ? "nothing was measured" : out;
}

void MeasurePerfGroup(Run& run, const model::RungResult& r, BaselineGroup& g, std::optional<double> tcp_best) {
  Member* a = run.Find(g.members.front());
  Member* b = run.Find(g.members.back());
  if (!a || !b || !a->alive || !b->alive) {
    g.reason = "a member stopped answering before its turn";
    return;
  }
  const std::string dir = bundle::RungDir(r.id);
  auto file = [&](const Member& x, const Member& y, int rail) {
    return fmt::format("{}/baseline-{}-{}-{}-rail{}.json", dir, g.scope, bundle::SafeSegment(x.m.id),
                       bundle::SafeSegment(y.m.id), rail);
  };
  const bool declared_rails = a->info && !a->info->rails.empty();
  if (a == b) {
    // One node: from its rail rails[0] to its rail rails[1] (the same NIC when it has one).
    g.pairs.push_back(MeasurePerfDirection(run, *a, *a, g.rails[0], g.rails[1], declared_rails, r.id,
                                           file(*a, *a, g.rails[0]), tcp_best));
  } else {
    // Both directions, one after the other; every rail of the group at once.
    for (const auto& ends : {std::pair{a, b}, std::pair{b, a}}) {
      Member* from = ends.first;
      Member* to = ends.second;
      std::vector<model::PairTest> measured(g.rails.size());
      ParallelFor(g.rails.size(), g.rails.size(), [&](size_t i) {
        measured[i] = MeasurePerfDirection(run, *from, *to, g.rails[i], g.rails[i],
                                           g.rails.size() > 1 || declared_rails, r.id, file(*from, *to, g.rails[i]),
                                           tcp_best);
      });
      g.pairs.insert(g.pairs.end(), measured.begin(), measured.end());
      if (run.Stopped()) break;
    }
  }
  g.verdict = PairsVerdict(g.pairs);
  g.reason = PerfSummary(g);
}

void MeasureCollGroup(Run& run, const model::RungResult& r, BaselineGroup& g,
                      const std::vector<BaselineCandidate>& candidates, double timeout_s) {
  std::vector<std::pair<std::string, int>> gpus;
  for (const auto& id : g.members) {
    const Member* m = run.Find(id);
    if (!m || !m->alive || !m->inventory) {
      g.reason = id + " stopped answering before its turn";
      return;
    }
    gpus.emplace_back(id, static_cast<int>(m->inventory->gpus.size()));
  }
  auto token = net::RandomToken();
  if (!token.ok()) {
    g.verdict = RungVerdict::kFail;
    g.reason = "cannot make the ranks' token: " + token.status().message();
    return;
  }
  const LadderOptions& o = run.options;
  CollJobSpec spec;
  spec.plan = PlanCollRanks(gpus);
  spec.ops = o.coll_ops;
  spec.sizes = o.coll_sizes;
  spec.iters = std::min(o.coll_iters, kBaselineCollIters);
  spec.warmup = std::min(o.coll_warmup, kBaselineCollWarmup);
  spec.timeout_s = timeout_s;
  spec.token = *token;
  spec.coordinator = fmt::format("{}:{}", run.Find(g.members.front())->endpoint.host, o.coll_port);
  spec.member_subdir = "L4/baseline-" + g.scope;
  spec.report_file = "L4/baseline-" + g.scope + "/coll.json";
  const bool gdr_off = g.scope == kScopeGdrOff;
  if (gdr_off) spec.gdr_level = kGdrOffLevel;
  const bool one_rail = g.scope == kScopeOneRail && !g.settings.empty();
  int rails = 1;
  if (one_rail) {
    rails = 1 << 20;
    for (const auto& c : candidates) {
      if (std::find(g.members.begin(), g.members.end(), c.id) == g.members.end()) continue;
      spec.ib_hca[c.id] = OneRailHca(c);
      rails = std::min(rails, std::max(1, c.rails));
    }
  }
  CollJobOutcome job = RunCollJob(run, spec, r.id, /*progress=*/false);
  g.evidence_files = job.evidence_files;
  g.nccl = job.nccl;
  if (!job.report) {
    g.verdict = job.could_not_run ? RungVerdict::kNotRun : RungVerdict::kFail;
    g.reason = fmt::format("the collectives did not run ({} rank(s)): {}", job.world,
                           job.problems.empty() ? "rank 0 printed no report" : job.problems.front());
    return;
  }
  const bool multi_node = g.members.size() > 1;
  CollExpectationLine line = NicExpectation(job.inventories, kCollPassFraction);
  if (one_rail && line.busbw_gbps) {
    // One HCA of `rails` alike ones carries the job.
    line.busbw_gbps = *line.busbw_gbps / rails;
    line.basis = fmt::format("{}, one rail of {}", line.basis, rails);
  }
  // GPUDirect off is the other side of an A/B: its figure is compared with
  // gdr-on, not held to the line.
  if (gdr_off) line = {};
  g.collectives = JudgeCollectives(*job.report, line, multi_node);
  for (auto& n : g.nccl) {
    if (!gdr_off) continue;
    if (n.gpudirect) {
      n.verdict = RungVerdict::kWarn;
      n.reason = "NCCL_NET_GDR_LEVEL=LOC did not turn GPUDirect RDMA off: the A/B compares nothing";
    } else if (n.verdict == RungVerdict::kWarn) {
      n.verdict = RungVerdict::kPass;
      n.reason = "NET/IB through host memory, as this group asks (GPUDirect RDMA off)";
    }
  }
  RungVerdict v = RungVerdict::kPass;
  auto worse = [&](RungVerdict x) {
    if (x == RungVerdict::kFail || (x == RungVerdict::kWarn && v == RungVerdict::kPass)) v = x;
  };
  std::vector<std::string> figures, problems = job.problems;
  for (const auto& c : g.collectives) {
    worse(c.verdict);
    figures.push_back(fmt::format("{} {:.1f} GB/s", c.op, c.busbw_gbps));
    if (c.verdict == RungVerdict::kFail) problems.push_back(c.op + ": " + c.reason);
  }
  for (const auto& n : g.nccl) {
    worse(n.verdict);
    if (n.verdict == RungVerdict::kFail || n.verdict == RungVerdict::kWarn) problems.push_back(n.member + ": " + n.reason);
  }
  if (!job.problems.empty()) v = RungVerdict::kFail;
  g.verdict = v;
  g.reason = fmt::format("{} rank(s) on {}: {}{}", job.world, Join(g.members, ", "), Join(figures, ", "),
                         problems.empty() ? "" : "; " + problems.front());
}

template <typename Measure>
void RunGroups(Run& run, model::RungResult& r, std::vector<BaselineGroup> groups, Measure measure) {
  const std::string blocked = GroupsBlockedBy(run, r);
  const auto start = Clock::now();
  const double cap = run.options.baseline_timeout_s;
  const size_t total = std::count_if(groups.begin(), groups.end(), ToMeasure);
  size_t done = 0;
  const std::string label = r.id + " baselines";
  if (blocked.empty() && total > 0) run.Progress(label, static_cast<int>(r.members_passed.size()), 0, total, start);
  for (auto& g : groups) {
    if (!ToMeasure(g)) continue;
    if (!blocked.empty()) {
      g.reason = blocked;
      continue;
    }
    const double spent = std::chrono::duration<double>(Clock::now() - start).count();
    if (run.Stopped() || spent >= cap) {
      g.reason = run.Stopped() ? "interrupted (Ctrl-C) before this group"
                               : fmt::format("not run: the baseline groups' time cap ({:.0f} s, --baseline-timeout) "
                                             "was spent",
                                             cap);
      continue;
    }
    const auto t0 = Clock::now();
    measure(g, cap - spent);
    g.elapsed_s = std::chrono::duration<double>(Clock::now() - t0).count();
    run.Progress(label, static_cast<int>(g.members.size()), ++done, total, start);
  }
  TakeSameAsVerdicts(groups);
  for (const auto& g : groups) FailRungOn(r, g);
  r.baselines = std::move(groups);
}

}  // namespace

void RunPerfBaselines(Run& run, model::RungResult& r) {
  if (!run.options.baselines) return;
  std::vector<BaselineCandidate> candidates;
  for (const auto& id : BaselineCandidateIds(run, r)) {
    const Member* m = run.Find(id);
    candidates.push_back({id, m->m.rack, std::max<int>(1, m->info ? static_cast<int>(m->info->rails.size()) : 1), {}});
  }
  auto groups = FormBaselineGroups(BaselineRung::kPerf, candidates, r.id);
  const auto best = TcpBest(r);
  RunGroups(run, r, std::move(groups), [&](BaselineGroup& g, double) { MeasurePerfGroup(run, r, g, best); });
}

void RunCollBaselines(Run& run, model::RungResult& r) {
  if (!run.options.baselines) return;
  std::vector<BaselineCandidate> candidates;
  for (const auto& id : BaselineCandidateIds(run, r)) {
    const Member* m = run.Find(id);
    BaselineCandidate c{id, m->m.rack, 1, {}};
    if (m->inventory) {
      const std::vector<control::RailInfo> none;
      const auto& rails = m->info ? m->info->rails : none;
      for (size_t i = 0; i < m->inventory->rdma_devices.size(); ++i) {
        std::string device = CapacityOf(*m->inventory, rails, static_cast<int>(i)).device;
        if (!device.empty() && std::find(c.hcas.begin(), c.hcas.end(), device) == c.hcas.end()) c.hcas.push_back(device);
      }
      c.rails = std::max<int>(1, static_cast<int>(c.hcas.size()));
    }
    candidates.push_back(std::move(c));
  }
  auto groups = FormBaselineGroups(BaselineRung::kColl, candidates, r.id);
  if (r.verdict == RungVerdict::kNotRun) {
    // The rung's own job could not run (no GPU, no CUDA or NCCL): neither can its groups.
    for (auto& g : groups) {
      if (ToMeasure(g)) g.reason = r.id + " did not run: " + r.reason;
    }
    TakeSameAsVerdicts(groups);
    r.baselines = std::move(groups);
    return;
  }
  const double job_cap = run.options.coll_timeout_s;
  RunGroups(run, r, std::move(groups), [&](BaselineGroup& g, double left) {
    MeasureCollGroup(run, r, g, candidates, std::min(job_cap, left));
  });
}

}  // namespace fabcheck::ladder::internal
