// Rung L4: one `fabcheck coll` job across the members (every GPU a rank),
// asked of each member's agent at once (POST /v1/coll, coll_service.h), then
// judged: busbw of each collective against what the members' NICs allow, and
// what NCCL really used on each member, read from its own log. A member
// without a GPU makes the rung "not run" with the members named, never a pass.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "base/log.h"
#include "base/strings.h"
#include "diagnose/engine.h"
#include "ladder/coll_judge.h"
#include "agent/coll_service.h"
#include "ladder/internal.h"
#include "logs/nccl_log.h"
#include "net/auth.h"

namespace fabcheck::ladder::internal {
namespace {

using agent::CollRankRequest;

// The ranks of one member, as its agent answered.
struct MemberRun {
  std::optional<nlohmann::json> answer;
  std::string error;  // the call failed
};

}  // namespace

CollJobOutcome RunCollJob(Run& run, const CollJobSpec& spec, const std::string& rung, bool progress) {
  CollJobOutcome out;
  const auto& plan = spec.plan;
  out.world = WorldOf(plan);
  // Every rank must be running at once (they meet before anything runs), so
  // all members are asked together, whatever --fan-out says.
  std::vector<MemberRun> runs(plan.size());
  const auto start = Clock::now();
  std::atomic<size_t> done{0};
  const auto call_timeout = std::chrono::milliseconds(static_cast<int64_t>((spec.timeout_s + 60) * 1000));
  ParallelFor(plan.size(), plan.size(), [&](size_t i) {
    Member* m = run.Find(plan[i].member);
    CollRankRequest request;
    request.first_rank = plan[i].first_rank;
    request.nprocs = plan[i].nprocs;
    request.world = out.world;
    request.coordinator = spec.coordinator;
    request.token = spec.token;
    request.ops = spec.ops;
    request.sizes = spec.sizes;
    request.iters = spec.iters;
    request.warmup = spec.warmup;
    request.timeout_s = spec.timeout_s;
    request.gdr_level = spec.gdr_level;
    if (auto hca = spec.ib_hca.find(plan[i].member); hca != spec.ib_hca.end()) request.ib_hca = hca->second;
    auto answer = run.Client(*m).Coll(ToJson(request), call_timeout);
    if (answer.ok()) {
      runs[i].answer = std::move(*answer);
    } else {
      runs[i].error = answer.status().message();
      run.CheckAlive(*m, answer.status(), rung);
    }
    if (progress) run.Progress(rung, static_cast<int>(plan.size()), ++done, plan.size(), start);
  });

  // Evidence: each member's answer (less the logs) and NCCL logs; rank 0's report.
  const bool multi_node = plan.size() > 1;
  for (size_t i = 0; i < plan.size(); ++i) {
    Member* m = run.Find(plan[i].member);
    out.inventories.push_back(m->inventory ? &*m->inventory : nullptr);
    const std::string dir = bundle::MemberDir(m->m.id) + "/" + spec.member_subdir;
    if (!runs[i].answer) {
      out.problems.push_back(fmt::format("{}: {}", m->m.id, runs[i].error));
      continue;
    }
    nlohmann::json& a = *runs[i].answer;
    logs::NcclLogParser parser;
    if (a.contains("nccl_logs") && a["nccl_logs"].is_object()) {
      for (const auto& [name, text] : a["nccl_logs"].items()) {
        if (!text.is_string()) continue;
        const std::string path = dir + "/" + bundle::SafeSegment(name);
        parser.AddText(text.get_ref<const std::string&>(), path);
        if (run.Write(path, text.get_ref<const std::string&>())) out.evidence_files.push_back(path);
      }
      a.erase("nccl_logs");
    }
    if (a.contains("report")) {
      out.report = a["report"];
      if (run.WriteJson(spec.report_file, *out.report)) out.evidence_files.push_back(spec.report_file);
      a.erase("report");
    }
    if (run.WriteJson(dir + "/ranks.json", a)) out.evidence_files.push_back(dir + "/ranks.json");
    if (a.contains("errors") && a["errors"].is_array()) {
      for (const auto& e : a["errors"]) {
        if (e.is_string()) out.problems.push_back(fmt::format("{}: {}", m->m.id, e.get<std::string>()));
      }
    }
    model::NcclLogSummary summary = parser.Finish();
    auto findings = diagnose::NcclLogFindings(summary);
    out.nccl.push_back(CheckNcclTransport(m->m.id, summary, findings, multi_node));
  }
  out.could_not_run = !out.problems.empty() && std::all_of(out.problems.begin(), out.problems.end(), [](const std::string& p) {
    return p.find("exit 3") != std::string::npos;
  });
  return out;
}

void RunCollRung(Run& run, const std::vector<std::string>& ids, model::RungResult& r) {
  FetchNodeFacts(run, ids, r.id);
  const LadderOptions& o = run.options;
  r.parameters = {{"ops", o.coll_ops},         {"sizes", o.coll_sizes},      {"iters", o.coll_iters},
                  {"warmup", o.coll_warmup},   {"port", o.coll_port},        {"timeout_s", o.coll_timeout_s},
                  {"pass_fraction", kCollPassFraction}};
  std::vector<std::string> without_gpu, unknown;
  std::vector<std::pair<std::string, int>> gpus;
  for (const auto& id : ids) {
    const Member* m = run.Find(id);
    if (!m || !m->alive) continue;
    if (!m->inventory) unknown.push_back(id);
    else if (m->inventory->gpus.empty()) without_gpu.push_back(id);
    else gpus.emplace_back(id, static_cast<int>(m->inventory->gpus.size()));
  }
  r.verdict = model::RungVerdict::kNotRun;
  if (!unknown.empty()) {
    r.reason = fmt::format("the GPUs of {} are unknown (no inventory)", Join(unknown, ", "));
    return;
  }
  if (!without_gpu.empty()) {
    r.reason = without_gpu.size() == ids.size()
                   ? "no GPU on any member"
                   : fmt::format("no GPU on {} of {} members: {}", without_gpu.size(), ids.size(), Join(without_gpu, ", "));
    return;
  }
  const auto plan = PlanCollRanks(gpus);
  const int world = WorldOf(plan);
  if (plan.empty()) {
    r.reason = "no member left to run it";
    return;
  }
  auto token = net::RandomToken();
  if (!token.ok()) {
    r.verdict = model::RungVerdict::kFail;
    r.reason = "cannot make the ranks' token: " + token.status().message();
    return;
  }
  const Member* first = run.Find(plan.front().member);
  const std::string coordinator = fmt::format("{}:{}", first->endpoint.host, o.coll_port);
  r.parameters["world"] = world;
  r.parameters["coordinator"] = coordinator;

  CollJobSpec spec;
  spec.plan = plan;
  spec.ops = o.coll_ops;
  spec.sizes = o.coll_sizes;
  spec.iters = o.coll_iters;
  spec.warmup = o.coll_warmup;
  spec.timeout_s = o.coll_timeout_s;
  spec.token = *token;
  spec.coordinator = coordinator;
  spec.member_subdir = "L4";
  spec.report_file = "L4/coll.json";
  CollJobOutcome job = RunCollJob(run, spec, r.id, /*progress=*/true);
  r.evidence_files.insert(r.evidence_files.end(), job.evidence_files.begin(), job.evidence_files.end());
  r.nccl = job.nccl;
  const bool multi_node = plan.size() > 1;
  const auto& problems = job.problems;
  const auto& report = job.report;
  const auto& inventories = job.inventories;

  if (!report) {
    // Nothing measured: every member's own words say why (no CUDA, no NCCL,
    // a rank that never arrived).
    const bool could_not_run = job.could_not_run;
    r.verdict = could_not_run ? model::RungVerdict::kNotRun : model::RungVerdict::kFail;
    r.reason = fmt::format("the collectives did not run ({} rank(s) on {} member(s)): {}", world, plan.size(),
                           problems.empty() ? "rank 0 printed no report" : problems.front());
    for (const auto& p : problems) {
      model::Finding f;
      f.id = "ladder.coll.ranks";
      f.severity = could_not_run ? model::Severity::kUnknown : model::Severity::kFail;
      f.group = r.id;
      f.object = p.substr(0, p.find(':'));
    f.member = f.object;
      f.member = f.object;
      f.message = "the member's collective ranks did not complete";
      f.evidence = {p};
      f.remedy = could_not_run ? "L4 needs CUDA and NCCL on every member: install libnccl2 and the CUDA driver, or run "
                                 "`fabcheck coll` on one node to see what is missing"
                               : "read the member's L4/ files in the bundle (stderr of each rank and NCCL's log); "
                                 "`fabcheck diagnose BUNDLE` names the cause";
      r.findings.push_back(std::move(f));
    }
    return;
  }

  r.collectives = JudgeCollectives(*report, NicExpectation(inventories, kCollPassFraction), multi_node);
  for (const auto& p : problems) {
    model::Finding f;
    f.id = "ladder.coll.ranks";
    f.severity = model::Severity::kFail;
    f.group = r.id;
    f.object = p.substr(0, p.find(':'));
    f.member = f.object;
    f.message = "a rank of this member failed";
    f.evidence = {p};
    f.remedy = "read the member's L4/ files in the bundle; `fabcheck diagnose BUNDLE` names the cause";
    r.findings.push_back(std::move(f));
  }
  // A member passes when its NCCL used the path it should and none of its
  // ranks failed; a collective that failed fails every member it ran on.
  std::vector<std::string> failed_members;
  for (const auto& n : r.nccl) {
    if (n.verdict == model::RungVerdict::kFail) failed_members.push_back(n.member);
  }
  for (const auto& p : problems) failed_members.push_back(p.substr(0, p.find(':')));
  const bool collective_failed = std::any_of(r.collectives.begin(), r.collectives.end(), [](const auto& c) {
    return c.verdict == model::RungVerdict::kFail;
  });
  const bool warned = std::any_of(r.nccl.begin(), r.nccl.end(),
                                  [](const auto& n) { return n.verdict == model::RungVerdict::kWarn; });
  for (const auto& b : plan) {
    if (!collective_failed && std::find(failed_members.begin(), failed_members.end(), b.member) == failed_members.end()) {
      r.members_passed.push_back(b.member);
    }
  }
  std::vector<std::string> reasons;
  for (const auto& c : r.collectives) {
    if (c.verdict == model::RungVerdict::kFail) reasons.push_back(c.op + ": " + c.reason);
  }
  for (const auto& n : r.nccl) {
    if (n.verdict == model::RungVerdict::kFail) reasons.push_back(n.member + ": " + n.reason);
  }
  if (!reasons.empty() || !problems.empty()) {
    r.verdict = model::RungVerdict::kFail;
    if (reasons.empty()) reasons.push_back(problems.front());
    r.reason = Join(reasons, "; ");
  } else {
    r.verdict = warned ? model::RungVerdict::kWarn : model::RungVerdict::kPass;
    std::vector<std::string> figures;
    for (const auto& c : r.collectives) figures.push_back(fmt::format("{} {:.1f} GB/s", c.op, c.busbw_gbps));
    r.reason = fmt::format("{} rank(s) on {} member(s): {}", world, plan.size(), Join(figures, ", "));
  }
}

}  // namespace fabcheck::ladder::internal
