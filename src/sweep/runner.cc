#include "sweep/runner.h"

#include <fmt/format.h>

#include <algorithm>
#include <mutex>
#include <thread>

#include "base/log.h"
#include "base/parallel.h"
#include "base/strings.h"
#include "control/client.h"

namespace fabcheck::sweep {
namespace {

using Clock = std::chrono::steady_clock;

struct Agent {
  control::HostPort endpoint;
  std::optional<control::AgentInfo> info;
  std::atomic<bool> reachable{false};
  std::string error;
  std::mutex mu;  // guards error
};

using base::ParallelFor;

std::string DataAddress(const Agent& a, int rail) {
  if (a.info && static_cast<size_t>(rail) < a.info->rails.size() && !a.info->rails[rail].address.empty()) {
    return a.info->rails[rail].address;
  }
  return a.endpoint.host;
}

bool IsAgentFailure(const Status& s) {
  return s.code() == StatusCode::kUnavailable || s.code() == StatusCode::kDeadlineExceeded;
}

}  // namespace

std::chrono::milliseconds TestTimeout(const control::PeerTestRequest& t) {
  double s = 10;  // connection set-ups and the MTU search
  if (t.bandwidth) s += t.bw_duration_s * 3 + 5;
  if (t.latency) s += t.lat_duration_s * 3 + 5;
  return std::chrono::milliseconds(static_cast<int64_t>(s * 1000));
}

Result<model::SweepResult> RunSweep(const std::vector<control::HostPort>& endpoints, const SweepOptions& o) {
  const auto start = Clock::now();
  const int n = static_cast<int>(endpoints.size());
  if (n < 2) return InvalidArgumentError(fmt::format("a sweep needs at least 2 agents, got {}", n));
  control::ClientOptions client_options{o.token, o.connect_timeout, o.info_timeout, o.tls};
  std::vector<std::unique_ptr<Agent>> agents;
  for (const auto& e : endpoints) {
    agents.push_back(std::make_unique<Agent>());
    agents.back()->endpoint = e;
  }
  // Who is there: every agent's info, at once, each bounded by the timeouts.
  ParallelFor(agents.size(), 64, [&](size_t i) {
    Agent& a = *agents[i];
    auto info = control::AgentClient(a.endpoint, client_options).Info();
    if (info.ok()) {
      a.info = *info;
      a.reachable = true;
    } else {
      a.error = info.status().message();
      LOG_WARN("sweep", "{}", a.error);
    }
  });
  model::SweepResult result;
  result.pattern = std::string(PatternName(o.pattern));
  int reachable = 0, rails = 1;
  if (o.rails) rails = 1 << 20;
  for (const auto& a : agents) {
    if (!a->reachable) continue;
    ++reachable;
    if (o.rails) rails = std::min<int>(rails, std::max<size_t>(1, a->info->rails.size()));
  }
  if (o.rails && reachable == 0) rails = 1;
  if (reachable < 2) {
    std::vector<std::string> why;
    for (const auto& a : agents) {
      if (!a->reachable) why.push_back(a->error);
    }
    return UnavailableError(fmt::format("only {} of {} agents answer; nothing to sweep: {}", reachable, n,
                                        Join(why, "; ")));
  }
  result.rails = rails;
  for (int i = 0; i < n; ++i) {
    const Agent& a = *agents[i];
    model::SweepMember m;
    m.index = i;
    m.control = a.endpoint.ToString();
    m.name = a.info && !a.info->name.empty() ? a.info->name : a.endpoint.host;
    m.reachable = a.reachable;
    m.error = a.error;
    for (int r = 0; r < rails; ++r) {
      m.data_addresses.push_back(DataAddress(a, r));
      m.interface_mtu.push_back(a.info && static_cast<size_t>(r) < a.info->rails.size() ? a.info->rails[r].mtu : 0);
    }
    result.members.push_back(m);
  }

  ASSIGN_OR_RETURN(Schedule schedule, MakeSchedule(o.pattern, n, o.peers, o.seed));
  result.rounds_planned = static_cast<int>(schedule.rounds.size());
  const auto timeout = TestTimeout(o.test);
  result.settings = {{"test", o.test}, {"test_timeout_ms", timeout.count()},
                     {"connect_timeout_ms", o.connect_timeout.count()}, {"peers", o.peers}, {"seed", o.seed}};
  result.settings["test"].erase("peer");
  result.settings["test"].erase("peer_name");
  result.transport = o.test.transport;
  if (o.on_start) o.on_start(result.members);

  std::mutex mu;  // guards result.pairs
  // One direction: agent `a` tests `b` on `rail`. Returns false when agent a
  // itself did not answer.
  auto direction = [&](int a, int b, int rail, int round) {
    Agent& from = *agents[a];
    Agent& to = *agents[b];
    control::PeerTestRequest req = o.test;
    req.peer = DataAddress(to, rail);
    req.peer_name = result.members[b].name;
    req.perf_port = to.info->perf_port;
    req.mtu_port = to.info->mtu_port;
    req.source = rails > 1 || o.rails ? DataAddress(from, rail) : "";
    if (req.source == from.endpoint.host && !(from.info && !from.info->rails.empty())) req.source.clear();
    model::SweepPairResult p;
    p.a = a, p.b = b, p.rail = rail, p.round = round;
    auto res = control::AgentClient(from.endpoint, client_options).RunTest(req, timeout);
    if (!res.ok()) {
      p.error = res.status().message();
      if (IsAgentFailure(res.status()) && !control::AgentClient(from.endpoint, client_options).Health().ok()) {
        std::lock_guard lock(from.mu);
        if (from.reachable.exchange(false)) from.error = res.status().message();
        return;  // the agent is gone: its pairs are its problem, not links
      }
    } else {
      p.bw_gbps = res->bw_gbps;
      p.lat_median_us = res->lat_median_us;
      p.lat_p99_us = res->lat_p99_us;
      p.path_mtu = res->path_mtu;
      p.local_mtu = res->local_mtu;
      p.transport = res->transport;
      p.error = Join(res->errors, "; ");
      if (!res->errors.empty() && !control::AgentClient(to.endpoint, client_options).Health().ok()) {
        std::lock_guard lock(to.mu);
        if (to.reachable.exchange(false)) to.error = fmt::format("stopped answering mid-sweep: {}", p.error);
      }
    }
    std::lock_guard lock(mu);
    result.pairs.push_back(std::move(p));
  };

  Progress progress;
  progress.rounds = result.rounds_planned;
  for (size_t r = 0; r < schedule.rounds.size(); ++r) {
    if (o.stop && o.stop->load()) {
      result.interrupted = true;
      break;
    }
    const Round& round = schedule.rounds[r];
    ParallelFor(round.size(), static_cast<size_t>(o.max_parallel_pairs), [&](size_t k) {
      const Pair& pair = round[k];
      for (int rail_pass = 0; rail_pass < 2; ++rail_pass) {
        int a = rail_pass == 0 ? pair.a : pair.b, b = rail_pass == 0 ? pair.b : pair.a;
        if (o.stop && o.stop->load()) return;
        if (!agents[a]->reachable || !agents[b]->reachable) return;
        // Every rail of the pair at once, one direction at a time.
        ParallelFor(static_cast<size_t>(rails), static_cast<size_t>(rails),
                    [&](size_t rail) { direction(a, b, static_cast<int>(rail), static_cast<int>(r) + 1); });
      }
    });
    result.rounds_completed = static_cast<int>(r) + 1;
    progress.round = result.rounds_completed;
    progress.pairs_done += round.size();
    progress.elapsed_s = std::chrono::duration<double>(Clock::now() - start).count();
    progress.eta_s = progress.elapsed_s / progress.round * (progress.rounds - progress.round);
    progress.unreachable = 0;
    for (const auto& a : agents) progress.unreachable += a->reachable ? 0 : 1;
    if (o.on_progress) o.on_progress(progress);
    if (o.on_round) o.on_round(static_cast<int>(r) + 1);
  }
  if (o.stop && o.stop->load() && result.rounds_completed < result.rounds_planned) result.interrupted = true;

  for (int i = 0; i < n; ++i) {
    result.members[i].reachable = agents[i]->reachable;
    std::lock_guard lock(agents[i]->mu);
    result.members[i].error = agents[i]->error;
  }
  std::sort(result.pairs.begin(), result.pairs.end(), [](const auto& x, const auto& y) {
    return std::tie(x.round, x.a, x.b, x.rail) < std::tie(y.round, y.a, y.b, y.rail);
  });
  result.matrices = model::BuildMatrices(n, rails, result.pairs);
  result.verdict = Analyze(result.matrices, result.members, result.pairs, o.analysis);
  result.elapsed_s = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

}  // namespace fabcheck::sweep
