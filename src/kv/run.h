// `fabcheck kv run`: the KV-cache transfer against a perf server (the same
// `perf serve` or agent the L3 tests use), beside the L3 figure of the pair.
//
// The run, in order: the L3 write bandwidth at the page size (as many streams
// as requests in flight; with --no-l3 a one-message probe instead), which
// also tells what both ends use: their MTU, link layer, GID type and memory
// registration are compared before the KV transfer starts; then the kv
// pattern (perf test kKv); then the figures, the ratio to L3, the TTFT budget
// and the findings. Nothing here prints: progress goes to the callback.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "base/status.h"
#include "fabcheck/model/kv.h"
#include "perf/engine.h"

namespace fabcheck::kv {

// Destination pages the server keeps (its page table) by default: 256 MiB
// of pages, at least the pages of one layer, at most perf::kMaxKvPoolPages.
inline constexpr uint64_t kDefaultPoolBytes = 256ull << 20;

struct RunOptions {
  // Host, port, token, TLS, timeouts and the node root; params are filled here
  // except the endpoints (params.client / params.server: device, GID, memory).
  perf::ClientOptions client;
  perf::TransportKind transport = perf::TransportKind::kTcp;
  // --transport auto sent to agents: each resolves it on its own node
  // (perf::ChooseTransport) before its transfers; `transport` is unused then.
  bool transport_auto = false;
  model::KvSizing sizing;
  int inflight = 1;
  uint64_t requests = 0;    // measured requests in all; 0 = run for duration_s
  double duration_s = 0;
  uint64_t warmup = 0;      // unmeasured requests first
  uint64_t pool_bytes = kDefaultPoolBytes;
  bool l3 = true;
  double l3_duration_s = 2;
  std::optional<double> ttft_budget_ms;
  std::function<void(const std::string&)> progress;
};

// The pages of the server's pool for a sizing and pool size.
uint64_t PoolPages(const model::KvSizing& sizing, uint64_t pool_bytes);

// A Status when nothing could run (bad options, server unreachable or
// refusing); otherwise a KvResult whose error says what failed mid-run.
Result<model::KvResult> Run(const RunOptions& options);

}  // namespace fabcheck::kv
