#include "kv/fan.h"

#include <fmt/format.h>

#include "base/log.h"
#include "base/thread_group.h"
#include "base/units.h"
#include "base/utc_time.h"
#include "control/budgets.h"
#include "fabcheck/model/json_fields.h"
#include "kv/figures.h"

namespace fabcheck::kv {

namespace {

namespace jf = model::json_fields;

void Say(const FanOptions& o, const std::string& line) {
  if (o.progress) o.progress(line);
}

// One target of an agent's transfers: the member's perf server.
struct Target {
  std::string name, host;
  int port = 0;
};

std::chrono::milliseconds AgentCallTimeout(const RunOptions& r) {
  // The agent answers when its transfers end: L3, then the transfer (its
  // duration; with --requests, up to ten minutes), and the waits around them.
  double run_s = (r.l3 ? r.l3_duration_s : 0) + (r.duration_s > 0 ? r.duration_s : 600);
  auto waits = 4 * r.client.io_timeout + 2 * r.client.connect_timeout;
  return std::chrono::milliseconds(static_cast<int64_t>(run_s * 1000)) + waits;
}

}  // namespace

nlohmann::json RunSpecToJson(const RunOptions& o) {
  nlohmann::json j = {{"sizing", o.sizing},
                      {"transport", o.transport_auto ? std::string("auto") : std::string(perf::TransportName(o.transport))},
                      {"inflight", o.inflight},
                      {"requests", o.requests},
                      {"duration_s", o.duration_s},
                      {"warmup", o.warmup},
                      {"pool_bytes", o.pool_bytes},
                      {"l3", o.l3},
                      {"l3_duration_s", o.l3_duration_s},
                      {"client_mem", o.client.params.client.mem.ToString()},
                      {"server_mem", o.client.params.server.mem.ToString()},
                      {"io_timeout_ms", o.client.io_timeout.count()},
                      {"connect_timeout_ms", o.client.connect_timeout.count()}};
  if (o.ttft_budget_ms) j["ttft_budget_ms"] = *o.ttft_budget_ms;
  return j;
}

Status RunSpecFromJson(const nlohmann::json& j, RunOptions& o) {
  if (!j.is_object()) return InvalidArgumentError("kv run spec: not a JSON object");
  try {
    o.sizing = j.at("sizing").get<model::KvSizing>();
    const std::string transport_name = j.value("transport", "tcp");
    o.transport_auto = transport_name == "auto";
    auto transport = perf::ParseTransportKind(o.transport_auto ? "tcp" : transport_name);
    if (!transport) return InvalidArgumentError("kv run spec: 'transport' is none of auto, tcp and verbs");
    o.transport = *transport;
    o.inflight = jf::NumberOr(j, "inflight", 1);
    o.requests = jf::NumberOr(j, "requests", uint64_t{0});
    o.duration_s = jf::NumberOr(j, "duration_s", 0.0);
    o.warmup = jf::NumberOr(j, "warmup", uint64_t{0});
    o.pool_bytes = jf::NumberOr(j, "pool_bytes", kDefaultPoolBytes);
    o.l3 = j.value("l3", true);
    o.l3_duration_s = jf::NumberOr(j, "l3_duration_s", 2.0);
    if (j.contains("ttft_budget_ms")) o.ttft_budget_ms = jf::NumberOr(j, "ttft_budget_ms", 0.0);
    o.client.io_timeout = std::chrono::milliseconds(jf::NumberOr(j, "io_timeout_ms", int64_t{30000}));
    o.client.connect_timeout = std::chrono::milliseconds(jf::NumberOr(j, "connect_timeout_ms", int64_t{10000}));
    for (auto [key, spec] : {std::pair{"client_mem", &o.client.params.client}, {"server_mem", &o.client.params.server}}) {
      ASSIGN_OR_RETURN(spec->mem, perf::MemorySpec::Parse(j.value(key, "host")));
    }
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgumentError(fmt::format("kv run spec: {}", jf::ExceptionMessage(e)));
  }
  if (o.inflight < 1 || o.inflight > 256) return InvalidArgumentError("kv run spec: 'inflight' out of 1..256");
  if (o.pool_bytes == 0 || o.pool_bytes > control::kAgentKvPoolBytes) {
    return InvalidArgumentError(fmt::format("kv run spec: 'pool_bytes' {} out of 1..{} (an agent's perf server takes "
                                            "at most that per test; use --pool {} or less)",
                                            o.pool_bytes, control::kAgentKvPoolBytes,
                                            FormatSize(control::kAgentKvPoolBytes)));
  }
  if (o.requests == 0 && !(o.duration_s > 0 && o.duration_s <= 3600)) {
    return InvalidArgumentError("kv run spec: give 'requests', or 'duration_s' in (0, 3600]");
  }
  if (o.client.io_timeout.count() <= 0 || o.client.connect_timeout.count() <= 0) {
    return InvalidArgumentError("kv run spec: timeouts must be positive");
  }
  return Status::Ok();
}

control::JsonHandler AgentKvHandler(AgentKvEnv env) {
  return [env](const nlohmann::json& request) -> Result<nlohmann::json> {
    RunOptions base;
    if (!request.contains("run")) return InvalidArgumentError("/v1/kv: 'run' missing");
    RETURN_IF_ERROR(RunSpecFromJson(request.at("run"), base));
    if (base.transport_auto) {
      auto choice = perf::ChooseTransport("auto", env.root);
      base.transport = choice->kind;  // "auto" always has a choice
      base.transport_auto = false;
      if (!choice->why_tcp.empty()) LOG_INFO("kv", "--transport auto: {}; the transfers run over TCP", choice->why_tcp);
    }
    const nlohmann::json* targets = request.contains("targets") ? &request.at("targets") : nullptr;
    if (targets == nullptr || !targets->is_array() || targets->empty() || targets->size() > kMaxFanTargets) {
      return InvalidArgumentError(fmt::format("/v1/kv: 'targets' must list 1 to {} perf servers", kMaxFanTargets));
    }
    std::vector<Target> list;
    for (const auto& t : *targets) {
      if (!t.is_object() || !t.contains("host") || !t.at("host").is_string()) {
        return InvalidArgumentError("/v1/kv: a target without a 'host'");
      }
      Target x{t.value("name", ""), t.at("host").get<std::string>(), 0};
      try {
        x.port = jf::NumberOr(t, "port", perf::kDefaultPort);
      } catch (const nlohmann::json::exception& e) {
        return InvalidArgumentError(fmt::format("/v1/kv: target {}: {}", x.host, jf::ExceptionMessage(e)));
      }
      if (x.port <= 0 || x.port > 65535) return InvalidArgumentError(fmt::format("/v1/kv: target {} port out of range", x.host));
      if (x.name.empty()) x.name = x.host;
      list.push_back(std::move(x));
    }
    // Each target's transfer opens `inflight` data connections, two threads
    // each here: bounded per request before anything starts.
    const uint64_t connections = list.size() * static_cast<uint64_t>(base.inflight);
    if (connections > control::kAgentKvConnectionsPerRequest) {
      return ResourceExhaustedError(fmt::format(
          "/v1/kv: {} targets x inflight {} = {} data connections, above this agent's {} per request (ask for fewer "
          "targets or a lower --inflight)",
          list.size(), base.inflight, connections, control::kAgentKvConnectionsPerRequest));
    }
    // Every transfer at once: that is the point of fan-out. The request's
    // buffers and threads come out of its shares of the agent's budgets.
    control::RequestBudgets budgets("/v1/kv");
    std::vector<nlohmann::json> answers(list.size());
    {
      base::ThreadGroup threads(fmt::format("kv transfers to {} targets", list.size()), &budgets.threads);
      Status started = threads.StartEach(list.size(), [&](size_t i) {
        RunOptions o = base;
        o.client.root = env.root;
        o.client.host = list[i].host;
        o.client.port = list[i].port;
        o.client.token = env.token;
        o.client.tls = env.peer_tls;
        o.client.memory = &budgets.memory;
        o.client.threads = &budgets.threads;
        try {
          auto r = Run(o);
          answers[i] = r.ok() ? nlohmann::json{{"target", list[i].name}, {"result", *r}}
                              : nlohmann::json{{"target", list[i].name}, {"error", r.status().message()}};
        } catch (const std::bad_alloc&) {
          // Out of memory is this transfer's error, not the agent's end.
          answers[i] = {{"target", list[i].name}, {"error", "out of memory on the agent during the transfer"}};
        }
      });
      // The transfers that did start run to their end (their own timeouts);
      // each that did not says why in its place of the answer.
      for (size_t i = threads.started(); i < list.size(); ++i) {
        answers[i] = {{"target", list[i].name}, {"error", "not run: " + started.message()}};
      }
    }
    return nlohmann::json{{"results", answers}};
  };
}

void SumFan(model::KvFanResult& r, uint64_t page_bytes) {
  r.gbytes_per_s = r.l3_gbytes_per_s = 0;
  bool all_l3 = true;
  int measured = 0;
  for (const auto& m : r.members) {
    if (!m.result || !m.result->kv) continue;
    ++measured;
    r.gbytes_per_s += m.result->kv->gbytes_per_s;
    if (m.result->l3 && m.result->l3->error.empty() && m.result->l3->gbytes_per_s > 0) {
      r.l3_gbytes_per_s += m.result->l3->gbytes_per_s;
    } else {
      all_l3 = false;
    }
  }
  r.ratio_to_l3.reset();
  r.goal_ratio.reset();
  // A ratio only when every transfer has its L3 figure: a sum over some would flatter it.
  if (measured > 0 && all_l3 && r.l3_gbytes_per_s > 0) {
    r.ratio_to_l3 = r.gbytes_per_s / r.l3_gbytes_per_s;
    r.goal_ratio = GoalRatio(page_bytes);
  }
}

Result<model::KvFanResult> RunFan(const FanOptions& o) {
  if (o.members.size() < 2) {
    return InvalidArgumentError("kv --agents needs two members or more: the first is the hub, the rest write into it "
                                "(or, with --fan-out, are written into)");
  }
  model::KvFanResult r;
  r.started_at = UtcNowIso8601();
  r.mode = o.fan_out ? "fan-out" : "fan-in";
  // Each member's name and perf server (its first rail's address when it declared rails).
  std::vector<control::AgentInfo> infos;
  std::vector<Target> targets;
  for (const auto& m : o.members) {
    control::AgentClient client(m, o.control);
    ASSIGN_OR_RETURN(control::AgentInfo info, client.Info());
    Target t{info.name.empty() ? m.host : info.name, m.host, info.perf_port};
    if (!info.rails.empty() && !info.rails[0].address.empty()) t.host = info.rails[0].address;
    targets.push_back(t);
    infos.push_back(std::move(info));
  }
  r.hub = targets[0].name;
  const nlohmann::json spec = RunSpecToJson(o.run);
  const auto timeout = AgentCallTimeout(o.run);
  auto target_json = [](const Target& t) { return nlohmann::json{{"name", t.name}, {"host", t.host}, {"port", t.port}}; };
  // Who writes into whom: fan-in, every member into the hub (one call each);
  // fan-out, the hub into every member (one call with every target).
  struct Call {
    size_t writer;
    std::vector<size_t> into;
    Result<nlohmann::json> answer = nlohmann::json();
  };
  std::vector<Call> calls;
  if (o.fan_out) {
    Call c{0, {}};
    for (size_t i = 1; i < targets.size(); ++i) c.into.push_back(i);
    calls.push_back(std::move(c));
  } else {
    for (size_t i = 1; i < targets.size(); ++i) calls.push_back({i, {0}});
  }
  Say(o, fmt::format("{}: {} transfer(s) at once {} {} ({} pages of {} per request)", r.mode, targets.size() - 1,
                     o.fan_out ? "out of" : "into", r.hub, o.run.sizing.transfers_per_request,
                     FormatSize(o.run.sizing.page_bytes)));
  {
    // Every call at once (the transfers overlap, that is the measurement);
    // a call that could not start says so in its member's error.
    base::Budget own("threads of kv --agents", calls.size(), nullptr, "threads");
    base::ThreadGroup threads("kv --agents calls", &own);
    for (auto& c : calls) {
      Status started = threads.Start([&, &c = c] {
        nlohmann::json body = {{"run", spec}, {"targets", nlohmann::json::array()}};
        for (size_t i : c.into) body["targets"].push_back(target_json(targets[i]));
        c.answer = control::AgentClient(o.members[c.writer], o.control).Kv(body, timeout);
      });
      if (!started.ok()) c.answer = started;
    }
  }
  for (const auto& c : calls) {
    for (size_t k = 0; k < c.into.size(); ++k) {
      model::KvFanMember m;
      m.prefill = targets[c.writer].name;
      m.decode = targets[c.into[k]].name;
      if (!c.answer.ok()) {
        m.error = c.answer.status().message();
      } else {
        const nlohmann::json& results = c.answer->contains("results") ? c.answer->at("results") : nlohmann::json();
        if (!results.is_array() || results.size() != c.into.size()) {
          m.error = fmt::format("agent {} answered {} results for {} transfers (protocol mismatch?)",
                                o.members[c.writer].ToString(), results.is_array() ? results.size() : 0,
                                c.into.size());
        } else if (results[k].contains("error")) {
          m.error = results[k].value("error", "");
        } else {
          try {
            m.result = results[k].at("result").get<model::KvResult>();
          } catch (const nlohmann::json::exception& e) {
            m.error = fmt::format("agent {}: malformed kv result ({})", o.members[c.writer].ToString(),
                                  jf::ExceptionMessage(e));
          }
        }
      }
      if (m.result && !m.result->error.empty() && m.error.empty()) m.error = m.result->error;
      if (m.result) {
        for (model::Finding f : m.result->findings) {
          f.object = fmt::format("{} -> {}: {}", m.prefill, m.decode, f.object);
          r.findings.push_back(std::move(f));
        }
      }
      Say(o, m.error.empty() && m.result && m.result->kv
                 ? fmt::format("{} -> {}: {:.3f} GB/s", m.prefill, m.decode, m.result->kv->gbytes_per_s)
                 : fmt::format("{} -> {}: {}", m.prefill, m.decode, m.error));
      r.members.push_back(std::move(m));
    }
  }
  SumFan(r, o.run.sizing.page_bytes);
  return r;
}

}  // namespace fabcheck::kv
