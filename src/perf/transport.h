// The transport interface of the L3 engine (`fabcheck perf`), and the types
// both sides of a test share.
//
// The engine (engine.h) owns the control connection, the handshake, the
// server's limits, timing of sizes, CPU accounting and the result math. A
// transport (tcp_transport.*, verbs/...) only moves bytes and measures raw
// figures. For every test, on each side:
//
//   engine                                  transport
//   ------                                  ---------
//   handshake, auth, request validated
//   CreateTransport(params.transport)  -->  (constructor: nothing allocated)
//   MemoryNeeded(params, role)         -->  bytes of buffers Setup would allocate (server limits)
//   Setup(params, role, local, control) ->  allocate buffers, QPs/sockets; exchange connection
//                                           info with the peer via control.Exchange(); connect
//   Describe()                         -->  what this side uses (device, GID, MTU, memory path...)
//   for each size in params.sizes:
//     control barrier "size N"
//     RunSize(size, control)           -->  warmup, then measured phase; raw SideMeasurement
//     measurements exchanged, figures computed (model::MakeBwFigures / MakeLatencyFigures)
//   destructor                         -->  tear down (verbs: QPs, CQs, MRs, PD, context, in order)
//
// Both sides call Setup/RunSize in the same order with the same params, so a
// transport may use control.Exchange() freely in them (e.g. QPN/PSN/rkey
// exchange, a "receives posted" barrier before the client writes, the final
// "done" of a passive RDMA write server). Every wait inside a transport must
// honour local.io_timeout and local.cancel, and fail with a Status that names
// the peer (control.PeerName()) and the phase.
//
// Roles: the client is the side that ran `fabcheck perf run`. In a
// unidirectional bw test the client sends (write/send: client -> server; read:
// the client reads from the server). In a lat test the client starts each
// ping-pong. In a bidir bw test both sides send at once.
//
// The verbs transport lives in src/perf/verbs/ and plugs in through
//   perf/verbs/verbs_transport.h:
//     namespace fabcheck::perf::verbs {
//     Result<std::unique_ptr<Transport>> CreateVerbsTransport();
//     }
// CreateTransport() picks it up when that header exists at build time; until
// then `--transport verbs` is refused as unavailable.
#pragma once

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/budget.h"
#include "base/status.h"
#include "fabcheck/model/perf.h"
#include "sys/sysroot.h"

namespace fabcheck::perf {

enum class TransportKind { kTcp, kVerbs };
std::string_view TransportName(TransportKind kind);  // "tcp", "verbs"
std::optional<TransportKind> ParseTransportKind(std::string_view name);

// --transport as every command spells it: tcp, verbs (or rdma), or auto, the
// default: verbs where this node has an RDMA device, else tcp, and why_tcp
// says so (the command prints it: a TCP figure is never taken for RDMA).
// nullopt for any other word.
struct TransportChoice {
  TransportKind kind = TransportKind::kTcp;
  std::string why_tcp;  // set when auto fell to tcp
};
std::optional<TransportChoice> ChooseTransport(std::string_view name, const sys::SysRoot& root);

enum class Role { kClient, kServer };
std::string_view RoleName(Role role);  // "client", "server"

// Where a side's buffers live: "host" or "cuda:N".
struct MemorySpec {
  enum class Kind { kHost, kCuda };
  Kind kind = Kind::kHost;
  int cuda_device = 0;

  static Result<MemorySpec> Parse(std::string_view text);
  std::string ToString() const;
  bool is_cuda() const { return kind == Kind::kCuda; }
  friend bool operator==(const MemorySpec&, const MemorySpec&) = default;
};

// NUMA binding of a side's data threads and buffers: "auto" (the NIC's node
// when known, else unbound), "off", or a node number.
struct NumaSpec {
  enum class Mode { kAuto, kOff, kNode };
  Mode mode = Mode::kAuto;
  int node = -1;  // for kNode

