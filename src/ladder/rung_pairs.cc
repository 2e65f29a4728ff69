// Rungs L2.path (path MTU and reachability) and L3 (perf) between pairs of
// members, over the agents' POST /v1/test, scheduled as the sweep schedules
// its rounds (disjoint pairs per round, both directions in a pair's slot).
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "base/log.h"
#include "base/strings.h"
#include "bundle/correlate.h"
#include "ladder/internal.h"
#include "ladder/judge.h"
#include "ladder/rungs.h"
#include "sweep/runner.h"
#include "sweep/schedule.h"

namespace fabcheck::ladder::internal {
namespace {

int RailCount(const Run& run, const std::vector<std::string>& ids) {
  if (run.options.pattern != "rails") return 1;
  int rails = 1 << 20;
  for (const auto& id : ids) {
    const Member* m = run.Find(id);
    rails = std::min<int>(rails, std::max<size_t>(1, m && m->info ? m->info->rails.size() : 1));
  }
  return rails == (1 << 20) ? 1 : rails;
}

bool HasRdma(const Member& m) { return m.inventory && !m.inventory->rdma_devices.empty(); }

std::string GidOf(const Member& m, const std::string& device) {
  if (!m.inventory || device.empty()) return "";
  const auto* dev = m.inventory->FindRdmaDevice(device);
  if (!dev) return "";
  for (const auto& p : dev->ports) {
    if (!p.nccl_gid_index) continue;
    for (const auto& g : p.gids) {
      if (g.index == *p.nccl_gid_index) return g.gid;
    }
  }
  return "";
}

std::string PairKey(const model::PairTest& p) { return p.a + "\n" + p.b + "\n" + std::to_string(p.rail); }

struct PairPlan {
  std::string transport;  // what to ask for
  std::string why_tcp;    // when it is tcp without being asked
};

PairPlan PlanTransport(const Run& run, const Member& a, const Member& b) {
  const std::string& asked = run.options.transport;
  if (asked == "tcp") return {"tcp", ""};
  if (asked == "verbs") return {"verbs", ""};
  std::vector<std::string> without;
  for (const Member* m : {&a, &b}) {
    if (!HasRdma(*m)) without.push_back(m->m.id);
  }
  if (without.empty()) return {"verbs", ""};
  return {"tcp", fmt::format("no RDMA device on {}", Join(without, ", "))};
}

// Runs the pairs of `ids` by rounds; `measure` runs one direction and
// returns its PairTest (verdict not yet set).
template <typename Measure>
std::vector<model::PairTest> RunPairs(Run& run, const std::vector<std::string>& ids, const std::string& rung,
                                      Measure measure) {
  std::vector<model::PairTest> pairs;
  if (ids.size() < 2) return pairs;
  auto pattern = run.options.pattern == "pairwise" ? sweep::Pattern::kPairwise : sweep::Pattern::kRing;
  auto schedule = sweep::MakeSchedule(pattern, static_cast<int>(ids.size()));
  if (!schedule.ok()) return pairs;
  const int rails = RailCount(run, ids);
  const size_t total = schedule->pair_count() * 2 * static_cast<size_t>(rails);
  const auto start = Clock::now();
  std::atomic<size_t> done{0};
  std::mutex mu;
  for (const auto& round : schedule->rounds) {
    if (run.Stopped()) break;
    size_t width = run.options.parallel_pairs > 0 ? static_cast<size_t>(run.options.parallel_pairs) : round.size();
    ParallelFor(round.size(), width, [&](size_t k) {
      for (int dir = 0; dir < 2; ++dir) {
        const int ia = dir == 0 ? round[k].a : round[k].b, ib = dir == 0 ? round[k].b : round[k].a;
        Member* a = run.Find(ids[ia]);
        Member* b = run.Find(ids[ib]);
        if (run.Stopped() || !a || !b || !a->alive || !b->alive) continue;
        // Every rail of the pair at once, one direction at a time.
        ParallelFor(static_cast<size_t>(rails), static_cast<size_t>(rails), [&](size_t rail) {
          model::PairTest p = measure(*a, *b, static_cast<int>(rail), rails);
          std::lock_guard lock(mu);
          pairs.push_back(std::move(p));
        });
        run.Progress(rung, static_cast<int>(ids.size()), done += rails, total, start);
      }
    });
  }
  std::sort(pairs.begin(), pairs.end(),
            [](const auto& x, const auto& y) { return std::tie(x.a, x.b, x.rail) < std::tie(y.a, y.b, y.rail); });
  return pairs;
}

control::PeerTestRequest BaseRequest(const Run& run, const Member& a, const Member& b, int rail, int rails,
                                     int peer_rail = -1) {
  control::PeerTestRequest req;
  req.peer = b.DataAddress(peer_rail < 0 ? rail : peer_rail);
  req.peer_name = b.m.id;
  req.perf_port = b.info->perf_port;
  req.mtu_port = b.info->mtu_port;
  // Bind to the rail's own address when the agents declared rails.
  if (rails > 1 || (a.info && !a.info->rails.empty())) req.source = a.DataAddress(rail);
  if (req.source == a.endpoint.host && !(a.info && !a.info->rails.empty())) req.source.clear();
  req.bw_size = run.options.bw_size;
  req.bw_duration_s = run.options.bw_duration_s;
  req.lat_duration_s = run.options.lat_duration_s;
  req.streams = run.options.streams;
  if (run.options.test_timeout.count() > 0) req.timeout_ms = static_cast<int>(run.options.test_timeout.count());
  return req;
}

// A pair's result, and the agents' fate: a failed call whose agent no longer
// answers marks it dead (its pairs are its problem, not the link's): then
// *dead is set, the pair is "not run" and must not be judged.
std::optional<control::PeerTestResponse> Call(Run& run, Member& a, Member& b, const control::PeerTestRequest& req,
                                              const std::string& rung, model::PairTest& p, bool* dead) {
  *dead = false;
  const auto timeout =
      run.options.test_timeout.count() > 0 ? run.options.test_timeout + std::chrono::seconds(5) : sweep::TestTimeout(req);
  auto res = run.Client(a).RunTest(req, timeout);
  if (!res.ok()) {
    p.reason = res.status().message();
    p.verdict = model::RungVerdict::kFail;
    if (run.CheckAlive(a, res.status(), rung)) {
      *dead = true;
      p.verdict = model::RungVerdict::kNotRun;
      p.reason = a.m.id + " stopped answering";
    }
    return std::nullopt;
  }
  if (!res->errors.empty()) {
    p.reason = Join(res->errors, "; ");
    if (!run.Client(b).Health().ok()) {
      run.CheckAlive(b, UnavailableError(p.reason), rung);
      *dead = true;
      p.verdict = model::RungVerdict::kNotRun;
      p.reason = b.m.id + " stopped answering";
      return std::nullopt;
    }
  }
  return *res;
}

// One direction a (rail_a) -> b (rail_b), measured, not yet judged. *dead:
// an agent died on the way (the pair is "not run", not judged).
model::PairTest MeasurePerf(Run& run, Member& a, Member& b, int rail_a, int rail_b, bool bind_rail,
                            const std::string& rung, const std::string& file, bool* dead) {
  model::PairTest p;
  p.a = a.m.id;
  p.b = b.m.id;
  p.rail = rail_a;
  PairPlan plan = PlanTransport(run, a, b);
  control::PeerTestRequest req = BaseRequest(run, a, b, rail_a, bind_rail ? 2 : 1, rail_b);
  req.transport = plan.transport;
  req.mtu = false;
  auto res = Call(run, a, b, req, rung, p, dead);
  if (*dead || !res) return p;  // not run, or failed with the reason
  p.transport = res->transport;
  p.rdma = res->transport == "verbs";
  p.device_a = res->device;
  p.bw_gbps = res->bw_gbps;
  p.lat_p50_us = res->lat_median_us;
  p.lat_p99_us = res->lat_p99_us;
  if (p.bw_gbps) p.sweep.push_back({req.bw_size, *p.bw_gbps});
  if (!plan.why_tcp.empty()) p.reason = p.reason.empty() ? plan.why_tcp : plan.why_tcp + "; " + p.reason;
  if (p.rdma && a.inventory && b.inventory) {
    const auto* ra = a.info ? &a.info->rails : nullptr;
    const auto* rb = b.info ? &b.info->rails : nullptr;
    RailCapacity ca = CapacityOf(*a.inventory, ra ? *ra : std::vector<control::RailInfo>{}, rail_a);
    RailCapacity cb = CapacityOf(*b.inventory, rb ? *rb : std::vector<control::RailInfo>{}, rail_b);
    Expectation e = VerbsExpectation(ca, cb, run.options.pass_fraction);
    p.expected_gbps = e.gbps;
    p.expected_basis = e.basis;
    if (p.device_a.empty()) p.device_a = ca.device;
    p.device_b = cb.device;
    p.gid_a = GidOf(a, ca.device);
    p.gid_b = GidOf(b, cb.device);
  }
  nlohmann::json evidence = {{"a", p.a}, {"b", p.b}, {"rail", rail_a}, {"peer_rail", rail_b}, {"request", req},
                             {"response", *res}};
  if (!file.empty() && run.WriteJson(file, evidence)) p.evidence_file = file;
  return p;
}

void Blame(Run& run, const std::vector<std::string>& ids, model::RungResult& r, const char* finding_id,
           const std::string& remedy) {
  auto blamed = BlameMembers(r.pairs);
  std::set<std::string> bad(blamed.begin(), blamed.end());
  for (const auto& id : ids) {
    const Member* m = run.Find(id);
    if (m && m->alive && !bad.count(id)) r.members_passed.push_back(id);
  }
  for (const auto& id : blamed) {
    std::vector<std::string> evidence;
    for (const auto& p : r.pairs) {
      if (p.verdict == model::RungVerdict::kFail && (p.a == id || p.b == id)) {
        evidence.push_back(fmt::format("{} -> {} rail {}: {}", p.a, p.b, p.rail, p.reason));
      }
    }
    model::Finding f;
    f.id = finding_id;
    f.severity = model::Severity::kFail;
    f.group = r.id;
    f.object = id;
    f.member = id;
    f.subject = "node";
    f.message = fmt::format("{} failing pair(s) involve this member", evidence.size());
    f.evidence = std::move(evidence);
    f.remedy = remedy;
    r.findings.push_back(std::move(f));
  }
  // Warnings (TCP only) are one finding for the rung, not one per pair.
  size_t warned = std::count_if(r.pairs.begin(), r.pairs.end(),
                                [](const auto& p) { return p.verdict == model::RungVerdict::kWarn; });
  if (warned > 0) {
    model::Finding f;
    f.id = std::string(finding_id) + "-tcp";
    f.severity = model::Severity::kWarn;
    f.group = r.id;
    f.object = "cluster";
    f.message = fmt::format("{} pair(s) measured over TCP: RDMA not used, so this rung proves nothing about RDMA",
                            warned);
    f.remedy = "run where the members have RDMA devices (and agents that serve verbs); --transport auto picks verbs";
    r.findings.push_back(std::move(f));
  }
  r.verdict = PairsVerdict(r.pairs);
}

}  // namespace

void RunPathRung(Run& run, const std::vector<std::string>& ids, model::RungResult& r) {
  r.parameters = {{"pattern", run.options.pattern == "pairwise" ? "pairwise" : "ring"},
                  {"rails", RailCount(run, ids)}, {"probe", "DF UDP datagrams to the agent's echo"}};
  if (ids.size() < 2) {
    r.verdict = model::RungVerdict::kNotRun;
    r.reason = "needs two members";
    return;
  }
  r.pairs = RunPairs(run, ids, r.id, [&](Member& a, Member& b, int rail, int rails) {
    model::PairTest p;
    p.a = a.m.id;
    p.b = b.m.id;
    p.rail = rail;
    control::PeerTestRequest req = BaseRequest(run, a, b, rail, rails);
    req.bandwidth = false;
    req.latency = false;
    req.mtu = true;
    bool dead = false;
    auto res = Call(run, a, b, req, r.id, p, &dead);
    if (dead) return p;
    if (res) {
      p.path_mtu = res->path_mtu;
      p.local_mtu = res->local_mtu;
      p.device_a = res->device;
    }
    JudgePathPair(p);
    if (res && res->black_hole && p.verdict == model::RungVerdict::kPass) {
      p.verdict = model::RungVerdict::kFail;
      p.reason = "MTU black hole: larger packets vanish without an ICMP error";
    }
    return p;
  });
  Blame(run, ids, r, "ladder.path.fail",
        "make the MTU the same on every hop of the data plane (endpoints, VFs, PFs, switch ports) or fix the route: "
        "ping -M do -s <MTU-28> <peer> shows where it breaks");
  size_t failed = std::count_if(r.pairs.begin(), r.pairs.end(),
                                [](const auto& p) { return p.verdict == model::RungVerdict::kFail; });
  if (r.verdict == model::RungVerdict::kNotRun) {
    r.reason = "no pair could be probed";
  } else if (failed) {
    r.reason = fmt::format("{} of {} direction(s) fail: {}", failed, r.pairs.size(), Join(BlameMembers(r.pairs), ", "));
  } else {
    r.reason = fmt::format("{} direction(s) reachable, every path carries the MTU its sender believes", r.pairs.size());
  }
}

void RunPerfRung(Run& run, const std::vector<std::string>& ids, model::RungResult& r) {
  FetchNodeFacts(run, ids, r.id);
  r.parameters = {{"pattern", run.options.pattern},
                  {"transport", run.options.transport},
                  {"bw_size", run.options.bw_size},
                  {"bw_duration_s", run.options.bw_duration_s},
                  {"lat_duration_s", run.options.lat_duration_s},
                  {"streams", run.options.streams},
                  {"pass_fraction", run.options.pass_fraction},
                  {"rails", RailCount(run, ids)}};
  if (ids.size() < 2) {
    r.verdict = model::RungVerdict::kNotRun;
    r.reason = "needs two members";
    return;
  }
  const std::string dir = bundle::RungDir(r.id);
  std::mutex dead_mu;
  std::set<std::string> dead_pairs;
  r.pairs = RunPairs(run, ids, r.id, [&](Member& a, Member& b, int rail, int rails) {
    const std::string file = fmt::format("{}/{}-{}-rail{}.json", dir, bundle::SafeSegment(a.m.id),
                                         bundle::SafeSegment(b.m.id), rail);
    bool dead = false;
    model::PairTest p = MeasurePerf(run, a, b, rail, rail, rails > 1, r.id, file, &dead);
    if (dead) {
      std::lock_guard lock(dead_mu);
      dead_pairs.insert(PairKey(p));
    }
    return p;
  });
  std::vector<double> tcp;
  for (const auto& p : r.pairs) {
    if (!p.rdma && p.bw_gbps) tcp.push_back(*p.bw_gbps);
  }
  std::optional<double> best;
  if (tcp.size() >= 3) best = *std::max_element(tcp.begin(), tcp.end());  // two figures cannot say which is slow
  for (auto& p : r.pairs) {
    if (dead_pairs.count(PairKey(p)) || (p.verdict == model::RungVerdict::kFail && !p.bw_gbps)) continue;
    JudgePerfPair(p, run.options.transport, best);
  }
  // Latency: the tail of a pair against the rung's typical pair.
  std::vector<double> p50s;
  for (const auto& p : r.pairs) {
    if (p.lat_p50_us) p50s.push_back(*p.lat_p50_us);
  }
  const double p50_median = Median(p50s);
  bool rdma_tested = false;
  for (const auto& p : r.pairs) rdma_tested |= p.rdma;
  r.parameters["rdma_tested"] = rdma_tested;
  Blame(run, ids, r, "ladder.perf.fail",
        "run `fabcheck perf` between the named members and `fabcheck doctor` on them: a slow node shows in all its "
        "pairs (PCIe, NUMA, port rate), a slow link in one");
  if (p50s.size() >= 3 && p50_median > 0) {
    for (const auto& p : r.pairs) {
      if (p.lat_p50_us && *p.lat_p50_us > 4 * p50_median) {
        model::Finding f;
        f.id = "ladder.perf.latency-high";
        f.severity = model::Severity::kWarn;
        f.group = r.id;
        f.object = fmt::format("{} -> {} rail {}", p.a, p.b, p.rail);
        f.subject = "pair";
        f.message = fmt::format("latency p50 {:.1f} us is over 4x the rung's median {:.1f} us", *p.lat_p50_us, p50_median);
        f.evidence = {fmt::format("p50 {:.1f} us, p99 {:.1f} us", *p.lat_p50_us, p.lat_p99_us.value_or(0))};
        f.remedy = "look for congestion, PFC pauses or a long path between them (counter deltas of this rung)";
        r.findings.push_back(std::move(f));
      }
    }
  }
  size_t failed = std::count_if(r.pairs.begin(), r.pairs.end(),
                                [](const auto& p) { return p.verdict == model::RungVerdict::kFail; });
  if (r.verdict == model::RungVerdict::kNotRun) {
    r.reason = "no pair could be measured";
  } else if (failed) {
    r.reason = fmt::format("{} of {} direction(s) fail: {}", failed, r.pairs.size(), Join(BlameMembers(r.pairs), ", "));
    bool all_tcp = std::all_of(r.pairs.begin(), r.pairs.end(), [](const auto& p) { return !p.rdma; });
    if (all_tcp && run.options.transport != "tcp") r.reason += " (RDMA not used: no pair ran over verbs)";
  } else if (!rdma_tested) {
    std::vector<std::string> no_rdma;
    for (const auto& id : ids) {
      const Member* m = run.Find(id);
      if (m && !HasRdma(*m)) no_rdma.push_back(id);
    }
    const std::string why = no_rdma.empty()             ? std::string()
                            : no_rdma.size() == ids.size() ? "no RDMA device on any member"
                                                           : "no RDMA device on " + Join(no_rdma, ", ");
    r.reason = fmt::format("{} direction(s) over TCP only{}{}", r.pairs.size(),
                           run.options.transport == "tcp" ? " (--transport tcp)" : "", why.empty() ? "" : ": " + why);
  } else {
    r.reason = fmt::format("{} direction(s) at or above the expected bandwidth", r.pairs.size());
  }
}

model::PairTest MeasurePerfDirection(Run& run, Member& a, Member& b, int rail_a, int rail_b, bool bind_rail,
                                     const std::string& rung, const std::string& file, std::optional<double> tcp_best) {
  bool dead = false;
  model::PairTest p = MeasurePerf(run, a, b, rail_a, rail_b, bind_rail, rung, file, &dead);
  if (!dead && !(p.verdict == model::RungVerdict::kFail && !p.bw_gbps)) JudgePerfPair(p, run.options.transport, tcp_best);
  return p;
}

void CorrelatePairRung(Run& run, model::RungResult& r) {
  bundle::CorrelatePairCounters(r);
  bool any = false;
  for (const auto& p : r.pairs) any |= p.suspect.has_value();
  if (!any) return;
  auto blamed = BlameMembers(r.pairs);
  std::set<std::string> bad(blamed.begin(), blamed.end());
  // Members that were blamed only for a pair whose counters name the other end pass again.
  std::vector<std::string> passed;
  for (const auto& id : r.members) {
    const Member* m = run.Find(id);
    if (m && m->alive && !bad.count(id)) passed.push_back(id);
  }
  r.members_passed = passed;
  std::erase_if(r.findings, [&](const model::Finding& f) { return f.id == "ladder.perf.fail" && !bad.count(f.object); });
  for (const auto& p : r.pairs) {
    if (p.suspect) r.findings.push_back(bundle::SuspectFinding(r, p));
  }
  size_t failed = std::count_if(r.pairs.begin(), r.pairs.end(),
                                [](const auto& p) { return p.verdict == model::RungVerdict::kFail; });
  r.reason = fmt::format("{} of {} direction(s) fail: {}", failed, r.pairs.size(), Join(blamed, ", "));
}

}  // namespace fabcheck::ladder::internal
