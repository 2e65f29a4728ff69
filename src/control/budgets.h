// What one request may make an agent spend, and all requests together.
//
// An agent acting as a client (POST /v1/test, POST /v1/kv, the ranks POST
// /v1/coll starts) talks to a server the caller names, so that server's limits
// (perf serve --max-mem) do not protect this node: these do. docs/tls.md and
// docs/packaging.md list them for operators sizing a pod.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/budget.h"

namespace fabcheck::control {

// Buffers the agent's own perf client allocates: one request (all of its
// targets), and every request at once. A GPU node's training job must not be
// the OOM killer's choice because of a test.
inline constexpr uint64_t kAgentClientMemoryPerRequest = 1ull << 30;
inline constexpr uint64_t kAgentClientMemoryTotal = 2ull << 30;
// Worker threads of one request (all of its targets and streams); all
// requests together are held to base::kMaxProcessThreads.
inline constexpr uint64_t kAgentThreadsPerRequest = 600;
// Data connections one POST /v1/kv may open (targets x inflight): each takes
// two threads here.
inline constexpr uint64_t kAgentKvConnectionsPerRequest = 256;
// A kv pool (pool_bytes) an agent is asked to fill on another agent: the
// agent's perf server refuses more than 1 GiB per test anyway, and the page
// table the agent receives grows with it.
inline constexpr uint64_t kAgentKvPoolBytes = 1ull << 30;

// The largest answer a coordinator (sweep, ladder, kv --agents) reads from
// each route of an agent, far above what a real agent sends (an impostor
// streaming an endless body ends the call, not the coordinator):
//   /v1/health, /v1/info, /v1/test   1 MiB
//   /v1/counters, /v1/coll           8 MiB
//   /v1/inventory, /v1/kv            16 MiB
//   /v1/node                         128 MiB (it carries the node's snapshot)
size_t MaxAnswerBytes(std::string_view path);

// The agent's client memory, all requests together (kAgentClientMemoryTotal).
base::Budget& AgentClientMemory();

// One request's shares: memory under AgentClientMemory(), threads under the
// process's thread budget.
struct RequestBudgets {
  explicit RequestBudgets(const char* route);
  base::Budget memory;
  base::Budget threads;
};

}  // namespace fabcheck::control
