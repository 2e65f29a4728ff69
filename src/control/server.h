// The agent's HTTP/JSON control server (control/api.h lists the routes).
//
// The server only routes and authenticates; what a test does and what the
// inventory says come from the callbacks the `agent` command wires in, so
// this module stays below perf and sweep.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "control/api.h"
#include "net/http_service.h"

namespace fabcheck::control {

using TestHandler = std::function<Result<PeerTestResponse>(const PeerTestRequest&)>;
using InventoryHandler = std::function<Result<nlohmann::json>()>;
// A route that takes a JSON request and answers JSON (GET routes get {}).
using JsonHandler = std::function<Result<nlohmann::json>(const nlohmann::json& request)>;

struct AgentServerOptions {
  std::string bind = "0.0.0.0";
  int port = kDefaultControlPort;        // 0 = any free port
  std::optional<std::string> token;      // required on every route but /v1/health
  AgentInfo info;                        // served on /v1/info (control_port filled in)
  TestHandler run_test;                  // POST /v1/test; empty = 501
  InventoryHandler inventory;            // GET /v1/inventory; empty = 501
  JsonHandler node;                      // POST /v1/node (ladder: inventory + doctor + snapshot); empty = 501
  JsonHandler counters;                  // GET /v1/counters (ladder: port, hw and PFC counters); empty = 501
  JsonHandler coll;                      // POST /v1/coll (ladder L4: this node's ranks of a coll job); empty = 501
  JsonHandler kv;                        // POST /v1/kv (kv fan-in/fan-out: transfers from this node); empty = 501
  int max_concurrent_tests = 8;          // beyond it: 409 busy (one per rail is normal)
  // Connections, header and body sizes, time per request. The workers are
  // set from max_concurrent_tests (tests hold theirs while they run), so a
  // health check always finds one free.
  net::HttpLimits limits;
  std::shared_ptr<const net::TlsContext> tls;  // HTTPS when set (net/tls.h)
};

class AgentServer {
 public:
  // Binds (errors name the address and the fix) and serves; returns once it serves.
  static Result<std::unique_ptr<AgentServer>> Start(AgentServerOptions options);
  ~AgentServer();
  AgentServer(const AgentServer&) = delete;
  AgentServer& operator=(const AgentServer&) = delete;

  int port() const { return port_.load(); }
  // Replaces what /v1/info serves (ports known only after binding).
  void SetInfo(AgentInfo info);
  void Stop();
  uint64_t tests_served() const { return tests_.load(); }

 private:
  explicit AgentServer(AgentServerOptions options) : options_(std::move(options)) {}

  AgentServerOptions options_;
  std::unique_ptr<net::HttpService> http_;
  std::atomic<int> port_{0};
  std::mutex info_mu_;
  std::mutex node_mu_;  // one /v1/node or /v1/counters at a time
  std::atomic<int> running_tests_{0};
  std::atomic<uint64_t> tests_{0};
};

}  // namespace fabcheck::control
