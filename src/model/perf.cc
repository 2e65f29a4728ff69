#include "fabcheck/model/perf.h"

#include "fabcheck/model/json_fields.h"

#include <algorithm>
#include <cmath>

namespace fabcheck::model {

using json_fields::PutIfSet;
using json_fields::Read;
using json_fields::ReadOptional;

std::string_view PerfTestName(PerfTest test) {
  switch (test) {
    case PerfTest::kBw: return "bw";
    case PerfTest::kLat: return "lat";
    case PerfTest::kKv: return "kv";
  }
  return "bw";
}

std::optional<PerfTest> ParsePerfTest(std::string_view name) {
  if (name == "bw") return PerfTest::kBw;
  if (name == "lat") return PerfTest::kLat;
  if (name == "kv") return PerfTest::kKv;
  return std::nullopt;
}

std::string_view PerfOpName(PerfOp op) {
  switch (op) {
    case PerfOp::kWrite: return "write";
    case PerfOp::kWriteImm: return "write_imm";
    case PerfOp::kRead: return "read";
    case PerfOp::kSend: return "send";
  }
  return "write";
}

std::optional<PerfOp> ParsePerfOp(std::string_view name) {
  for (PerfOp op : {PerfOp::kWrite, PerfOp::kWriteImm, PerfOp::kRead, PerfOp::kSend}) {
    if (PerfOpName(op) == name) return op;
  }
  if (name == "write-imm") return PerfOp::kWriteImm;
  return std::nullopt;
}

bool PerfResult::ok() const {
  if (!error.empty()) return false;
  return std::all_of(results.begin(), results.end(),
                     [](const PerfSizeResult& r) { return r.error.empty() && r.validate_errors == 0; });
}

BwFigures MakeBwFigures(uint64_t bytes, uint64_t messages, double elapsed_s, double peak_gbps) {
  BwFigures f;
  f.bytes = bytes;
  f.messages = messages;
  f.elapsed_s = elapsed_s;
  if (elapsed_s <= 0) return f;
  double b = static_cast<double>(bytes);
  f.avg_gbps = b * 8.0 / elapsed_s / 1e9;
  f.avg_mibps = b / elapsed_s / (1024.0 * 1024.0);
  f.mpps = static_cast<double>(messages) / elapsed_s / 1e6;
  // A peak below the average means the transport's window was coarse; the
  // average is then the best lower bound of the peak.
  f.peak_gbps = std::max(peak_gbps, f.avg_gbps);
  return f;
}

BwFigures SumBwFigures(const BwFigures& a, const BwFigures& b) {
  BwFigures s;
  s.bytes = a.bytes + b.bytes;
  s.messages = a.messages + b.messages;
  s.elapsed_s = std::max(a.elapsed_s, b.elapsed_s);
  s.avg_gbps = a.avg_gbps + b.avg_gbps;
  s.peak_gbps = a.peak_gbps + b.peak_gbps;
  s.avg_mibps = a.avg_mibps + b.avg_mibps;
  s.mpps = a.mpps + b.mpps;
  return s;
}

std::optional<LatencyFigures> MakeLatencyFigures(std::vector<double> rtt_us, bool half_round_trip) {
  if (rtt_us.empty()) return std::nullopt;
  std::sort(rtt_us.begin(), rtt_us.end());
  // perftest drops the 2 largest deltas (LAT_MEASURE_TAIL) before any figure.
  size_t m = rtt_us.size() > 2 ? rtt_us.size() - 2 : rtt_us.size();
  double factor = half_round_trip ? 0.5 : 1.0;
  auto at = [&](size_t i) { return rtt_us[std::min(i, m - 1)] * factor; };
  auto rank = [&](double p) { return static_cast<size_t>(std::ceil(static_cast<double>(m) * p)); };

  LatencyFigures f;
  f.samples = m;
  f.half_round_trip = half_round_trip;
  f.min_us = at(0);
  f.max_us = at(m - 1);
  f.median_us = (m % 2 == 0) ? (rtt_us[m / 2 - 1] + rtt_us[m / 2]) / 2 * factor : at(m / 2);
  double sum = 0;
  for (size_t i = 0; i < m; ++i) sum += rtt_us[i] * factor;
  f.avg_us = sum / static_cast<double>(m);
  double var = 0;
  for (size_t i = 0; i < m; ++i) {
    double d = rtt_us[i] * factor - f.avg_us;
    var += d * d;
  }
  f.stdev_us = std::sqrt(var / static_cast<double>(m));
  f.p90_us = at(rank(0.90));
  f.p99_us = at(rank(0.99));
  f.p999_us = at(rank(0.999));
  return f;
}

void to_json(nlohmann::json& j, const PerfTest& v) { j = std::string(PerfTestName(v)); }
void from_json(const nlohmann::json& j, PerfTest& v) {
  auto parsed = ParsePerfTest(j.get<std::string>());
  if (!parsed) throw nlohmann::json::other_error::create(501, "unknown perf test " + j.dump(), &j);
  v = *parsed;
}
void to_json(nlohmann::json& j, const PerfOp& v) { j = std::string(PerfOpName(v)); }
void from_json(const nlohmann::json& j, PerfOp& v) {
  auto parsed = ParsePerfOp(j.get<std::string>());
  if (!parsed) throw nlohmann::json::other_error::create(501, "unknown perf op " + j.dump(), &j);
  v = *parsed;
}

void to_json(nlohmann::json& j, const BwFigures& v) {
  j = {{"avg_gbps", v.avg_gbps}, {"peak_gbps", v.peak_gbps}, {"avg_mibps", v.avg_mibps}, {"mpps", v.mpps},
       {"bytes", v.bytes},       {"messages", v.messages},   {"elapsed_s", v.elapsed_s}};
}
void from_json(const nlohmann::json& j, BwFigures& v) {
  Read(j, "avg_gbps", v.avg_gbps);
  Read(j, "peak_gbps", v.peak_gbps);
  Read(j, "avg_mibps", v.avg_mibps);
  Read(j, "mpps", v.mpps);
  Read(j, "bytes", v.bytes);
  Read(j, "messages", v.messages);
  Read(j, "elapsed_s", v.elapsed_s);
}

void to_json(nlohmann::json& j, const LatencyFigures& v) {
  j = {{"samples", v.samples}, {"min_us", v.min_us},   {"median_us", v.median_us},
       {"avg_us", v.avg_us},   {"p90_us", v.p90_us},   {"p99_us", v.p99_us},
       {"p999_us", v.p999_us}, {"max_us", v.max_us},   {"stdev_us", v.stdev_us},
       {"half_round_trip", v.half_round_trip}};
}
void from_json(const nlohmann::json& j, LatencyFigures& v) {
  Read(j, "samples", v.samples);
  Read(j, "min_us", v.min_us);
  Read(j, "median_us", v.median_us);
  Read(j, "avg_us", v.avg_us);
  Read(j, "p90_us", v.p90_us);
  Read(j, "p99_us", v.p99_us);
  Read(j, "p999_us", v.p999_us);
  Read(j, "max_us", v.max_us);
  Read(j, "stdev_us", v.stdev_us);
  Read(j, "half_round_trip", v.half_round_trip);
}

void to_json(nlohmann::json& j, const PerfSizeResult& v) {
  j = {{"bytes", v.bytes}, {"iterations", v.iterations}, {"validate_errors", v.validate_errors}};
  PutIfSet(j, "bw", v.bw);
  PutIfSet(j, "bw_tx", v.bw_tx);
  PutIfSet(j, "bw_rx", v.bw_rx);
  PutIfSet(j, "lat", v.lat);
  if (!v.stream_gbps.empty()) j["stream_gbps"] = v.stream_gbps;
  if (!v.error.empty()) j["error"] = v.error;
}
void from_json(const nlohmann::json& j, PerfSizeResult& v) {
  Read(j, "bytes", v.bytes);
  Read(j, "iterations", v.iterations);
  Read(j, "validate_errors", v.validate_errors);
  ReadOptional(j, "bw", v.bw);
  ReadOptional(j, "bw_tx", v.bw_tx);
  ReadOptional(j, "bw_rx", v.bw_rx);
  ReadOptional(j, "lat", v.lat);
  v.stream_gbps = json_fields::NumbersOr<double>(j, "stream_gbps");
  Read(j, "error", v.error);
}

void to_json(nlohmann::json& j, const CpuUse& v) {
  j = {{"percent", v.percent}, {"user_s", v.user_s}, {"system_s", v.system_s}};
}
void from_json(const nlohmann::json& j, CpuUse& v) {
  Read(j, "percent", v.percent);
  Read(j, "user_s", v.user_s);
  Read(j, "system_s", v.system_s);
}

void to_json(nlohmann::json& j, const PerfFlowPath& v) { j = {{"local_port", v.local_port}, {"hops", v.hops}}; }
void from_json(const nlohmann::json& j, PerfFlowPath& v) {
  Read(j, "local_port", v.local_port);
  Read(j, "hops", v.hops);
}

void to_json(nlohmann::json& j, const PerfEndpoint& v) {
  j = {{"role", v.role},
       {"host", v.host},
       {"fabcheck_version", v.fabcheck_version},
       {"device", v.device},
       {"port", v.port},
       {"gid_type", v.gid_type},
       {"gid", v.gid},
       {"link_layer", v.link_layer},
       {"mtu", v.mtu},
       {"memory", v.memory},
       {"registration", v.registration},
       {"gpudirect", v.gpudirect},
       {"numa_policy", v.numa_policy},
       {"cpus", v.cpus},
       {"cpu", v.cpu},
       {"zerocopy", v.zerocopy},
       {"notes", v.notes}};
  j["gid_index"] = v.gid_index ? nlohmann::json(*v.gid_index) : nlohmann::json(nullptr);
  j["numa_node"] = v.numa_node ? nlohmann::json(*v.numa_node) : nlohmann::json(nullptr);
  if (!v.flows.empty()) j["flows"] = v.flows;
  if (v.port_mtu > 0) j["port_mtu"] = v.port_mtu;
}
void from_json(const nlohmann::json& j, PerfEndpoint& v) {
  Read(j, "role", v.role);
  Read(j, "host", v.host);
  Read(j, "fabcheck_version", v.fabcheck_version);
  Read(j, "device", v.device);
  Read(j, "port", v.port);
  ReadOptional(j, "gid_index", v.gid_index);
  Read(j, "gid_type", v.gid_type);
  Read(j, "gid", v.gid);
  Read(j, "link_layer", v.link_layer);
  Read(j, "mtu", v.mtu);
  Read(j, "port_mtu", v.port_mtu);
  Read(j, "memory", v.memory);
  Read(j, "registration", v.registration);
  Read(j, "gpudirect", v.gpudirect);
  ReadOptional(j, "numa_node", v.numa_node);
  Read(j, "numa_policy", v.numa_policy);
  Read(j, "cpus", v.cpus);
  Read(j, "cpu", v.cpu);
  Read(j, "zerocopy", v.zerocopy);
  Read(j, "notes", v.notes);
  Read(j, "flows", v.flows);
}

void to_json(nlohmann::json& j, const PerfSettings& v) {
  j = {{"transport", v.transport}, {"test", v.test},         {"op", v.op},
       {"bidir", v.bidir},         {"sizes", v.sizes},       {"iters", v.iters},
       {"duration_s", v.duration_s}, {"warmup", v.warmup},   {"streams", v.streams},
       {"tx_depth", v.tx_depth},   {"inline_size", v.inline_size}, {"mtu", v.mtu},
       {"validate", v.validate},   {"use_cm", v.use_cm}};
  j["tclass"] = v.tclass ? nlohmann::json(*v.tclass) : nlohmann::json(nullptr);
  j["sl"] = v.sl ? nlohmann::json(*v.sl) : nlohmann::json(nullptr);
}
void from_json(const nlohmann::json& j, PerfSettings& v) {
  Read(j, "transport", v.transport);
  Read(j, "test", v.test);
  Read(j, "op", v.op);
  Read(j, "bidir", v.bidir);
  Read(j, "sizes", v.sizes);
  Read(j, "iters", v.iters);
  Read(j, "duration_s", v.duration_s);
  Read(j, "warmup", v.warmup);
  Read(j, "streams", v.streams);
  Read(j, "tx_depth", v.tx_depth);
  Read(j, "inline_size", v.inline_size);
  Read(j, "mtu", v.mtu);
  ReadOptional(j, "tclass", v.tclass);
  ReadOptional(j, "sl", v.sl);
  Read(j, "validate", v.validate);
  Read(j, "use_cm", v.use_cm);
}

void to_json(nlohmann::json& j, const PerfResult& v) {
  j = {{"schema", v.schema},
       {"protocol_version", v.protocol_version},
       {"started_at", v.started_at},
       {"server", v.server},
       {"settings", v.settings},
       {"client", v.client},
       {"server_endpoint", v.server_side},
       {"results", v.results},
       {"ok", v.ok()}};
  if (!v.error.empty()) j["error"] = v.error;
}
void from_json(const nlohmann::json& j, PerfResult& v) {
  Read(j, "schema", v.schema);
  Read(j, "protocol_version", v.protocol_version);
  Read(j, "started_at", v.started_at);
  Read(j, "server", v.server);
  Read(j, "settings", v.settings);
  Read(j, "client", v.client);
  Read(j, "server_endpoint", v.server_side);
  Read(j, "results", v.results);
  Read(j, "error", v.error);
}

}  // namespace fabcheck::model
