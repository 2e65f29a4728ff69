// PerfResult: the result of one `fabcheck perf run` (rung L3), over verbs or TCP.
//
// JSON schema "fabcheck.perf/v1". Figures follow perftest's semantics so users
// can compare line by line (see docs/perf.md):
//   BW      = bytes * iterations * streams / elapsed; Gb/s uses 1e9 bits, MiB/s 2^20 bytes.
//   message rate (Mpps) = messages / elapsed / 1e6.
//   latency = iters-1 deltas between consecutive iterations, sorted, the 2 largest dropped;
//             write/send report half the round trip, read the full round trip.
// Besides the figures, a result records what was actually used (transport,
// device, GID, memory type and registration path, NUMA, CPU) so a TCP result
// can never pass for an RDMA one, nor a staged one for GPUDirect.
//
// Later changes are additive only: sweep and the ladder consume these values.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fabcheck::model {

inline constexpr const char* kPerfSchema = "fabcheck.perf/v1";

// kKv is the L5 KV-cache pattern (`fabcheck kv`): per request and layer,
// scattered page writes into a destination page table, then a notification.
enum class PerfTest { kBw, kLat, kKv };
// kWriteImm is RDMA write with immediate (verbs only); kSend is send/receive
// (verbs) or the plain byte stream (tcp).
enum class PerfOp { kWrite, kWriteImm, kRead, kSend };

std::string_view PerfTestName(PerfTest test);  // "bw", "lat", "kv"
std::optional<PerfTest> ParsePerfTest(std::string_view name);
std::string_view PerfOpName(PerfOp op);  // "write", "write_imm", "read", "send"
std::optional<PerfOp> ParsePerfOp(std::string_view name);

// Bandwidth figures of one direction (or the sum of both).
struct BwFigures {
  double avg_gbps = 0;   // bytes * 8 / elapsed / 1e9
  double peak_gbps = 0;  // best short window seen (0 when the transport cannot tell)
  double avg_mibps = 0;  // bytes / elapsed / 2^20
  double mpps = 0;       // messages / elapsed / 1e6
  uint64_t bytes = 0;    // payload bytes moved in the measured phase
  uint64_t messages = 0;
  double elapsed_s = 0;
};

// Latency figures in microseconds, after perftest's rules (see the top of this file).
struct LatencyFigures {
  uint64_t samples = 0;  // deltas kept after dropping the tail
  double min_us = 0;
  double median_us = 0;  // perftest's "typical"
  double avg_us = 0;
  double p90_us = 0;
  double p99_us = 0;
  double p999_us = 0;
  double max_us = 0;
  double stdev_us = 0;   // population standard deviation, as perftest
  bool half_round_trip = true;  // true for write/send (RTT/2), false for read (full RTT)
};

// The figures for one message size.
struct PerfSizeResult {
  uint64_t bytes = 0;       // message size
  uint64_t iterations = 0;  // measured iterations per stream/QP (warmup excluded)
  std::optional<BwFigures> bw;         // bw test: unidirectional figures, or the sum when bidirectional
  std::optional<BwFigures> bw_tx;      // bidirectional: client -> server
  std::optional<BwFigures> bw_rx;      // bidirectional: server -> client
  std::optional<LatencyFigures> lat;   // lat test
  // Unidirectional bw with several streams: each stream's Gb/s, in stream
  // order (empty otherwise, or when the transport cannot tell streams apart).
  std::vector<double> stream_gbps;
  uint64_t validate_errors = 0;        // mismatching buffers seen by the receivers (--validate)
  std::string error;                   // non-empty when this size failed; the rest may be partial
};

// CPU used by one side during the measured phases, in percent of one core
// (user + system of the process, over wall time; 200 = two cores busy).
struct CpuUse {
  double percent = 0;
  double user_s = 0;
  double system_s = 0;
};

// The routers one data connection crossed, from TTL-limited probes on its
// 5-tuple (tcp client with path tracing): hops[t-1] answered TTL t, "" none.
struct PerfFlowPath {
  int local_port = 0;
  std::vector<std::string> hops;
};