  static Result<NumaSpec> Parse(std::string_view text);
  std::string ToString() const;
  friend bool operator==(const NumaSpec&, const NumaSpec&) = default;
};

// What one side should use. The client fills both: its own from --device,
// --port, --gid-index, --mem, --numa, and the server's from --server-* options
// (empty = the server chooses, e.g. the device carrying the control address).
struct EndpointSpec {
  std::string device;             // verbs: "mlx5_0"; tcp: ignored (routing decides); "" = auto
  int port = 0;                   // verbs port; 0 = the first ACTIVE port
  std::optional<int> gid_index;   // verbs; nullopt = auto (RoCE v2, IPv4, on the port's netdev, as NCCL)
  MemorySpec mem;
  NumaSpec numa;
  friend bool operator==(const EndpointSpec&, const EndpointSpec&) = default;
};

// The L5 KV-cache pattern (test kKv, `fabcheck kv`). Per request, for each
// of `layers` layers, `pages_per_layer` pages of sizes[0] bytes are written
// into the server's destination pages, then one notification per layer that
// the server acknowledges. The server allocates `pool_pages` destination pages
// and a shuffled page table over them (a paged KV cache's block table), sent to
// the client; page k of a request lands on table[k % pool_pages], so a request
// larger than the pool reuses pages (the benchmark moves and times bytes, it
// keeps no cache). streams = requests in flight (one connection or QP each),
// iters = measured requests in all (or duration_s), warmup = unmeasured
// requests first.
struct KvPattern {
  int layers = 0;
  uint64_t pages_per_layer = 0;
  uint64_t pool_pages = 0;
  friend bool operator==(const KvPattern&, const KvPattern&) = default;
};
inline constexpr uint64_t kMaxKvPoolPages = 65536;

// The negotiated request: the client sends it, the server validates it
// against its limits, and both sides run exactly this.
struct TestParams {
  TransportKind transport = TransportKind::kTcp;
  model::PerfTest test = model::PerfTest::kBw;
  model::PerfOp op = model::PerfOp::kWrite;  // tcp: only kSend/kWrite (both mean the byte stream)
  bool bidir = false;                        // bw only
  std::vector<uint64_t> sizes;               // message sizes, run in this order
  uint64_t iters = 0;                        // measured iterations per stream/QP; 0 = run for duration_s
  double duration_s = 0;                     // measured time per size when iters == 0
  uint64_t warmup = 0;                       // iterations per stream before measuring (not counted)
  int streams = 1;                           // QPs (verbs) or TCP connections (tcp)
  int tx_depth = 128;                        // verbs: outstanding sends per QP (perftest default)
  int cq_moderation = 100;                   // verbs: signal one send in N (perftest default)
  int inline_size = 0;                       // verbs: max inline bytes; 0 = no inline
  int mtu = 0;                               // verbs: path MTU in bytes; 0 = the port's active MTU
  std::optional<int> tclass;                 // verbs: traffic class (RoCE DSCP<<2); tcp: IP TOS
  std::optional<int> sl;                     // verbs: service level (IB)
  bool validate = false;                     // fill with a pattern, receiver verifies every message
  bool use_cm = false;                       // verbs: connect through rdma_cm
  KvPattern kv;                              // test kKv only
  EndpointSpec client;
  EndpointSpec server;

