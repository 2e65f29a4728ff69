#include "control/client.h"
#include "base/json_text.h"

#include <fmt/format.h>
#include <httplib.h>

#include <mutex>

#include "base/log.h"
#include "control/budgets.h"
#include "net/address.h"
#include "net/http_client.h"
#include "net/json_call.h"

namespace fabcheck::control {

namespace {

// Over plain HTTP the bearer token crosses the network as it is: anyone on the
// path (or an impostor on an agent's address) can read it and then use every
// agent. It is still sent (the agents require it, and refusing would stop
// every plain-HTTP cluster), but never silently: once per process.
void WarnTokenInClearText(const HostPort& first) {
  static std::once_flag once;
  std::call_once(once, [&] {
    LOG_WARN("control", "the agents' token goes in clear text over plain HTTP (first to {}): anyone on the path can "
             "read it. Serve the agents over HTTPS (--tls-cert/--tls-key) and give this command --tls-ca",
             first.ToString());
  });
}

}  // namespace

AgentClient::AgentClient(HostPort endpoint, ClientOptions options)
    : endpoint_(std::move(endpoint)), options_(std::move(options)) {}

Result<nlohmann::json> AgentClient::Call(const std::string& method, const std::string& path, const std::string& body,
                                         std::chrono::milliseconds read_timeout) const {
  const net::TlsFiles* tls = options_.tls ? &*options_.tls : nullptr;
  httplib::Client http = net::MakeHttpClient(endpoint_.host, endpoint_.port, tls, endpoint_.tls_name);
  http.set_connection_timeout(options_.connect_timeout);
  http.set_read_timeout(read_timeout);
  http.set_write_timeout(options_.connect_timeout);
  // /v1/health is public: the token is not sent where it is not needed.
  if (options_.token && path != "/v1/health") {
    http.set_bearer_token_auth(*options_.token);
    if (!tls && !net::IsLoopbackAddress(endpoint_.host)) WarnTokenInClearText(endpoint_);
  }
  net::JsonCall call;
  call.method = method;
  call.path = path;
  call.body = body;
  call.where = fmt::format("agent {} {} {}", endpoint_.ToString(), method, path);
  call.unreachable_hint = "(is 'fabcheck agent' running there and the port open?)";
  call.tls = tls;
  call.tls_name = endpoint_.tls_name.empty() ? endpoint_.host : endpoint_.tls_name;
  call.max_body = MaxAnswerBytes(path);
  // The whole call, answer included, within connect + write + the route's wait.
  call.deadline = std::chrono::steady_clock::now() + 2 * options_.connect_timeout + read_timeout;
  return net::CallJson(http, call);
}

Result<nlohmann::json> AgentClient::Health() const { return Call("GET", "/v1/health", "", options_.read_timeout); }

Result<AgentInfo> AgentClient::Info() const {
  ASSIGN_OR_RETURN(nlohmann::json j, Call("GET", "/v1/info", "", options_.read_timeout));
  try {
    return j.get<AgentInfo>();
  } catch (const nlohmann::json::exception& e) {
    return DataLossError(fmt::format("agent {}: /v1/info is malformed: {}", endpoint_.ToString(), e.what()));
  }
}

Result<nlohmann::json> AgentClient::Inventory() const {
  return Call("GET", "/v1/inventory", "", options_.read_timeout);
}

Result<nlohmann::json> AgentClient::Node(const nlohmann::json& request, std::chrono::milliseconds timeout) const {
  return Call("POST", "/v1/node", ToJsonText(request), timeout);
}

Result<nlohmann::json> AgentClient::Counters(std::chrono::milliseconds timeout) const {
  return Call("GET", "/v1/counters", "", timeout);
}

Result<nlohmann::json> AgentClient::Coll(const nlohmann::json& request, std::chrono::milliseconds timeout) const {
  return Call("POST", "/v1/coll", ToJsonText(request), timeout);
}

Result<nlohmann::json> AgentClient::Kv(const nlohmann::json& request, std::chrono::milliseconds timeout) const {
  return Call("POST", "/v1/kv", ToJsonText(request), timeout);
}

Result<PeerTestResponse> AgentClient::RunTest(const PeerTestRequest& request, std::chrono::milliseconds timeout) const {
  ASSIGN_OR_RETURN(nlohmann::json j, Call("POST", "/v1/test", ToJsonText(nlohmann::json(request)), timeout));
  try {
    return j.get<PeerTestResponse>();
  } catch (const nlohmann::json::exception& e) {
    return DataLossError(fmt::format("agent {}: /v1/test answer is malformed: {}", endpoint_.ToString(), e.what()));
  }
}

}  // namespace fabcheck::control
