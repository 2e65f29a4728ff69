// The L3 engine: runs one test between a client and a `fabcheck perf serve`.
//
// The library API (as UCX's libperf): callers (the `perf` command, sweep, the
// ladder) build TestParams, call RunClient and get a model::PerfResult back;
// nothing here prints.
#pragma once

#include <atomic>
#include <chrono>
#include <optional>
#include <string>

#include "base/budget.h"
#include "base/status.h"
#include "fabcheck/model/perf.h"
#include "perf/protocol.h"
#include "perf/transport.h"

namespace fabcheck::perf {

struct ClientOptions {
  std::string host;
  int port = kDefaultPort;
  TestParams params;
  std::optional<std::string> token;  // the shared secret when the server wants one (--token-file)
  // The node this side runs on, as the command opened it (SysRoot::Live() on
  // a node); required: perf reads the node only through it.
  std::optional<sys::SysRoot> root;
  std::chrono::milliseconds connect_timeout{10000};
  std::chrono::milliseconds io_timeout{30000};
  const std::atomic<bool>* cancel = nullptr;
  // The control channel over TLS, verifying the server against the
  // context's CA and, when not empty, its name (an agent's peer tests dial a
  // rail address its certificate may not list: they verify the chain only).
  std::shared_ptr<const net::TlsContext> tls;
  std::string tls_server_name;
  // tcp: before each data connection connects, learn the routers it crosses
  // with TTL-limited probes 1..trace_hops on its 5-tuple (perf/flow_path.h);
  // the result's client endpoint lists them (PerfEndpoint::flows). 0 = off.
  int trace_hops = 0;
  // Client-side ceilings when this side runs for someone else (an agent's
  // /v1/test and /v1/kv): the caller chose the server, so the server's
  // --max-mem does not protect this node. The buffers the test needs here are
  // taken from `memory` before anything is allocated (ResourceExhausted
  // otherwise), worker threads from `threads`. Null = no ceiling beyond the
  // process's thread budget (the perf command: the user is the caller).
  base::Budget* memory = nullptr;
  base::Budget* threads = nullptr;
};

// Both sides' raw measurements of one size, as the client saw them (`mine` =
// the client's, with the samples only it keeps: kv request and layer times).
struct RawSize {
  uint64_t size = 0;
  SideMeasurement mine, theirs;
};

// Runs the test. A Status when it could not start (bad parameters,
// connection, handshake, refusal, transport setup); otherwise a PerfResult
// whose `error` (and per-size `error`) say what failed mid-test, naming the
// peer and the phase. With `raw`, each size's raw measurements are added to it
// (fabcheck kv computes its own figures from them).
Result<model::PerfResult> RunClient(const ClientOptions& options, std::vector<RawSize>* raw = nullptr);

// One side's part after the handshake, shared by client and server: transport
// setup, the sizes in lock-step, the measurements exchanged. The client gets
// the assembled result in *result (may be null on the server).
Status RunSide(const TestParams& params, Transport& transport, FramedConnection& conn, const LocalContext& local,
               model::PerfResult* result, std::vector<RawSize>* raw = nullptr);

// The figures of one size from both sides' raw measurements (pure; tested).
model::PerfSizeResult AssembleSize(const TestParams& params, uint64_t size, const SideMeasurement& client,
                                   const SideMeasurement& server);

// The endpoint description this build puts on the wire (host, version).
model::PerfEndpoint DescribeSide(const Transport& transport, const LocalContext& local);

}  // namespace fabcheck::perf