  // The side `role` runs on.
  const EndpointSpec& local(Role role) const { return role == Role::kClient ? client : server; }
  // The user-visible summary recorded in PerfResult.
  model::PerfSettings ToSettings() const;
};

void to_json(nlohmann::json& j, const TestParams& p);
// Throws nlohmann::json exceptions on malformed input; use ParseTestParams.
void from_json(const nlohmann::json& j, TestParams& p);
// Decodes a request from the wire; InvalidArgument naming the bad field.
Result<TestParams> ParseTestParams(const nlohmann::json& j);
// Checks that the request makes sense on its own (sizes, counts, op vs test,
// ranges). Transport- and server-specific checks come on top of it.
Status ValidateTestParams(const TestParams& p);
// The kv part of it (test kKv): layers, pages, pool, and what the pattern excludes.
Status ValidateKvPattern(const TestParams& p);

// What a transport can do on this node. Reported in the handshake; the engine
// refuses requests outside it before anything is allocated.
struct Capabilities {
  std::vector<model::PerfOp> ops;        // ops supported for bw and lat
  bool bidir = true;
  int max_streams = 1;                   // QPs or connections
  uint64_t max_message = 0;              // largest message size
  bool cuda_memory = false;              // --mem cuda:N possible (staged or direct)
  bool gpudirect = false;                // cuda buffers registered directly (dmabuf/peermem)
  int max_inline = 0;                    // verbs: largest inline size the device allows (0: none)
  bool rdma_cm = false;                  // verbs: --cm available
  bool duration_mode = true;             // --duration supported
  bool kv = false;                       // the KV-cache pattern (test kKv)
  std::vector<std::string> notes;        // why something is missing ("no RDMA device", "libcudart absent")
  bool Supports(model::PerfOp op) const;
};
void to_json(nlohmann::json& j, const Capabilities& c);
void from_json(const nlohmann::json& j, Capabilities& c);
// FailedPrecondition/Unimplemented naming the first unsupported request item.
Status CheckCapabilities(const TestParams& p, const Capabilities& caps);
// The same for one side: only that side's memory type is checked against caps.
Status CheckCapabilities(const TestParams& p, const Capabilities& caps, Role role);

// The control connection as the transport sees it during Setup and RunSize.
class ControlChannel {
 public:
  virtual ~ControlChannel() = default;
  // Sends `mine` labelled `phase`, then waits up to `timeout` for the peer's
  // message for the same phase and returns it. Both sides call Exchange in the
  // same order. Fails (naming peer and phase) on timeout, disconnect, garbage,
  // a phase mismatch, or when the peer reports an error instead.
  virtual Result<nlohmann::json> Exchange(std::string_view phase, const nlohmann::json& mine,
                                          std::chrono::milliseconds timeout) = 0;
  // "client 10.0.0.1:41234" / "server 10.0.0.2:18515": for error messages.
  virtual std::string PeerName() const = 0;
  // For data loops that wait on something else: nullopt while the peer keeps
  // the control connection open; once it has closed it, the error to report:
  // the reason the peer sent before closing, or that it exited or was killed.
  // Blocks at most a moment to read what the peer left queued.
  virtual std::optional<Status> PeerGone() { return std::nullopt; }
  // Exchange with an empty object: both sides have reached `phase`.
  Status Barrier(std::string_view phase, std::chrono::milliseconds timeout) {
    return Exchange(phase, nlohmann::json::object(), timeout).status();
  }
};

// The environment of one side for one test.
struct LocalContext {
  Role role = Role::kClient;
  const EndpointSpec* spec = nullptr;     // == &params.local(role)
  // The node this side reads (the NIC's NUMA node and netdevs, NUMA CPUs,
  // retry counters): the root the command gave ClientOptions/ServeOptions.
  const sys::SysRoot* root = nullptr;
  std::string control_local_addr;         // this side's address on the control connection ("10.0.0.2")
  std::string control_peer_addr;          // the peer's address on the control connection
  std::chrono::milliseconds connect_timeout{10000};
  std::chrono::milliseconds io_timeout{30000};  // the longest any single wait may block
  const std::atomic<bool>* cancel = nullptr;    // set when the engine gives up (server shutdown)
  // Client, tcp: TTL-limited probes 1..trace_hops on each data connection's
  // 5-tuple before it connects (perf/flow_path.h); 0 = none.
  int trace_hops = 0;
  // The budget this side's worker threads count against (a request's share
  // when an agent runs the test for a caller); null = the process's.
  base::Budget* threads = nullptr;
  bool cancelled() const { return cancel != nullptr && cancel->load(std::memory_order_relaxed); }
};

// Raw figures of one size on one side. The engine turns them into
// model::PerfSizeResult; transports never compute Gb/s or percentiles.
struct SideMeasurement {
  uint64_t iterations = 0;     // measured iterations per stream/QP (warmup excluded)
  // What this side sent in the measured phase (all streams together; for
  // read: what this side's posted reads fetched) and how
  // long it took, from the first post to the last completion (for TCP: to the
  // receiver's acknowledgement that it has everything).
  uint64_t tx_bytes = 0;
  uint64_t tx_messages = 0;
  double tx_elapsed_s = 0;
  double tx_peak_gbps = 0;     // best window seen; 0 when not measured
  // What this side received (bidir and passive receivers), same conventions.
  uint64_t rx_bytes = 0;
  uint64_t rx_messages = 0;
  double rx_elapsed_s = 0;
  double rx_peak_gbps = 0;     // best window seen by the receiver; 0 when not measured
  // lat: the raw round-trip times in microseconds of the measured
  // iterations (iters-1 deltas of consecutive ping-pong timestamps, as
  // perftest), on the side that timed them (the client). Never halved here.
  std::vector<double> rtt_us;
  // bw with several streams: what each of this side's sending streams sent in
  // the measured phase and how long it took, in connection order (empty when
  // the transport cannot tell streams apart).
  std::vector<uint64_t> stream_tx_bytes;
  std::vector<double> stream_tx_elapsed_s;
  // --validate: messages whose contents did not match the pattern.
  uint64_t validate_errors = 0;
  std::string validate_detail;  // the first mismatch: "stream 2 message 17 byte 4096: got 0x13 want 0x12"
  // kv: measured requests and layer notifications (tx_messages counts pages),
  // and on the client, which timed them, each measured request's transfer
  // time (first page posted to the last layer's notification acknowledged)
  // and each layer's (its first page posted to its acknowledgement), in
  // microseconds. Only the counts travel.
  uint64_t kv_requests = 0;
  uint64_t kv_notifications = 0;
  std::vector<double> request_us;
  std::vector<double> layer_us;
};

// The interface every transport implements.
class Transport {
 public:
  virtual ~Transport() = default;
  virtual TransportKind kind() const = 0;
  // What this node can do. Cheap; may probe devices (verbs) but allocates nothing lasting.
  virtual Capabilities GetCapabilities() const = 0;
  // Bytes of buffer memory Setup would allocate for `params` on side `role`;
  // the server compares it with its limits before calling Setup.
  virtual uint64_t MemoryNeeded(const TestParams& params, Role role) const = 0;
  // Allocates, connects to the peer (through `control` for the exchange).
  virtual Status Setup(const TestParams& params, const LocalContext& local, ControlChannel& control) = 0;
  // Runs `size` (warmup, then measured phase) and returns this side's raw figures.
  virtual Result<SideMeasurement> RunSize(uint64_t size, ControlChannel& control) = 0;
  // What this side actually uses; valid after Setup. The engine adds host,
  // version and CPU figures.
  virtual model::PerfEndpoint Describe() const = 0;
};

// Creates an unconnected transport of `kind`; Unavailable when it was not
// built in or cannot run here (with the reason and fix).
Result<std::unique_ptr<Transport>> CreateTransport(TransportKind kind);

}  // namespace fabcheck::perf
