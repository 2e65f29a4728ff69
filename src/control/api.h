// The agent's control API: what `fabcheck agent` answers over HTTP/JSON and
// what a sweep coordinator asks of it. Versioned under /v1/.
//
//   GET  /v1/health     {"status": "ok", "name": ..., "version": ...}   (no token needed: liveness probes)
//   GET  /v1/info       AgentInfo ("fabcheck.agent/v1"): ports, data-plane rails
//   GET  /v1/inventory  the node's inventory ("fabcheck.inventory/v1"), 501 when not built in
//   POST /v1/test       PeerTestRequest -> PeerTestResponse: this agent tests a peer agent
//   POST /v1/node       {"profile_yaml", "profile_name", "snapshot"} -> {"inventory", "doctor", "facts",
//                       "snapshot_b64", "errors"}: the ladder's L1/L2 evidence of this node (agent/node_service.h)
//   GET  /v1/counters   {"time_unix", "values": {object: {counter: value}}}: RDMA port, hw and PFC counters
//   POST /v1/coll       this node's ranks of one `fabcheck coll` job (ladder L4; agent/coll_service.h);
//                       409 while a job runs
//   POST /v1/kv         {"targets": [...], "run": {...}} -> {"results": [...]}: this node runs KV transfers
//                       (`fabcheck kv run`) into the targets' perf servers at once (kv/fan.h); 409 while
//                       max_concurrent_tests run
//
// With a token configured every route but /v1/health needs the header
// "Authorization: Bearer <token>"; otherwise 401. Errors are
// {"error": "..."} with 400 (bad request), 401, 409 (busy), 429 (over one of
// the agent's budgets, or out of memory), 500, 501, 503, 504: the one table of
// net/json_call.h.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace fabcheck::control {

inline constexpr int kDefaultControlPort = 18521;
inline constexpr const char* kAgentSchema = "fabcheck.agent/v1";

// One data-plane interface of the node: rail i = NIC i.
struct RailInfo {
  std::string interface;  // "net1", "ib0"; "" when only an address was given
  std::string address;    // the address peers use to reach this rail
  int mtu = 0;            // interface MTU, 0 when unknown
};

struct AgentInfo {
  std::string schema = kAgentSchema;
  std::string name;              // hostname (or pod name)
  std::string fabcheck_version;
  int control_port = 0;
  int perf_port = 0;             // the perf server peers connect to
  int mtu_port = 0;              // the UDP echo of the path-MTU probe
  std::vector<std::string> transports;  // what its perf server can run: ["tcp"], ["tcp", "verbs"] with an RDMA device
  std::vector<RailInfo> rails;   // empty: peers use the control address
  bool auth = false;             // a token is required
};

// Asks an agent to test one peer, on one rail, in the direction agent -> peer.
struct PeerTestRequest {
  std::string peer;              // the peer's data address
  std::string peer_name;         // for messages
  int perf_port = 0;
  int mtu_port = 0;
  std::string source;            // the local data address to send from ("" = routing decides)
  std::string transport = "tcp";
  bool bandwidth = true;
  bool latency = true;
  bool mtu = true;
  uint64_t bw_size = 1 << 20;    // bytes per message
  double bw_duration_s = 1.0;
  int streams = 1;
  uint64_t lat_size = 64;
  double lat_duration_s = 0.3;
  int timeout_ms = 30000;        // the longest any step may take
  // Before the bandwidth test, learn each stream's routers with TTL-limited
  // probes 1..path_hops on its own 5-tuple (tcp; 0 = not asked).
  int path_hops = 0;
};

struct PeerTestResponse {
  std::optional<double> bw_gbps;
  std::optional<double> lat_median_us;  // one-way (RTT / 2)
  std::optional<double> lat_p99_us;
  std::optional<int> path_mtu;
  int local_mtu = 0;
  bool black_hole = false;
  std::string transport;         // what really ran
  std::string device;            // the local device/netdev the test used, when known
  std::vector<std::string> errors;  // one per failed step, naming the step and the peer
  double elapsed_s = 0;
  // Several streams: each one's Gb/s, and with path_hops the routers it
  // crossed (flow_hops[i][t-1] answered TTL t; "" none). Empty otherwise.
  std::vector<double> flow_gbps;
  std::vector<std::vector<std::string>> flow_hops;
};

void to_json(nlohmann::json& j, const RailInfo& r);
void from_json(const nlohmann::json& j, RailInfo& r);
void to_json(nlohmann::json& j, const AgentInfo& a);
void from_json(const nlohmann::json& j, AgentInfo& a);
void to_json(nlohmann::json& j, const PeerTestRequest& r);
void from_json(const nlohmann::json& j, PeerTestRequest& r);
void to_json(nlohmann::json& j, const PeerTestResponse& r);
void from_json(const nlohmann::json& j, PeerTestResponse& r);

// Decodes and checks a request (InvalidArgument naming the bad field).
Result<PeerTestRequest> ParsePeerTestRequest(const std::string& body);

// "host:port", "[v6]:port" -> host, port. `default_port` when the port is left out.
struct HostPort {
  std::string host;
  int port = 0;
  // With TLS: the name its certificate must carry when that is not `host`
  // (an SPMD rank, reached by the address it joined from). "" = `host`.
  std::string tls_name = {};  // initialised, so {host, port} needs no third field
  std::string ToString() const;
};
Result<HostPort> ParseHostPort(std::string_view text, int default_port);

}  // namespace fabcheck::control
