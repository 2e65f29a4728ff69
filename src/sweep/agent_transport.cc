#include "sweep/agent_transport.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <mutex>

#include "base/log.h"
#include "base/parallel.h"
#include "base/strings.h"
#include "sweep/runner.h"

namespace fabcheck::sweep {

struct AgentTransport::Agent {
  control::HostPort endpoint;
  std::optional<control::AgentInfo> info;
  std::atomic<bool> reachable{false};
  mutable std::mutex mu;  // guards error
  std::string error;
};

namespace {

// Whether an agent's perf server runs verbs (what --transport auto asks).
bool ServesVerbs(const std::optional<control::AgentInfo>& info) {
  return info && std::find(info->transports.begin(), info->transports.end(), "verbs") != info->transports.end();
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

void AssignDisplayNames(std::vector<model::SweepMember>* members) {
  std::map<std::string, int> count;
  for (const auto& m : *members) ++count[m.name];
  for (auto& m : *members) {
    if (count[m.name] <= 1) {
      m.display = m.name;
      continue;
    }
    // The control host tells them apart; with one host for all (namespaces
    // behind one address) the port does.
    std::string host = m.control;
    size_t colon = host.rfind(':');
    std::string bare = colon == std::string::npos ? host : host.substr(0, colon);
    int same_host = 0;
    for (const auto& o : *members) {
      std::string oh = o.control.substr(0, o.control.rfind(':'));
      same_host += o.name == m.name && oh == bare ? 1 : 0;
    }
    m.display = fmt::format("{}@{}", m.name, same_host > 1 ? host : bare);
  }
}

AgentTransport::AgentTransport(std::vector<control::HostPort> endpoints, AgentTransportOptions options)
    : options_(std::move(options)),
      client_options_{options_.token, options_.connect_timeout, options_.info_timeout, options_.tls},
      timeout_(TestTimeout(options_.test)),
      start_(std::chrono::steady_clock::now()) {
  for (auto& e : endpoints) {
    agents_.push_back(std::make_unique<Agent>());
    agents_.back()->endpoint = std::move(e);
  }
}

AgentTransport::~AgentTransport() = default;

std::vector<model::SweepMember> AgentTransport::Discover() {
  // Who is there: every agent's info, at once, each bounded by the timeouts.
  base::ParallelFor(agents_.size(), 64, [&](size_t i) {
    Agent& a = *agents_[i];
    auto info = control::AgentClient(a.endpoint, client_options_).Info();
    if (info.ok()) {
      a.info = *info;
      a.reachable = true;
    } else {
      std::lock_guard lock(a.mu);
      a.error = info.status().message();
      LOG_WARN("sweep", "{}", a.error);
    }
  });
  int reachable = 0;
  rails_ = options_.rails ? 1 << 20 : 1;
  for (const auto& a : agents_) {
    if (!a->reachable) continue;
    ++reachable;
    if (options_.rails) rails_ = std::min<int>(rails_, std::max<size_t>(1, a->info->rails.size()));
  }
  if (reachable == 0) rails_ = 1;
  std::vector<model::SweepMember> members;
  for (size_t i = 0; i < agents_.size(); ++i) {
    const Agent& a = *agents_[i];
    model::SweepMember m;
    m.index = static_cast<int>(i);
    m.control = a.endpoint.ToString();
    m.name = a.info && !a.info->name.empty() ? a.info->name : a.endpoint.host;
    m.reachable = a.reachable;
    m.error = Error(static_cast<int>(i));
    for (int r = 0; r < rails_; ++r) {
      bool has = a.info && static_cast<size_t>(r) < a.info->rails.size();
      m.data_addresses.push_back(has && !a.info->rails[r].address.empty() ? a.info->rails[r].address : a.endpoint.host);
      m.interface_mtu.push_back(has ? a.info->rails[r].mtu : 0);
    }
    members.push_back(std::move(m));
  }
  AssignDisplayNames(&members);
  for (const auto& m : members) names_.push_back(m.display);
  if (options_.test.transport == "auto") {
    std::vector<std::string> tcp_only;
    for (size_t i = 0; i < agents_.size(); ++i) {
      if (agents_[i]->reachable && !ServesVerbs(agents_[i]->info)) tcp_only.push_back(names_[i]);
    }
    if (!tcp_only.empty()) {
      LOG_WARN("sweep", "--transport auto: {} of {} agents serve no verbs ({}{}): their pairs run over TCP, not RDMA",
               tcp_only.size(), agents_.size(), Join(std::vector<std::string>(tcp_only.begin(),
                                                    tcp_only.begin() + std::min<size_t>(tcp_only.size(), 8)), ", "),
               tcp_only.size() > 8 ? ", ..." : "");
    }
  }
  return members;
}

bool AgentTransport::Reachable(int member) const { return agents_[member]->reachable; }

std::string AgentTransport::Error(int member) const {
  std::lock_guard lock(agents_[member]->mu);
  return agents_[member]->error;
}

double AgentTransport::ElapsedSeconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

std::optional<model::SweepPairResult> AgentTransport::Direction(const TestSpec& s, int round) {
  Agent& from = *agents_[s.a];
  Agent& to = *agents_[s.b];
  auto address = [&](const Agent& a) {
    if (a.info && static_cast<size_t>(s.rail) < a.info->rails.size() && !a.info->rails[s.rail].address.empty()) {
      return a.info->rails[s.rail].address;
    }
    return a.endpoint.host;
  };
  control::PeerTestRequest req = options_.test;
  // auto: verbs where both ends' perf servers serve it, TCP otherwise
  // (Discover said which agents lack it).
  if (req.transport == "auto") req.transport = ServesVerbs(from.info) && ServesVerbs(to.info) ? "verbs" : "tcp";
  req.peer = address(to);
  req.peer_name = names_[s.b];
  req.perf_port = to.info->perf_port;
  req.mtu_port = to.info->mtu_port;
  // Several flows are several connections, each with its own source port.
  req.streams = std::max(req.streams, s.flows);
  const bool trace = s.flows > 1 && fabric_ && fabric_->knows_routers(s.rail) && options_.path_hops > 0;
  // With core routers listed, a flow between pods is traced to the far pod's
  // spine: leaf (TTL 1), spine (2), core (3), far spine (4).
  const bool cores = trace && fabric_->knows_core_routers(s.rail);
  if (trace) req.path_hops = cores ? std::max(options_.path_hops, 4) : options_.path_hops;
  req.source = rails_ > 1 || options_.rails ? address(from) : "";
  if (req.source == from.endpoint.host && !(from.info && !from.info->rails.empty())) req.source.clear();
  model::SweepPairResult p;
  p.a = s.a, p.b = s.b, p.rail = s.rail, p.round = round;
  auto res = control::AgentClient(from.endpoint, client_options_).RunTest(req, timeout_);
  if (!res.ok()) {
    p.error = res.status().message();
    if (IsAgentFailure(res.status()) && !control::AgentClient(from.endpoint, client_options_).Health().ok()) {
      std::lock_guard lock(from.mu);
      if (from.reachable.exchange(false)) from.error = res.status().message();
      return std::nullopt;
    }
    return p;
  }
  p.bw_gbps = res->bw_gbps;
  p.lat_median_us = res->lat_median_us;
  p.lat_p99_us = res->lat_p99_us;
  p.path_mtu = res->path_mtu;
  p.local_mtu = res->local_mtu;
  p.transport = res->transport;
  p.error = Join(res->errors, "; ");
  if (s.flows > 1 && res->flow_gbps.size() > 1) {
    // Each flow's figure, and the spine (with three tiers: the core and the
    // far pod's spine) its traced path went through.
    for (size_t f = 0; f < res->flow_gbps.size(); ++f) {
      p.flow_gbps.push_back(static_cast<float>(res->flow_gbps[f]));
      fabric::FabricIndex::RouterPath path;
      if (trace && f < res->flow_hops.size()) path = fabric_->PathOfHops(s.rail, res->flow_hops[f]);
      p.flow_spine.push_back(static_cast<int16_t>(path.spine));
      if (cores) {
        p.flow_core.push_back(static_cast<int16_t>(path.core));
        p.flow_spine_down.push_back(static_cast<int16_t>(path.spine_down));
      }
    }
  }
  if (!res->errors.empty() && !control::AgentClient(to.endpoint, client_options_).Health().ok()) {
    std::lock_guard lock(to.mu);
    if (to.reachable.exchange(false)) to.error = fmt::format("stopped answering mid-sweep: {}", p.error);
  }
  return p;
}

std::vector<std::optional<model::SweepPairResult>> AgentTransport::RunRound(const std::vector<TestSpec>& specs,
                                                                            int round) {
  std::vector<std::optional<model::SweepPairResult>> out(specs.size());
  // Group by unordered pair: a pair's directions run one after the other.
  std::map<std::pair<int, int>, std::vector<size_t>> by_pair;
  for (size_t i = 0; i < specs.size(); ++i) by_pair[std::minmax(specs[i].a, specs[i].b)].push_back(i);
  std::vector<std::vector<size_t>> groups;
  for (auto& [_, g] : by_pair) groups.push_back(std::move(g));
  base::ParallelFor(groups.size(), static_cast<size_t>(options_.max_parallel_pairs), [&](size_t k) {
    const auto& g = groups[k];
    const int first = specs[g[0]].a;
    for (int pass = 0; pass < 2; ++pass) {
      std::vector<size_t> now;
      for (size_t i : g) {
        if ((specs[i].a == first) == (pass == 0)) now.push_back(i);
      }
      // Every rail of one direction at once.
      base::ParallelFor(now.size(), now.size(), [&](size_t j) {
        const TestSpec& s = specs[now[j]];
        if ((options_.stop && options_.stop->load()) || !agents_[s.a]->reachable || !agents_[s.b]->reachable) return;
        out[now[j]] = Direction(s, round);
      });
    }
  });
  return out;
}

}  // namespace fabcheck::sweep
