#include "agent/peer_test.h"

#include <fmt/format.h>

#include <chrono>

#include "control/budgets.h"
#include "perf/engine.h"
#include "agent/mtu_probe.h"

namespace fabcheck::agent {
namespace {

Result<model::PerfResult> RunPerf(const control::PeerTestRequest& r, const PeerTestEnv& env, model::PerfTest test,
                                  control::RequestBudgets& budgets) {
  auto kind = perf::ParseTransportKind(r.transport);
  if (!kind) {
    return InvalidArgumentError(fmt::format("unknown transport '{}' (use tcp or verbs)", r.transport));
  }
  perf::ClientOptions o;
  o.host = r.peer;
  o.port = r.perf_port;
  o.token = env.token;
  o.root = env.root;
  o.cancel = env.cancel;
  o.memory = &budgets.memory;
  o.threads = &budgets.threads;
  o.tls = env.tls;  // chain only: the peer's rail address need not be in its certificate
  o.connect_timeout = std::chrono::milliseconds(std::min(r.timeout_ms, 5000));
  o.io_timeout = std::chrono::milliseconds(r.timeout_ms);
  o.params.transport = *kind;
  o.params.test = test;
  o.params.op = *kind == perf::TransportKind::kTcp ? model::PerfOp::kSend : model::PerfOp::kWrite;
  if (test == model::PerfTest::kBw) {
    o.params.sizes = {r.bw_size};
    o.params.duration_s = r.bw_duration_s;
    o.params.streams = r.streams;
    o.trace_hops = r.path_hops;
  } else {
    o.params.sizes = {r.lat_size};
    o.params.duration_s = r.lat_duration_s;
  }
  ASSIGN_OR_RETURN(model::PerfResult result, perf::RunClient(o));
  if (!result.error.empty()) return UnavailableError(result.error);
  if (result.results.empty()) return InternalError("the perf run returned no figures");
  if (!result.results.front().error.empty()) return UnavailableError(result.results.front().error);
  return result;
}

}  // namespace

Result<control::PeerTestResponse> RunPeerTest(const control::PeerTestRequest& r, const PeerTestEnv& env) {
  const auto start = std::chrono::steady_clock::now();
  control::PeerTestResponse out;
  // The caller names the peer, so the peer's limits do not protect this node:
  // the request's buffers and threads come out of the agent's budgets.
  control::RequestBudgets budgets("/v1/test");
  const std::string peer = r.peer_name.empty() ? r.peer : fmt::format("{} ({})", r.peer_name, r.peer);
  if (r.bandwidth) {
    auto bw = RunPerf(r, env, model::PerfTest::kBw, budgets);
    if (bw.ok() && bw->results.front().bw) {
      out.bw_gbps = bw->results.front().bw->avg_gbps;
      out.transport = bw->settings.transport;
      out.device = bw->client.device;
      out.flow_gbps = bw->results.front().stream_gbps;
      for (const auto& f : bw->client.flows) out.flow_hops.push_back(f.hops);
    } else {
      out.errors.push_back(fmt::format("bandwidth to {}: {}", peer,
                                       bw.ok() ? "no bandwidth figure" : bw.status().message()));
    }
  }
  if (r.latency) {
    auto lat = RunPerf(r, env, model::PerfTest::kLat, budgets);
    if (lat.ok() && lat->results.front().lat) {
      out.lat_median_us = lat->results.front().lat->median_us;
      out.lat_p99_us = lat->results.front().lat->p99_us;
      if (out.transport.empty()) out.transport = lat->settings.transport;
    } else {
      out.errors.push_back(fmt::format("latency to {}: {}", peer,
                                       lat.ok() ? "no latency figure" : lat.status().message()));
    }
  }
  if (r.mtu) {
    MtuProbeOptions o;
    o.host = r.peer;
    o.port = r.mtu_port;
    o.source = r.source;
    o.cancel = env.cancel;
    o.deadline = std::chrono::milliseconds(std::min(r.timeout_ms, 20000));
    auto mtu = ProbePathMtu(o);
    if (mtu.ok()) {
      out.path_mtu = mtu->path_mtu;
      out.local_mtu = mtu->local_mtu;
      out.black_hole = mtu->black_hole;
    } else {
      out.errors.push_back(fmt::format("path MTU to {}: {}", peer, mtu.status().message()));
    }
  }
  if (out.transport.empty()) out.transport = r.transport;
  out.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace fabcheck::agent