// What one side (client or server) actually used.
struct PerfEndpoint {
  std::string role;              // "client" or "server"
  std::string host;              // address of this side on the control connection
  std::string fabcheck_version;
  std::string device;            // "mlx5_0" (verbs) or the netdev carrying the data (tcp), "" when unknown
  int port = 0;                  // verbs port number (0 for tcp)
  std::optional<int> gid_index;  // verbs only
  std::string gid_type;          // "RoCE v2", "RoCE v1", "IB" (verbs only)
  std::string gid;               // GID address as text (verbs only)
  std::string link_layer;        // "InfiniBand", "Ethernet" (verbs only)
  int mtu = 0;                   // active path MTU in bytes (IB MTU for verbs, interface MTU for tcp)
  // verbs: this port's own active MTU; the path takes the smaller of both
  // ends', so two ends that differ show here, not in `mtu` (0: not known).
  int port_mtu = 0;
  std::string memory;            // "host" or "cuda:N"
  // How the buffers were made reachable: "host" (plain host memory), "dmabuf"
  // (ibv_reg_dmabuf_mr on GPU memory), "peermem" (nvidia-peermem), "staged"
  // (GPU memory copied through pinned host memory; NOT GPUDirect).
  std::string registration;
  bool gpudirect = false;        // true only for dmabuf/peermem registrations
  std::optional<int> numa_node;  // the node threads and buffers were bound to; empty when not bound
  std::string numa_policy;       // "auto", "off", or the node number asked for
  std::vector<int> cpus;         // CPUs the data threads were pinned to (empty: not pinned)
  CpuUse cpu;
  bool zerocopy = false;         // tcp: MSG_ZEROCOPY used for sends
  std::vector<std::string> notes;  // anything worth knowing (e.g. "numa: NIC node unknown, not pinned")
  std::vector<PerfFlowPath> flows;  // per data connection, when its path was traced (else empty)
};

// The parameters the client asked for and the server accepted.
struct PerfSettings {
  std::string transport;       // "verbs" or "tcp"
  PerfTest test = PerfTest::kBw;
  PerfOp op = PerfOp::kWrite;
  bool bidir = false;
  std::vector<uint64_t> sizes;
  uint64_t iters = 0;          // 0 when duration-driven
  double duration_s = 0;       // 0 when iteration-driven
  uint64_t warmup = 0;
  int streams = 1;             // QPs (verbs) or TCP connections (tcp)
  int tx_depth = 0;
  int inline_size = 0;         // verbs: max inline bytes requested (0 = none)
  int mtu = 0;                 // requested MTU (0 = the port's)
  std::optional<int> tclass;
  std::optional<int> sl;
  bool validate = false;
  bool use_cm = false;         // verbs: connected through rdma_cm
};

struct PerfResult {
  std::string schema = kPerfSchema;
  int protocol_version = 0;    // the negotiated fabcheck perf protocol version
  std::string started_at;      // ISO 8601 UTC
  std::string server;          // HOST:PORT the client connected to
  PerfSettings settings;
  PerfEndpoint client;
  PerfEndpoint server_side;    // JSON key "server_endpoint"
  std::vector<PerfSizeResult> results;
  std::string error;           // non-empty when the run failed (with peer and phase)
  bool ok() const;             // no run error and no size error/validation error
};

// Fills the bandwidth figures from raw totals. elapsed_s <= 0 gives zeros.
BwFigures MakeBwFigures(uint64_t bytes, uint64_t messages, double elapsed_s, double peak_gbps = 0);
// The sum of two directions: bytes and messages add, elapsed is the longer one,
// rates add (perftest's client prints the sum of both sides' rates).
BwFigures SumBwFigures(const BwFigures& a, const BwFigures& b);
// perftest's latency math over raw per-iteration round-trip times in µs (the
// iters-1 deltas): sort, drop the 2 largest (when more than 2), median, average,
// population stdev, p = sorted[min(ceil(p*m), m-1)]; every figure divided by 2
// when half_round_trip. Empty input gives nullopt.
std::optional<LatencyFigures> MakeLatencyFigures(std::vector<double> rtt_us, bool half_round_trip);

void to_json(nlohmann::json& j, const PerfTest& v);
void from_json(const nlohmann::json& j, PerfTest& v);
void to_json(nlohmann::json& j, const PerfOp& v);
void from_json(const nlohmann::json& j, PerfOp& v);
void to_json(nlohmann::json& j, const BwFigures& v);
void from_json(const nlohmann::json& j, BwFigures& v);
void to_json(nlohmann::json& j, const LatencyFigures& v);
void from_json(const nlohmann::json& j, LatencyFigures& v);
void to_json(nlohmann::json& j, const PerfSizeResult& v);
void from_json(const nlohmann::json& j, PerfSizeResult& v);
void to_json(nlohmann::json& j, const CpuUse& v);
void from_json(const nlohmann::json& j, CpuUse& v);
void to_json(nlohmann::json& j, const PerfFlowPath& v);
void from_json(const nlohmann::json& j, PerfFlowPath& v);
void to_json(nlohmann::json& j, const PerfEndpoint& v);
void from_json(const nlohmann::json& j, PerfEndpoint& v);
void to_json(nlohmann::json& j, const PerfSettings& v);
void from_json(const nlohmann::json& j, PerfSettings& v);
void to_json(nlohmann::json& j, const PerfResult& v);
void from_json(const nlohmann::json& j, PerfResult& v);

}  // namespace fabcheck::model
