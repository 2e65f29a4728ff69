#include "fabcheck/model/ladder.h"

#include "base/json_budget.h"
#include "base/terminal_text.h"

#include "fabcheck/model/json_fields.h"

#include <array>
#include <utility>

namespace fabcheck::model {
namespace {

using json_fields::ExceptionMessage;
using json_fields::Number;
using json_fields::PutIfSet;
using json_fields::PutNullable;
using json_fields::Read;
using json_fields::ReadOptional;
using json_fields::Require;
using json_fields::RequireObject;

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
  if (!v.rail_leaves.empty()) j["rail_leaves"] = v.rail_leaves;
}
void from_json(const nlohmann::json& j, LadderMember& v) {
  RequireObject(j, "a member");
  Require(j, "id", v.id);
  Read(j, "name", v.name);
  Read(j, "control", v.control);
  Read(j, "data_addresses", v.data_addresses);
  Read(j, "node_type", v.node_type);
  Read(j, "reachable", v.reachable);
  Read(j, "error", v.error);
  Read(j, "dropped_at", v.dropped_at);
  Read(j, "dropped_reason", v.dropped_reason);
  Read(j, "inventory_file", v.inventory_file);
  Read(j, "doctor_file", v.doctor_file);
  Read(j, "snapshot_file", v.snapshot_file);
  Read(j, "rack", v.rack);
  Read(j, "leaf", v.leaf);
  Read(j, "rail_leaves", v.rail_leaves);
}

void to_json(nlohmann::json& j, const CounterDelta& v) {
  j = {{"member", v.member}, {"object", v.object}, {"counter", v.counter},      {"before", v.before},
       {"after", v.after},   {"delta", v.delta},   {"interval_s", v.interval_s}};
}
void from_json(const nlohmann::json& j, CounterDelta& v) {
  RequireObject(j, "a counter delta");
  Require(j, "member", v.member);
  Read(j, "object", v.object);
  Require(j, "counter", v.counter);
  Read(j, "before", v.before);
  Read(j, "after", v.after);
  Read(j, "delta", v.delta);
  Read(j, "interval_s", v.interval_s);
}

void to_json(nlohmann::json& j, const CounterSample& v) {
  j = {{"member", v.member}, {"rung", v.rung}, {"phase", v.phase}, {"time_unix", v.time_unix}, {"values", v.values}};
}
void from_json(const nlohmann::json& j, CounterSample& v) {
  RequireObject(j, "a counter sample");
  Read(j, "member", v.member);
  Read(j, "rung", v.rung);
  Read(j, "phase", v.phase);
  Read(j, "time_unix", v.time_unix);
  // Counter values one by one, each checked (a sample comes from anywhere).
  v.values.clear();
  if (auto it = j.find("values"); it != j.end() && !it->is_null()) {
    RequireObject(*it, "a counter sample's values");
    for (const auto& [object, counters] : it->items()) {
      RequireObject(counters, "a counter sample's counters");
      auto& out = v.values[object];
      for (const auto& [name, value] : counters.items()) out[name] = Number<uint64_t>(value, name.c_str());
    }
  }
}

void to_json(nlohmann::json& j, const ConsistencyCheck& v) {
  j = {{"setting", v.setting}, {"majority", v.majority}, {"values", v.values},
       {"outliers", v.outliers}, {"verdict", v.verdict}};
}
void from_json(const nlohmann::json& j, ConsistencyCheck& v) {
  RequireObject(j, "a consistency check");
  Require(j, "setting", v.setting);
  Read(j, "majority", v.majority);
  Read(j, "values", v.values);
  Read(j, "outliers", v.outliers);
  Read(j, "verdict", v.verdict);
}

void to_json(nlohmann::json& j, const SizePoint& v) { j = {{"bytes", v.bytes}, {"bw_gbps", v.bw_gbps}}; }
void from_json(const nlohmann::json& j, SizePoint& v) {
  RequireObject(j, "a size point");
  Require(j, "bytes", v.bytes);
  Read(j, "bw_gbps", v.bw_gbps);
}

void to_json(nlohmann::json& j, const PairSuspect& v) {
  j = {{"member", v.member}, {"port", v.port}, {"element", v.element}, {"confidence", v.confidence}, {"why", v.why}};
}
void from_json(const nlohmann::json& j, PairSuspect& v) {
  RequireObject(j, "a pair's suspect");
  Require(j, "member", v.member);
  Read(j, "port", v.port);
  Read(j, "element", v.element);
  Read(j, "confidence", v.confidence);
  Read(j, "why", v.why);
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
  PutNullable(j, "path_mtu", v.path_mtu);
  PutNullable(j, "bw_gbps", v.bw_gbps);
  PutNullable(j, "expected_gbps", v.expected_gbps);
  PutNullable(j, "lat_p50_us", v.lat_p50_us);
  PutNullable(j, "lat_p99_us", v.lat_p99_us);
  // Only failing pairs carry these: absent, not empty, on every other pair.
  if (!v.counters.empty()) j["counters"] = v.counters;
  PutIfSet(j, "suspect", v.suspect);
}
void from_json(const nlohmann::json& j, PairTest& v) {
  RequireObject(j, "a pair");
  Require(j, "a", v.a);
  Require(j, "b", v.b);
  Read(j, "rail", v.rail);
  Read(j, "transport", v.transport);
  Read(j, "rdma", v.rdma);
  Read(j, "device_a", v.device_a);
  Read(j, "device_b", v.device_b);
  Read(j, "gid_a", v.gid_a);
  Read(j, "gid_b", v.gid_b);
  ReadOptional(j, "path_mtu", v.path_mtu);
  Read(j, "local_mtu", v.local_mtu);
  ReadOptional(j, "bw_gbps", v.bw_gbps);
  ReadOptional(j, "expected_gbps", v.expected_gbps);
  Read(j, "expected_basis", v.expected_basis);
  ReadOptional(j, "lat_p50_us", v.lat_p50_us);
  ReadOptional(j, "lat_p99_us", v.lat_p99_us);
  Read(j, "sweep", v.sweep);
  Read(j, "verdict", v.verdict);
  Read(j, "reason", v.reason);
  Read(j, "evidence_file", v.evidence_file);
  Read(j, "counters", v.counters);
  ReadOptional(j, "suspect", v.suspect);
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
  PutNullable(j, "expected_gbps", v.expected_gbps);
}
void from_json(const nlohmann::json& j, CollectiveCheck& v) {
  RequireObject(j, "a collective");
  Require(j, "op", v.op);
  Read(j, "max_bytes", v.max_bytes);
  Read(j, "busbw_gbps", v.busbw_gbps);
  ReadOptional(j, "expected_gbps", v.expected_gbps);
  Read(j, "expected_basis", v.expected_basis);
  Read(j, "sweep", v.sweep);
  Read(j, "wrong", v.wrong);
  Read(j, "verdict", v.verdict);
  Read(j, "reason", v.reason);
  Read(j, "members", v.members);
}

void to_json(nlohmann::json& j, const NcclTransportCheck& v) {
  j = {{"member", v.member},       {"transports", v.transports}, {"hcas", v.hcas},    {"interface", v.interface},
       {"gpudirect", v.gpudirect}, {"verdict", v.verdict},       {"reason", v.reason}};
}
void from_json(const nlohmann::json& j, NcclTransportCheck& v) {
  RequireObject(j, "an nccl check");
  Require(j, "member", v.member);
  Read(j, "transports", v.transports);
  Read(j, "hcas", v.hcas);
  Read(j, "interface", v.interface);
  Read(j, "gpudirect", v.gpudirect);
  Read(j, "verdict", v.verdict);
  Read(j, "reason", v.reason);
}

void to_json(nlohmann::json& j, const BaselineGroup& v) {
  j = {{"scope", v.scope},       {"applicable", v.applicable}, {"members", v.members},
       {"rails", v.rails},       {"settings", v.settings},     {"same_as", v.same_as},
       {"verdict", v.verdict},   {"reason", v.reason},         {"pairs", v.pairs},
       {"collectives", v.collectives}, {"nccl", v.nccl},       {"evidence_files", v.evidence_files},
       {"elapsed_s", v.elapsed_s}};
}
void from_json(const nlohmann::json& j, BaselineGroup& v) {
  RequireObject(j, "a baseline group");
  Require(j, "scope", v.scope);
  Read(j, "applicable", v.applicable);
  Read(j, "members", v.members);
  Read(j, "rails", v.rails);
  Read(j, "settings", v.settings);
  Read(j, "same_as", v.same_as);
  Read(j, "verdict", v.verdict);
  Read(j, "reason", v.reason);
  Read(j, "pairs", v.pairs);
  Read(j, "collectives", v.collectives);
  Read(j, "nccl", v.nccl);
  Read(j, "evidence_files", v.evidence_files);
  Read(j, "elapsed_s", v.elapsed_s);
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
  // Only rungs that formed baseline groups (L3, L4) carry the key.
  if (!v.baselines.empty()) j["baselines"] = v.baselines;
}
void from_json(const nlohmann::json& j, RungResult& v) {
  RequireObject(j, "a rung");
  Require(j, "id", v.id);
  Read(j, "title", v.title);
  Require(j, "verdict", v.verdict);
  Read(j, "reason", v.reason);
  v.parameters = j.contains("parameters") ? j.at("parameters") : nlohmann::json::object();
  Read(j, "start_unix", v.start_unix);
  Read(j, "end_unix", v.end_unix);
  Read(j, "members", v.members);
  Read(j, "members_passed", v.members_passed);
  Read(j, "findings", v.findings);
  Read(j, "consistency", v.consistency);
  Read(j, "pairs", v.pairs);
  Read(j, "collectives", v.collectives);
  Read(j, "nccl", v.nccl);
  Read(j, "counter_deltas", v.counter_deltas);
  Read(j, "evidence_files", v.evidence_files);
  Read(j, "baselines", v.baselines);
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
  Read(j, "first_failing_rung", v.first_failing_rung);
  Read(j, "not_run", v.not_run);
  Read(j, "summary", v.summary);
  Read(j, "exit_code", v.exit_code);
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
  Read(j, "fabcheck_version", v.fabcheck_version);
  Read(j, "created_at", v.created_at);
  Read(j, "coordinator", v.coordinator);
  v.parameters = j.contains("parameters") ? j.at("parameters") : nlohmann::json::object();
  Read(j, "start_unix", v.start_unix);
  Read(j, "end_unix", v.end_unix);
  Read(j, "interrupted", v.interrupted);
  Read(j, "members", v.members);
  Read(j, "rungs", v.rungs);
  Require(j, "verdict", v.verdict);
}

std::optional<LadderManifest> ParseLadderManifest(std::string_view text, std::string* error) {
  auto fail = [&](std::string message) -> std::optional<LadderManifest> {
    if (error) *error = std::move(message);
    return std::nullopt;
  };
  auto parsed = ParseJsonWithin(text, "manifest.json", kClusterDocumentBudget);
  if (!parsed.ok()) return fail(parsed.status().message());
  const nlohmann::json& j = *parsed;
  if (!j.is_object()) return fail("manifest.json is not a JSON object");
  auto schema = j.find("schema");
  if (schema == j.end() || !schema->is_string()) {
    return fail("manifest.json has no \"schema\" (expected \"" + std::string(kLadderSchema) + "\")");
  }
  if (schema->get<std::string>() != kLadderSchema) {
    // The schema is the bundle's text, printed in an error on a terminal.
    return fail("manifest.json has schema \"" + NeutralizeControls(schema->get<std::string>()) + "\", expected \"" +
                std::string(kLadderSchema) + "\" (is this a `fabcheck ladder` bundle?)");
  }
  try {
    return j.get<LadderManifest>();
  } catch (const nlohmann::json::exception& e) {
    return fail("manifest.json is malformed at " + ExceptionMessage(e));
  }
}

}  // namespace fabcheck::model
