#include "fabcheck/model/ladder.h"

#include <array>
#include <utility>

namespace fabcheck::model {
namespace {

// Absent and null both read as "unknown": optionals are written as null so a
// reader sees the field exists, and older manifests (fewer keys) still load.
template <typename T>
void PutOptional(nlohmann::json& j, const char* key, const std::optional<T>& v) {
  j[key] = v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

// nlohmann's what() starts with "[json.exception.type_error.302] ".
std::string Message(const nlohmann::json::exception& e) {
  std::string what = e.what();
  auto close = what.find("] ");
  if (what.rfind("[json.exception", 0) == 0 && close != std::string::npos) what.erase(0, close + 2);
  return what;
}

// Reads an optional key; a value of the wrong type is an error that names the
// key, so a damaged manifest says where it is damaged.
template <typename T>
void Get(const nlohmann::json& j, const char* key, T& out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  try {
    out = it->get<T>();
  } catch (const nlohmann::json::exception& e) {
    throw nlohmann::json::other_error::create(501, std::string(key) + ": " + Message(e), &j);
  }
}
template <typename T>
void GetOptional(const nlohmann::json& j, const char* key, std::optional<T>& out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) {
    out.reset();
    return;
  }
  T value{};
  Get(j, key, value);
  out = std::move(value);
}
// A key a document of this type cannot do without.
template <typename T>
void Require(const nlohmann::json& j, const char* key, T& out) {
  if (!j.is_object() || !j.contains(key)) {
    throw nlohmann::json::other_error::create(501, std::string("missing '") + key + "'", &j);
  }
  Get(j, key, out);
}

void RequireObject(const nlohmann::json& j, const char* what) {
  if (!j.is_object()) {
    throw nlohmann::json::type_error::create(302, std::string(what) + " must be an object, not " + j.type_name(), &j);
  }
}

constexpr std::array<std::pair<RungVerdict, std::string_view>, 4> kVerdictNames{{
    {RungVerdict::kPass, "pass"},
    {RungVerdict::kWarn, "warn"},
    {RungVerdict::kFail, "fail"},
    {RungVerdict::kNotRun, "not_run"},
}};

}  // namespace

std::string_view RungVerdictName(RungVerdict v) {
  for (const auto& [k, name] : kVerdictNames) {
    if (k == v) return name;
  }
  return "not_run";
}

std::optional<RungVerdict> ParseRungVerdict(std::string_view name) {
  for (const auto& [k, n] : kVerdictNames) {
    if (n == name) return k;
  }
  return std::nullopt;
}

void to_json(nlohmann::json& j, const RungVerdict& v) { j = std::string(RungVerdictName(v)); }
void from_json(const nlohmann::json& j, RungVerdict& v) {
  auto parsed = j.is_string() ? ParseRungVerdict(j.get<std::string>()) : std::nullopt;
  if (!parsed) {
    throw nlohmann::json::other_error::create(501, "unknown verdict " + j.dump() + " (pass, warn, fail, not_run)", &j);
  }
  v = *parsed;
}

void to_json(nlohmann::json& j, const LadderMember& v) {
  j = {{"id", v.id},
       {"name", v.name},
       {"control", v.control},
       {"data_addresses", v.data_addresses},
       {"node_type", v.node_type},
       {"reachable", v.reachable},
       {"error", v.error},
       {"dropped_at", v.dropped_at},
       {"dropped_reason", v.dropped_reason},
       {"inventory_file", v.inventory_file},
       {"doctor_file", v.doctor_file},
       {"snapshot_file", v.snapshot_file},
       {"rack", v.rack},
       {"leaf", v.leaf}};
}
void from_json(const nlohmann::json& j, LadderMember& v) {
  RequireObject(j, "a member");
  Require(j, "id", v.id);
  Get(j, "name", v.name);
  Get(j, "control", v.control);
  Get(j, "data_addresses", v.data_addresses);
  Get(j, "node_type", v.node_type);
  Get(j, "reachable", v.reachable);
  Get(j, "error", v.error);
  Get(j, "dropped_at", v.dropped_at);
  Get(j, "dropped_reason", v.dropped_reason);
  Get(j, "inventory_file", v.inventory_file);
  Get(j, "doctor_file", v.doctor_file);
  Get(j, "snapshot_file", v.snapshot_file);
  Get(j, "rack", v.rack);
  Get(j, "leaf", v.leaf);
}

void to_json(nlohmann::json& j, const CounterDelta& v) {
  j = {{"member", v.member}, {"object", v.object}, {"counter", v.counter},      {"before", v.before},
       {"after", v.after},   {"delta", v.delta},   {"interval_s", v.interval_s}};
}
void from_json(const nlohmann::json& j, CounterDelta& v) {
  RequireObject(j, "a counter delta");
  Require(j, "member", v.member);
  Get(j, "object", v.object);
  Require(j, "counter", v.counter);
  Get(j, "before", v.before);
  Get(j, "after", v.after);
  Get(j, "delta", v.delta);
  Get(j, "interval_s", v.interval_s);
}

void to_json(nlohmann::json& j, const CounterSample& v) {
  j = {{"member", v.member}, {"rung", v.rung}, {"phase", v.phase}, {"time_unix", v.time_unix}, {"values", v.values}};
}
void from_json(const nlohmann::json& j, CounterSample& v) {
  RequireObject(j, "a counter sample");
  Get(j, "member", v.member);
  Get(j, "rung", v.rung);
  Get(j, "phase", v.phase);
  Get(j, "time_unix", v.time_unix);
  Get(j, "values", v.values);
}

void to_json(nlohmann::json& j, const ConsistencyCheck& v) {
  j = {{"setting", v.setting}, {"majority", v.majority}, {"values", v.values},
       {"outliers", v.outliers}, {"verdict", v.verdict}};
}
void from_json(const nlohmann::json& j, ConsistencyCheck& v) {
  RequireObject(j, "a consistency check");
  Require(j, "setting", v.setting);
  Get(j, "majority", v.majority);
  Get(j, "values", v.values);
  Get(j, "outliers", v.outliers);
  Get(j, "verdict", v.verdict);
}

void to_json(nlohmann::json& j, const SizePoint& v) { j = {{"bytes", v.bytes}, {"bw_gbps", v.bw_gbps}}; }
void from_json(const nlohmann::json& j, SizePoint& v) {
  RequireObject(j, "a size point");
  Require(j, "bytes", v.bytes);
  Get(j, "bw_gbps", v.bw_gbps);
}

void to_json(nlohmann::json& j, const PairTest& v) {
  j = {{"a", v.a},
       {"b", v.b},
       {"rail", v.rail},
       {"transport", v.transport},
       {"rdma", v.rdma},
       {"device_a", v.device_a},
       {"device_b", v.device_b},
       {"gid_a", v.gid_a},
       {"gid_b", v.gid_b},
       {"local_mtu", v.local_mtu},
       {"expected_basis", v.expected_basis},
       {"sweep", v.sweep},
       {"verdict", v.verdict},
       {"reason", v.reason},
       {"evidence_file", v.evidence_file}};
  PutOptional(j, "path_mtu", v.path_mtu);
  PutOptional(j, "bw_gbps", v.bw_gbps);
  PutOptional(j, "expected_gbps", v.expected_gbps);
  PutOptional(j, "lat_p50_us", v.lat_p50_us);
  PutOptional(j, "lat_p99_us", v.lat_p99_us);
}
void from_json(const nlohmann::json& j, PairTest& v) {
  RequireObject(j, "a pair");
  Require(j, "a", v.a);
  Require(j, "b", v.b);
  Get(j, "rail", v.rail);
  Get(j, "transport", v.transport);
  Get(j, "rdma", v.rdma);
  Get(j, "device_a", v.device_a);
  Get(j, "device_b", v.device_b);
  Get(j, "gid_a", v.gid_a);
  Get(j, "gid_b", v.gid_b);
  GetOptional(j, "path_mtu", v.path_mtu);
  Get(j, "local_mtu", v.local_mtu);
  GetOptional(j, "bw_gbps", v.bw_gbps);
  GetOptional(j, "expected_gbps", v.expected_gbps);
  Get(j, "expected_basis", v.expected_basis);
  GetOptional(j, "lat_p50_us", v.lat_p50_us);
  GetOptional(j, "lat_p99_us", v.lat_p99_us);
  Get(j, "sweep", v.sweep);
  Get(j, "verdict", v.verdict);
  Get(j, "reason", v.reason);
  Get(j, "evidence_file", v.evidence_file);
}

void to_json(nlohmann::json& j, const CollectiveCheck& v) {
  j = {{"op", v.op},
       {"max_bytes", v.max_bytes},
       {"busbw_gbps", v.busbw_gbps},
       {"expected_basis", v.expected_basis},
       {"sweep", v.sweep},
       {"wrong", v.wrong},
       {"verdict", v.verdict},
       {"reason", v.reason},
       {"members", v.members}};
  PutOptional(j, "expected_gbps", v.expected_gbps);
}
void from_json(const nlohmann::json& j, CollectiveCheck& v) {
  RequireObject(j, "a collective");
  Require(j, "op", v.op);
  Get(j, "max_bytes", v.max_bytes);
  Get(j, "busbw_gbps", v.busbw_gbps);
  GetOptional(j, "expected_gbps", v.expected_gbps);
  Get(j, "expected_basis", v.expected_basis);
  Get(j, "sweep", v.sweep);
  Get(j, "wrong", v.wrong);
  Get(j, "verdict", v.verdict);
  Get(j, "reason", v.reason);
  Get(j, "members", v.members);
}

void to_json(nlohmann::json& j, const NcclTransportCheck& v) {
  j = {{"member", v.member},       {"transports", v.transports}, {"hcas", v.hcas},    {"interface", v.interface},
       {"gpudirect", v.gpudirect}, {"verdict", v.verdict},       {"reason", v.reason}};
}
void from_json(const nlohmann::json& j, NcclTransportCheck& v) {
  RequireObject(j, "an nccl check");
  Require(j, "member", v.member);
  Get(j, "transports", v.transports);
  Get(j, "hcas", v.hcas);
  Get(j, "interface", v.interface);
  Get(j, "gpudirect", v.gpudirect);
  Get(j, "verdict", v.verdict);
  Get(j, "reason", v.reason);
}

void to_json(nlohmann::json& j, const RungResult& v) {
  j = {{"id", v.id},
       {"title", v.title},
       {"verdict", v.verdict},
       {"reason", v.reason},
       {"parameters", v.parameters.is_null() ? nlohmann::json::object() : v.parameters},
       {"start_unix", v.start_unix},
       {"end_unix", v.end_unix},
       {"members", v.members},
       {"members_passed", v.members_passed},
       {"findings", v.findings},
       {"consistency", v.consistency},
       {"pairs", v.pairs},
       {"collectives", v.collectives},
       {"nccl", v.nccl},
       {"counter_deltas", v.counter_deltas},
       {"evidence_files", v.evidence_files}};
}
void from_json(const nlohmann::json& j, RungResult& v) {
  RequireObject(j, "a rung");
  Require(j, "id", v.id);
  Get(j, "title", v.title);
  Require(j, "verdict", v.verdict);
  Get(j, "reason", v.reason);
  v.parameters = j.contains("parameters") ? j.at("parameters") : nlohmann::json::object();
  Get(j, "start_unix", v.start_unix);
  Get(j, "end_unix", v.end_unix);
  Get(j, "members", v.members);
  Get(j, "members_passed", v.members_passed);
  Get(j, "findings", v.findings);
  Get(j, "consistency", v.consistency);
  Get(j, "pairs", v.pairs);
  Get(j, "collectives", v.collectives);
  Get(j, "nccl", v.nccl);
  Get(j, "counter_deltas", v.counter_deltas);
  Get(j, "evidence_files", v.evidence_files);
}

void to_json(nlohmann::json& j, const LadderVerdict& v) {
  j = {{"go", v.go},
       {"first_failing_rung", v.first_failing_rung},
       {"not_run", v.not_run},
       {"summary", v.summary},
       {"exit_code", v.exit_code}};
}
void from_json(const nlohmann::json& j, LadderVerdict& v) {
  RequireObject(j, "the verdict");
  Require(j, "go", v.go);
  Get(j, "first_failing_rung", v.first_failing_rung);
  Get(j, "not_run", v.not_run);
  Get(j, "summary", v.summary);
  Get(j, "exit_code", v.exit_code);
}

void to_json(nlohmann::json& j, const LadderManifest& v) {
  j = {{"schema", v.schema},
       {"fabcheck_version", v.fabcheck_version},
       {"created_at", v.created_at},
       {"coordinator", v.coordinator},
       {"parameters", v.parameters.is_null() ? nlohmann::json::object() : v.parameters},
       {"start_unix", v.start_unix},
       {"end_unix", v.end_unix},
       {"interrupted", v.interrupted},
       {"members", v.members},
       {"rungs", v.rungs},
       {"verdict", v.verdict}};
}
void from_json(const nlohmann::json& j, LadderManifest& v) {
  RequireObject(j, "the manifest");
  Require(j, "schema", v.schema);
  Get(j, "fabcheck_version", v.fabcheck_version);
  Get(j, "created_at", v.created_at);
  Get(j, "coordinator", v.coordinator);
  v.parameters = j.contains("parameters") ? j.at("parameters") : nlohmann::json::object();
  Get(j, "start_unix", v.start_unix);
  Get(j, "end_unix", v.end_unix);
  Get(j, "interrupted", v.interrupted);
  Get(j, "members", v.members);
  Get(j, "rungs", v.rungs);
  Require(j, "verdict", v.verdict);
}

std::optional<LadderManifest> ParseLadderManifest(std::string_view text, std::string* error) {
  auto fail = [&](std::string message) -> std::optional<LadderManifest> {
    if (error) *error = std::move(message);
    return std::nullopt;
  };
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return fail("manifest.json is not valid JSON");
  if (!j.is_object()) return fail("manifest.json is not a JSON object");
  auto schema = j.find("schema");
  if (schema == j.end() || !schema->is_string()) {
    return fail("manifest.json has no \"schema\" (expected \"" + std::string(kLadderSchema) + "\")");
  }
  if (schema->get<std::string>() != kLadderSchema) {
    return fail("manifest.json has schema \"" + schema->get<std::string>() + "\", expected \"" +
                std::string(kLadderSchema) + "\" (is this a `fabcheck ladder` bundle?)");
  }
  try {
    return j.get<LadderManifest>();
  } catch (const nlohmann::json::exception& e) {
    return fail("manifest.json is malformed at " + Message(e));
  }
}

}  // namespace fabcheck::model
