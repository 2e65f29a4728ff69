#include "control/api.h"

#include "fabcheck/model/json_fields.h"

#include <fmt/format.h>

#include "base/strings.h"

namespace fabcheck::control {
namespace {

using fabcheck::model::json_fields::Number;
using fabcheck::model::json_fields::NumberOr;
using fabcheck::model::json_fields::NumbersOr;
using fabcheck::model::json_fields::Optional;
using fabcheck::model::json_fields::PutNullable;

}  // namespace

void to_json(nlohmann::json& j, const RailInfo& r) {
  j = {{"interface", r.interface}, {"address", r.address}, {"mtu", r.mtu}};
}
void from_json(const nlohmann::json& j, RailInfo& r) {
  r.interface = j.value("interface", "");
  r.address = j.value("address", "");
  r.mtu = NumberOr(j, "mtu", 0);
}

void to_json(nlohmann::json& j, const AgentInfo& a) {
  j = {{"schema", a.schema},       {"name", a.name},         {"fabcheck_version", a.fabcheck_version},
       {"control_port", a.control_port}, {"perf_port", a.perf_port}, {"mtu_port", a.mtu_port},
       {"transports", a.transports}, {"rails", a.rails},     {"auth", a.auth}};
}
void from_json(const nlohmann::json& j, AgentInfo& a) {
  a.schema = j.value("schema", "");
  a.name = j.value("name", "");
  a.fabcheck_version = j.value("fabcheck_version", "");
  a.control_port = NumberOr(j, "control_port", 0);
  a.perf_port = Number<int>(j.at("perf_port"), "perf_port");
  a.mtu_port = Number<int>(j.at("mtu_port"), "mtu_port");
  a.transports = j.value("transports", std::vector<std::string>{});
  a.rails = j.value("rails", std::vector<RailInfo>{});
  a.auth = j.value("auth", false);
}

void to_json(nlohmann::json& j, const PeerTestRequest& r) {
  j = {{"peer", r.peer},
       {"peer_name", r.peer_name},
       {"perf_port", r.perf_port},
       {"mtu_port", r.mtu_port},
       {"source", r.source},
       {"transport", r.transport},
       {"bandwidth", r.bandwidth},
       {"latency", r.latency},
       {"mtu", r.mtu},
       {"bw_size", r.bw_size},
       {"bw_duration_s", r.bw_duration_s},
       {"streams", r.streams},
       {"lat_size", r.lat_size},
       {"lat_duration_s", r.lat_duration_s},
       {"timeout_ms", r.timeout_ms},
       {"path_hops", r.path_hops}};
}
void from_json(const nlohmann::json& j, PeerTestRequest& r) {
  r.peer = j.at("peer").get<std::string>();
  r.peer_name = j.value("peer_name", r.peer);
  r.perf_port = NumberOr(j, "perf_port", 0);
  r.mtu_port = NumberOr(j, "mtu_port", 0);
  r.source = j.value("source", "");
  r.transport = j.value("transport", "tcp");
  r.bandwidth = j.value("bandwidth", true);
  r.latency = j.value("latency", true);
  r.mtu = j.value("mtu", true);
  r.bw_size = NumberOr(j, "bw_size", uint64_t{1} << 20);
  r.bw_duration_s = NumberOr(j, "bw_duration_s", 1.0);
  r.streams = NumberOr(j, "streams", 1);
  r.lat_size = NumberOr(j, "lat_size", uint64_t{64});
  r.lat_duration_s = NumberOr(j, "lat_duration_s", 0.3);
  r.timeout_ms = NumberOr(j, "timeout_ms", 30000);
  r.path_hops = NumberOr(j, "path_hops", 0);
}

void to_json(nlohmann::json& j, const PeerTestResponse& r) {
  j = {{"local_mtu", r.local_mtu}, {"black_hole", r.black_hole}, {"transport", r.transport},
       {"device", r.device},       {"errors", r.errors},         {"elapsed_s", r.elapsed_s}};
  PutNullable(j, "bw_gbps", r.bw_gbps);
  PutNullable(j, "lat_median_us", r.lat_median_us);
  PutNullable(j, "lat_p99_us", r.lat_p99_us);
  PutNullable(j, "path_mtu", r.path_mtu);
  if (!r.flow_gbps.empty()) j["flow_gbps"] = r.flow_gbps;
  if (!r.flow_hops.empty()) j["flow_hops"] = r.flow_hops;
}
void from_json(const nlohmann::json& j, PeerTestResponse& r) {
  r.bw_gbps = Optional<double>(j, "bw_gbps");
  r.lat_median_us = Optional<double>(j, "lat_median_us");
  r.lat_p99_us = Optional<double>(j, "lat_p99_us");
  r.path_mtu = Optional<int>(j, "path_mtu");
  r.local_mtu = NumberOr(j, "local_mtu", 0);
  r.black_hole = j.value("black_hole", false);
  r.transport = j.value("transport", "");
  r.device = j.value("device", "");
  r.errors = j.value("errors", std::vector<std::string>{});
  r.elapsed_s = NumberOr(j, "elapsed_s", 0.0);
  r.flow_gbps = NumbersOr<double>(j, "flow_gbps");
  r.flow_hops = j.value("flow_hops", std::vector<std::vector<std::string>>{});
}

Result<PeerTestRequest> ParsePeerTestRequest(const std::string& body) {
  auto j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return InvalidArgumentError("test request: body is not a JSON object");
  PeerTestRequest r;
  try {
    r = j.get<PeerTestRequest>();
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgumentError(fmt::format("test request: {}", e.what()));
  }
  if (r.peer.empty()) return InvalidArgumentError("test request: 'peer' (the peer's data address) is empty");
  if (r.perf_port <= 0 && (r.bandwidth || r.latency)) {
    return InvalidArgumentError("test request: 'perf_port' is missing for a bandwidth or latency test");
  }
  if (r.mtu_port <= 0 && r.mtu) return InvalidArgumentError("test request: 'mtu_port' is missing for the MTU probe");
  if (r.bw_duration_s <= 0 || r.bw_duration_s > 600 || r.lat_duration_s <= 0 || r.lat_duration_s > 600) {
    return InvalidArgumentError("test request: durations must be in (0, 600] seconds");
  }
  if (r.streams < 1 || r.streams > 64) return InvalidArgumentError("test request: 'streams' must be 1..64");
  if (r.path_hops < 0 || r.path_hops > 16) return InvalidArgumentError("test request: 'path_hops' must be 0..16");
  if (r.bw_size == 0 || r.bw_size > (uint64_t{1} << 30) || r.lat_size == 0 || r.lat_size > (uint64_t{1} << 24)) {
    return InvalidArgumentError("test request: message sizes must be 1 B..1 GiB (bw), ..16 MiB (lat)");
  }
  if (r.timeout_ms < 100 || r.timeout_ms > 3'600'000) {
    return InvalidArgumentError("test request: 'timeout_ms' must be 100..3600000");
  }
  return r;
}

std::string HostPort::ToString() const {
  return host.find(':') != std::string::npos ? fmt::format("[{}]:{}", host, port) : fmt::format("{}:{}", host, port);
}

Result<HostPort> ParseHostPort(std::string_view text, int default_port) {
  text = Trim(text);
  HostPort hp;
  std::string_view port_text;
  if (StartsWith(text, "[")) {
    size_t close = text.find(']');
    if (close == std::string_view::npos) {
      return InvalidArgumentError(fmt::format("'{}': unterminated [IPv6] address (use [addr]:port)", text));
    }
    hp.host = std::string(text.substr(1, close - 1));
    std::string_view rest = text.substr(close + 1);
    if (StartsWith(rest, ":")) port_text = rest.substr(1);
    else if (!rest.empty()) return InvalidArgumentError(fmt::format("'{}': expected ':port' after ]", text));
  } else {
    size_t colon = text.rfind(':');
    if (colon != std::string_view::npos && text.find(':') != colon) {
      return InvalidArgumentError(fmt::format("'{}': write IPv6 addresses as [addr]:port", text));
    }
    hp.host = std::string(text.substr(0, colon));
    if (colon != std::string_view::npos) port_text = text.substr(colon + 1);
  }
  if (hp.host.empty()) return InvalidArgumentError(fmt::format("'{}': the host is empty (use host:port)", text));
  hp.port = default_port;
  if (!port_text.empty()) {
    auto p = ParseInt(port_text);
    if (!p || *p < 0 || *p > 65535) {
      return InvalidArgumentError(fmt::format("'{}': port '{}' is not a number in 0..65535", text, port_text));
    }
    hp.port = static_cast<int>(*p);
  }
  return hp;
}

}  // namespace fabcheck::control
