#include "fabcheck/model/sweep.h"

#include "fabcheck/model/json_fields.h"

#include <algorithm>

namespace fabcheck::model {
namespace {

using fabcheck::model::json_fields::Optional;
using fabcheck::model::json_fields::PutNullable;

constexpr std::pair<CulpritKind, std::string_view> kKindNames[] = {
    {CulpritKind::kSlowNode, "slow-node"},
    {CulpritKind::kSlowLink, "slow-link"},
    {CulpritKind::kHighLatencyNode, "high-latency-node"},
    {CulpritKind::kHighLatencyLink, "high-latency-link"},
    {CulpritKind::kMtuHoleNode, "mtu-hole-node"},
    {CulpritKind::kMtuHoleLink, "mtu-hole-link"},
    {CulpritKind::kFailedLink, "failed-link"},
    {CulpritKind::kUnreachable, "unreachable"},
};

}  // namespace

size_t PairMatrix::measured() const {
  return static_cast<size_t>(std::count_if(values_.begin(), values_.end(), [](float v) { return !std::isnan(v); }));
}

std::string_view CulpritKindName(CulpritKind kind) {
  for (const auto& [k, name] : kKindNames) {
    if (k == kind) return name;
  }
  return "unknown";
}

std::optional<CulpritKind> ParseCulpritKind(std::string_view name) {
  for (const auto& [k, n] : kKindNames) {
    if (n == name) return k;
  }
  return std::nullopt;
}

std::vector<SweepMatrices> BuildMatrices(int members, int rails, const std::vector<SweepPairResult>& pairs) {
  std::vector<SweepMatrices> out;
  for (int r = 0; r < rails; ++r) {
    out.push_back({r, PairMatrix(members), PairMatrix(members), PairMatrix(members), PairMatrix(members)});
  }
  for (const auto& p : pairs) {
    if (p.rail < 0 || p.rail >= rails || p.a < 0 || p.b < 0 || p.a >= members || p.b >= members) continue;
    auto& m = out[static_cast<size_t>(p.rail)];
    if (p.bw_gbps) m.bw_gbps.set(p.a, p.b, *p.bw_gbps);
    if (p.lat_median_us) m.lat_median_us.set(p.a, p.b, *p.lat_median_us);
    if (p.lat_p99_us) m.lat_p99_us.set(p.a, p.b, *p.lat_p99_us);
    if (p.path_mtu) m.path_mtu.set(p.a, p.b, *p.path_mtu);
  }
  return out;
}

void to_json(nlohmann::json& j, const PairMatrix& m) {
  j = nlohmann::json::array();
  for (int i = 0; i < m.size(); ++i) {
    nlohmann::json row = nlohmann::json::array();
    for (int k = 0; k < m.size(); ++k) {
      if (m.has(i, k)) {
        // Round to 4 significant decimals: float noise in JSON helps nobody.
        row.push_back(std::round(m.at(i, k) * 1e4) / 1e4);
      } else {
        row.push_back(nullptr);
      }
    }
    j.push_back(std::move(row));
  }
}

void from_json(const nlohmann::json& j, PairMatrix& m) {
  const int n = static_cast<int>(j.size());
  m = PairMatrix(n);
  for (int i = 0; i < n; ++i) {
    const auto& row = j.at(static_cast<size_t>(i));
    if (static_cast<int>(row.size()) != n) {
      throw nlohmann::json::other_error::create(501, "matrix row " + std::to_string(i) + " is not " +
                                                         std::to_string(n) + " wide", &j);
    }
    for (int k = 0; k < n; ++k) {
      if (!row.at(static_cast<size_t>(k)).is_null()) m.set(i, k, row.at(static_cast<size_t>(k)).get<double>());
    }
  }
}

void to_json(nlohmann::json& j, const SweepMember& m) {
  j = {{"index", m.index}, {"name", m.name}, {"display", m.display.empty() ? m.name : m.display},
       {"control", m.control}, {"data_addresses", m.data_addresses},
       {"interface_mtu", m.interface_mtu}, {"reachable", m.reachable}};
  if (!m.error.empty()) j["error"] = m.error;
}
void from_json(const nlohmann::json& j, SweepMember& m) {
  m.index = j.at("index").get<int>();
  m.name = j.value("name", "");
  m.display = j.value("display", m.name);
  m.control = j.value("control", "");
  m.data_addresses = j.value("data_addresses", std::vector<std::string>{});
  m.interface_mtu = json_fields::NumbersOr<int>(j, "interface_mtu");
  m.reachable = j.value("reachable", true);
  m.error = j.value("error", "");
}

void to_json(nlohmann::json& j, const SweepPairResult& p) {
  j = {{"a", p.a}, {"b", p.b}, {"rail", p.rail}, {"round", p.round}, {"local_mtu", p.local_mtu},
       {"transport", p.transport}};
  PutNullable(j, "bw_gbps", p.bw_gbps);
  PutNullable(j, "lat_median_us", p.lat_median_us);
  PutNullable(j, "lat_p99_us", p.lat_p99_us);
  PutNullable(j, "path_mtu", p.path_mtu);
  if (!p.error.empty()) j["error"] = p.error;
  if (!p.flow_gbps.empty()) {
    j["flow_gbps"] = p.flow_gbps;
    j["flow_spine"] = p.flow_spine;
    if (!p.flow_core.empty()) {
      j["flow_core"] = p.flow_core;
      j["flow_spine_down"] = p.flow_spine_down;
    }
  }
  if (p.a_port_gbps) j["a_port_gbps"] = *p.a_port_gbps;
  if (p.b_port_gbps) j["b_port_gbps"] = *p.b_port_gbps;
  if (p.loss) j["loss"] = *p.loss;
}
void from_json(const nlohmann::json& j, SweepPairResult& p) {
  p.a = j.at("a").get<int>();
  p.b = j.at("b").get<int>();
  p.rail = json_fields::NumberOr(j, "rail", 0);
  p.round = json_fields::NumberOr(j, "round", 0);
  p.local_mtu = json_fields::NumberOr(j, "local_mtu", 0);
  p.transport = j.value("transport", "");
  p.bw_gbps = Optional<double>(j, "bw_gbps");
  p.lat_median_us = Optional<double>(j, "lat_median_us");
  p.lat_p99_us = Optional<double>(j, "lat_p99_us");
  p.path_mtu = Optional<int>(j, "path_mtu");
  p.error = j.value("error", "");
  p.flow_gbps = j.value("flow_gbps", std::vector<float>{});
  p.flow_spine = j.value("flow_spine", std::vector<int16_t>{});
  if (p.flow_spine.size() != p.flow_gbps.size()) p.flow_spine.assign(p.flow_gbps.size(), -1);
  p.flow_core = j.value("flow_core", std::vector<int16_t>{});
  p.flow_spine_down = j.value("flow_spine_down", std::vector<int16_t>{});
  if (p.flow_core.size() != p.flow_gbps.size() || p.flow_spine_down.size() != p.flow_gbps.size()) {
    p.flow_core.clear();
    p.flow_spine_down.clear();
  }
  p.a_port_gbps = Optional<double>(j, "a_port_gbps");
  p.b_port_gbps = Optional<double>(j, "b_port_gbps");
  p.loss = Optional<double>(j, "loss");
}

void to_json(nlohmann::json& j, const SweepMatrices& m) {
  j = {{"rail", m.rail},
       {"bw_gbps", m.bw_gbps},
       {"lat_median_us", m.lat_median_us},
       {"lat_p99_us", m.lat_p99_us},
       {"path_mtu", m.path_mtu}};
}
void from_json(const nlohmann::json& j, SweepMatrices& m) {
  m.rail = json_fields::NumberOr(j, "rail", 0);
  m.bw_gbps = j.at("bw_gbps").get<PairMatrix>();
  m.lat_median_us = j.at("lat_median_us").get<PairMatrix>();
  m.lat_p99_us = j.at("lat_p99_us").get<PairMatrix>();
  m.path_mtu = j.at("path_mtu").get<PairMatrix>();
}

void to_json(nlohmann::json& j, const CulpritKind& k) { j = std::string(CulpritKindName(k)); }
void from_json(const nlohmann::json& j, CulpritKind& k) {
  auto parsed = ParseCulpritKind(j.get<std::string>());
  if (!parsed) throw nlohmann::json::other_error::create(501, "unknown culprit kind " + j.dump(), &j);
  k = *parsed;
}

void to_json(nlohmann::json& j, const SweepCulprit& c) {
  j = {{"kind", c.kind},     {"severity", c.severity}, {"rail", c.rail},   {"nodes", c.nodes},
       {"direction", c.direction}, {"metric", c.metric}, {"value", c.value}, {"median", c.median},
       {"ratio", c.ratio}};
  // +-inf (zero spread) is not JSON: write null and let the ratio speak.
  j["robust_z"] = std::isfinite(c.robust_z) ? nlohmann::json(c.robust_z) : nlohmann::json(nullptr);
}
void from_json(const nlohmann::json& j, SweepCulprit& c) {
  c.kind = j.at("kind").get<CulpritKind>();
  c.severity = j.at("severity").get<Severity>();
  c.rail = json_fields::NumberOr(j, "rail", 0);
  c.nodes = j.at("nodes").get<std::vector<int>>();
  c.direction = j.value("direction", "");
  c.metric = j.value("metric", "");
  c.value = json_fields::NumberOr(j, "value", 0.0);
  c.median = json_fields::NumberOr(j, "median", 0.0);
  c.ratio = json_fields::NumberOr(j, "ratio", 0.0);
  c.robust_z = j.contains("robust_z") && !j.at("robust_z").is_null() ? j.at("robust_z").get<double>()
                                                                     : -std::numeric_limits<double>::infinity();
}

void to_json(nlohmann::json& j, const SweepStats& s) {
  j = {{"rail", s.rail},
       {"pairs_measured", s.pairs_measured},
       {"bw_median_gbps", s.bw_median_gbps},
       {"bw_mad_gbps", s.bw_mad_gbps},
       {"lat_median_us", s.lat_median_us},
       {"lat_mad_us", s.lat_mad_us},
       {"path_mtu_median", s.path_mtu_median}};
}
void from_json(const nlohmann::json& j, SweepStats& s) {
  s.rail = json_fields::NumberOr(j, "rail", 0);
  s.pairs_measured = json_fields::NumberOr(j, "pairs_measured", size_t{0});
  s.bw_median_gbps = json_fields::NumberOr(j, "bw_median_gbps", 0.0);
  s.bw_mad_gbps = json_fields::NumberOr(j, "bw_mad_gbps", 0.0);
  s.lat_median_us = json_fields::NumberOr(j, "lat_median_us", 0.0);
  s.lat_mad_us = json_fields::NumberOr(j, "lat_mad_us", 0.0);
  s.path_mtu_median = json_fields::NumberOr(j, "path_mtu_median", 0.0);
}

void to_json(nlohmann::json& j, const SweepEvidence& e) {
  j = {{"a", e.a}, {"b", e.b}, {"rail", e.rail}, {"round", e.round}, {"metric", e.metric},
       {"value", e.value}, {"expected", e.expected}};
}
void from_json(const nlohmann::json& j, SweepEvidence& e) {
  e.a = j.at("a").get<int>();
  e.b = j.at("b").get<int>();
  e.rail = j.value("rail", 0);
  e.round = j.value("round", 0);
  e.metric = j.value("metric", "");
  e.value = j.value("value", 0.0);
  e.expected = j.value("expected", 0.0);
}
void to_json(nlohmann::json& j, const SweepElementFinding& f) {
  j = {{"kind", f.kind}, {"element", f.element}, {"rail", f.rail}, {"severity", f.severity},
       {"confidence", f.confidence}, {"ratio", f.ratio}, {"why", f.why}, {"evidence", f.evidence}};
  if (!f.direction.empty()) j["direction"] = f.direction;
}
void from_json(const nlohmann::json& j, SweepElementFinding& f) {
  f.kind = j.at("kind").get<std::string>();
  f.element = j.at("element").get<std::string>();
  f.rail = j.value("rail", -1);
  f.severity = j.at("severity").get<Severity>();
  f.confidence = j.value("confidence", 0.0);
  f.ratio = j.value("ratio", 0.0);
  f.why = j.value("why", "");
  f.evidence = j.value("evidence", std::vector<SweepEvidence>{});
  f.direction = j.value("direction", "");
}

void to_json(nlohmann::json& j, const SweepRetest& r) {
  j = {{"round", r.round}, {"suspect", r.suspect}, {"why", r.why}, {"pairs", r.pairs}};
}
void from_json(const nlohmann::json& j, SweepRetest& r) {
  r.round = json_fields::NumberOr(j, "round", 0);
  r.suspect = j.value("suspect", "");
  r.why = j.value("why", "");
  r.pairs = j.value("pairs", std::vector<std::pair<int, int>>{});
}

void to_json(nlohmann::json& j, const SweepVerdict& v) {
  j = {{"severity", v.severity}, {"summary", v.summary}, {"stats", v.stats},
       {"culprits", v.culprits}, {"findings", v.findings}};
  if (!v.elements.empty()) j["elements"] = v.elements;
}
void from_json(const nlohmann::json& j, SweepVerdict& v) {
  v.severity = j.at("severity").get<Severity>();
  v.summary = j.value("summary", "");
  v.stats = j.value("stats", std::vector<SweepStats>{});
  v.culprits = j.value("culprits", std::vector<SweepCulprit>{});
  v.findings = j.value("findings", std::vector<Finding>{});
  v.elements = j.value("elements", std::vector<SweepElementFinding>{});
}

void to_json(nlohmann::json& j, const SweepResult& r) {
  j = {{"schema", r.schema},
       {"pattern", r.pattern},
       {"rails", r.rails},
       {"rounds_planned", r.rounds_planned},
       {"rounds_completed", r.rounds_completed},
       {"interrupted", r.interrupted},
       {"elapsed_s", r.elapsed_s},
       {"transport", r.transport},
       {"settings", r.settings.is_null() ? nlohmann::json::object() : r.settings},
       {"members", r.members},
       {"pairs", r.pairs},
       {"matrices", r.matrices},
       {"verdict", r.verdict}};
  if (!r.spines.empty()) j["spines"] = r.spines;
  if (!r.cores.empty()) j["cores"] = r.cores;
  if (!r.retests.empty()) j["retests"] = r.retests;
}

void from_json(const nlohmann::json& j, SweepResult& r) {
  r.schema = j.at("schema").get<std::string>();
  if (r.schema != kSweepSchema) {
    throw nlohmann::json::other_error::create(
        501, "schema is " + r.schema + ", expected " + std::string(kSweepSchema), &j);
  }
  r.pattern = j.value("pattern", "");
  r.rails = json_fields::NumberOr(j, "rails", 1);
  r.rounds_planned = json_fields::NumberOr(j, "rounds_planned", 0);
  r.rounds_completed = json_fields::NumberOr(j, "rounds_completed", 0);
  r.interrupted = j.value("interrupted", false);
  r.elapsed_s = json_fields::NumberOr(j, "elapsed_s", 0.0);
  r.transport = j.value("transport", "");
  r.settings = j.value("settings", nlohmann::json::object());
  r.members = j.value("members", std::vector<SweepMember>{});
  r.pairs = j.value("pairs", std::vector<SweepPairResult>{});
  r.matrices = j.value("matrices", std::vector<SweepMatrices>{});
  r.spines = j.value("spines", std::vector<std::vector<std::string>>{});
  r.cores = j.value("cores", std::vector<std::vector<std::string>>{});
  r.retests = j.value("retests", std::vector<SweepRetest>{});
  if (j.contains("verdict")) r.verdict = j.at("verdict").get<SweepVerdict>();
}

}  // namespace fabcheck::model
