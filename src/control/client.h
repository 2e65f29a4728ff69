// The coordinator's side of the control API: talks to one agent, every call
// bounded by a timeout, every failure a Status naming the agent.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "control/api.h"
#include "net/tls.h"

namespace fabcheck::control {

struct ClientOptions {
  std::optional<std::string> token;
  std::chrono::milliseconds connect_timeout{3000};
  std::chrono::milliseconds read_timeout{10000};  // for info/health; tests pass their own
  // HTTPS: the agents' CA (empty: the system's store) and, for mutual TLS,
  // this client's certificate and key. nullopt: plain HTTP.
  std::optional<net::TlsFiles> tls;
};

class AgentClient {
 public:
  AgentClient(HostPort endpoint, ClientOptions options);
  const HostPort& endpoint() const { return endpoint_; }

  Result<nlohmann::json> Health() const;
  Result<AgentInfo> Info() const;
  Result<nlohmann::json> Inventory() const;
  // Ladder routes (control/api.h); each waits up to `timeout`.
  Result<nlohmann::json> Node(const nlohmann::json& request, std::chrono::milliseconds timeout) const;
  Result<nlohmann::json> Counters(std::chrono::milliseconds timeout) const;
  Result<nlohmann::json> Coll(const nlohmann::json& request, std::chrono::milliseconds timeout) const;
  // `fabcheck kv run --agents`: this agent runs KV transfers (kv/fan.h).
  Result<nlohmann::json> Kv(const nlohmann::json& request, std::chrono::milliseconds timeout) const;
  // Waits up to `timeout` for the agent to finish the test.
  Result<PeerTestResponse> RunTest(const PeerTestRequest& request, std::chrono::milliseconds timeout) const;

 private:
  Result<nlohmann::json> Call(const std::string& method, const std::string& path, const std::string& body,
                              std::chrono::milliseconds read_timeout) const;
  HostPort endpoint_;
  ClientOptions options_;
};

}  // namespace fabcheck::control
