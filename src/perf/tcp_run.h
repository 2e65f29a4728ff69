// The per-size loops of the TCP transport (bandwidth and ping-pong latency).
#pragma once

#include <string>
#include <vector>

#include "base/fd.h"
#include "base/status.h"
#include "perf/transport.h"

namespace fabcheck::dl {
struct CudaApi;
}

namespace fabcheck::perf::tcp {

struct RunContext {
  const TestParams& params;
  const LocalContext& local;
  std::vector<UniqueFd>& socks;  // streams (x2 with bidir: even = client->server, odd = server->client)
  const std::vector<int>& cpus;  // pin data threads here (empty: not pinned)
  const dl::CudaApi* cuda;       // non-null: buffers live on GPU local.spec->mem.cuda_device, staged
  std::string peer;
};

Result<SideMeasurement> RunBandwidth(const RunContext& ctx, uint64_t size, ControlChannel& control);
Result<SideMeasurement> RunLatency(const RunContext& ctx, uint64_t size, ControlChannel& control);
// The KV-cache pattern (tcp_kv.cc): the client writes pages, the server lands
// them in its page table and acknowledges each layer's notification.
Result<SideMeasurement> RunKv(const RunContext& ctx, uint64_t page_bytes, ControlChannel& control);
// Buffer bytes of the kv pattern on `role`: the destination pool (server) or
// the source pages (client, at most kKvSourceBytes of them: perf/kv_pattern.h).
uint64_t KvMemoryNeeded(const TestParams& p, Role role);

}  // namespace fabcheck::perf::tcp
