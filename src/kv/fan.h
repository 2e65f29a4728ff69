// `fabcheck kv run --agents`: KV transfers between agents, several at once
// through one member (model::KvFanResult): fan-in, every other member writes
// into the first member's pool at the same time (prefill -> one decode, many
// to one); fan-out (--fan-out), the first member writes into every other one
// at once.
//
// The coordinator asks each writing member's agent (POST /v1/kv) to run the
// transfers from its own node into the targets' perf servers (the agents'
// own, the same the L3 tests use); the agent runs kv::Run per target, all at
// once, and answers every result. Nothing here prints.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "control/api.h"
#include "control/client.h"
#include "control/server.h"
#include "fabcheck/model/kv.h"
#include "kv/run.h"
#include "net/tls.h"
#include "sys/sysroot.h"

namespace fabcheck::kv {

// What of RunOptions travels to an agent: sizing, transport, in flight,
// requests or duration, warmup, pool, L3, budget, memory and timeouts (not
// host, devices or credentials: those are the agent's own).
nlohmann::json RunSpecToJson(const RunOptions& o);
// InvalidArgument naming the field; `o`'s other fields are left as they are.
Status RunSpecFromJson(const nlohmann::json& j, RunOptions& o);

// The agent's side (POST /v1/kv). Its perf client uses the agent's token and
// peer TLS, as its peer tests do.
struct AgentKvEnv {
  std::optional<std::string> token;
  std::shared_ptr<const net::TlsContext> peer_tls;
  sys::SysRoot root;
};
inline constexpr size_t kMaxFanTargets = 64;
control::JsonHandler AgentKvHandler(AgentKvEnv env);

struct FanOptions {
  std::vector<control::HostPort> members;  // the agents; members[0] is the hub
  bool fan_out = false;
  control::ClientOptions control;
  RunOptions run;  // sizing and the rest; client.host/port unused
  std::function<void(const std::string&)> progress;
};

// A Status when nothing could run (an agent unreachable, fewer than two
// members); otherwise every member's result or error.
Result<model::KvFanResult> RunFan(const FanOptions& o);

// The sums and the ratio over the members that measured (pure; tested).
void SumFan(model::KvFanResult& r, uint64_t page_bytes);

}  // namespace fabcheck::kv
