#include "fabcheck/model/kv.h"

#include <algorithm>

#include "fabcheck/model/json_fields.h"

namespace fabcheck::model {

using json_fields::PutIfSet;
using json_fields::Read;
using json_fields::ReadOptional;

bool KvResult::ok() const {
  if (!error.empty()) return false;
  return std::none_of(findings.begin(), findings.end(), [](const Finding& f) { return f.severity == Severity::kFail; });
}

void to_json(nlohmann::json& j, const KvModel& v) {
  j = {{"name", v.name},     {"source", v.source},       {"attention", v.attention},
       {"layers", v.layers}, {"dtype", v.dtype},         {"dtype_bytes", v.dtype_bytes}};
  if (v.attention == "mla") {
    j["latent_dim"] = v.latent_dim;
  } else {
    j["kv_heads"] = v.kv_heads;
    j["head_dim"] = v.head_dim;
  }
}
void from_json(const nlohmann::json& j, KvModel& v) {
  Read(j, "name", v.name);
  Read(j, "source", v.source);
  Read(j, "attention", v.attention);
  Read(j, "layers", v.layers);
  Read(j, "kv_heads", v.kv_heads);
  Read(j, "head_dim", v.head_dim);
  Read(j, "latent_dim", v.latent_dim);
  Read(j, "dtype", v.dtype);
  Read(j, "dtype_bytes", v.dtype_bytes);
}

void to_json(nlohmann::json& j, const KvSizing& v) {
  j = {{"model", v.model},
       {"tp", v.tp},
       {"page_tokens", v.page_tokens},
       {"tokens", v.tokens},
       {"bytes_per_token_per_layer", v.bytes_per_token_per_layer},
       {"page_bytes", v.page_bytes},
       {"pages_per_layer", v.pages_per_layer},
       {"layer_bytes", v.layer_bytes},
       {"transfers_per_request", v.transfers_per_request},
       {"notifications_per_request", v.notifications_per_request},
       {"bytes_per_request", v.bytes_per_request},
       {"notes", v.notes}};
  if (v.model.attention != "mla") j["kv_heads_per_rank"] = v.kv_heads_per_rank;
}
void from_json(const nlohmann::json& j, KvSizing& v) {
  Read(j, "model", v.model);
  Read(j, "tp", v.tp);
  Read(j, "kv_heads_per_rank", v.kv_heads_per_rank);
  Read(j, "page_tokens", v.page_tokens);
  Read(j, "tokens", v.tokens);
  Read(j, "bytes_per_token_per_layer", v.bytes_per_token_per_layer);
  Read(j, "page_bytes", v.page_bytes);
  Read(j, "pages_per_layer", v.pages_per_layer);
  Read(j, "layer_bytes", v.layer_bytes);
  Read(j, "transfers_per_request", v.transfers_per_request);
  Read(j, "notifications_per_request", v.notifications_per_request);
  Read(j, "bytes_per_request", v.bytes_per_request);
  Read(j, "notes", v.notes);
}

void to_json(nlohmann::json& j, const KvTimes& v) {
  j = {{"samples", v.samples}, {"p50_ms", v.p50_ms}, {"p99_ms", v.p99_ms}, {"max_ms", v.max_ms}, {"avg_ms", v.avg_ms}};
}
void from_json(const nlohmann::json& j, KvTimes& v) {
  Read(j, "samples", v.samples);
  Read(j, "p50_ms", v.p50_ms);
  Read(j, "p99_ms", v.p99_ms);
  Read(j, "max_ms", v.max_ms);
  Read(j, "avg_ms", v.avg_ms);
}

void to_json(nlohmann::json& j, const KvFigures& v) {
  j = {{"requests", v.requests},
       {"pages", v.pages},
       {"notifications", v.notifications},
       {"bytes", v.bytes},
       {"elapsed_s", v.elapsed_s},
       {"gbytes_per_s", v.gbytes_per_s},
       {"gbps", v.gbps},
       {"pages_per_s", v.pages_per_s},
       {"request", v.request},
       {"layer", v.layer},
       {"cpu_s_per_gb_client", v.cpu_s_per_gb_client},
       {"cpu_s_per_gb_server", v.cpu_s_per_gb_server}};
}
void from_json(const nlohmann::json& j, KvFigures& v) {
  Read(j, "requests", v.requests);
  Read(j, "pages", v.pages);
  Read(j, "notifications", v.notifications);
  Read(j, "bytes", v.bytes);
  Read(j, "elapsed_s", v.elapsed_s);
  Read(j, "gbytes_per_s", v.gbytes_per_s);
  Read(j, "gbps", v.gbps);
  Read(j, "pages_per_s", v.pages_per_s);
  Read(j, "request", v.request);
  Read(j, "layer", v.layer);
  Read(j, "cpu_s_per_gb_client", v.cpu_s_per_gb_client);
  Read(j, "cpu_s_per_gb_server", v.cpu_s_per_gb_server);
}

void to_json(nlohmann::json& j, const KvL3& v) {
  j = {{"op", v.op},
       {"size", v.size},
       {"streams", v.streams},
       {"duration_s", v.duration_s},
       {"gbytes_per_s", v.gbytes_per_s},
       {"gbps", v.gbps},
       {"cpu_s_per_gb_client", v.cpu_s_per_gb_client},
       {"cpu_s_per_gb_server", v.cpu_s_per_gb_server}};
  if (!v.error.empty()) j["error"] = v.error;
}
void from_json(const nlohmann::json& j, KvL3& v) {
  Read(j, "op", v.op);
  Read(j, "size", v.size);
  Read(j, "streams", v.streams);
  Read(j, "duration_s", v.duration_s);
  Read(j, "gbytes_per_s", v.gbytes_per_s);
  Read(j, "gbps", v.gbps);
  Read(j, "cpu_s_per_gb_client", v.cpu_s_per_gb_client);
  Read(j, "cpu_s_per_gb_server", v.cpu_s_per_gb_server);
  Read(j, "error", v.error);
}

void to_json(nlohmann::json& j, const KvTtft& v) {
  j = {{"budget_ms", v.budget_ms}, {"transfer_p99_ms", v.transfer_p99_ms}, {"fits", v.fits},
       {"max_tokens", v.max_tokens}};
}
void from_json(const nlohmann::json& j, KvTtft& v) {
  Read(j, "budget_ms", v.budget_ms);
  Read(j, "transfer_p99_ms", v.transfer_p99_ms);
  Read(j, "fits", v.fits);
  Read(j, "max_tokens", v.max_tokens);
}

void to_json(nlohmann::json& j, const KvResult& v) {
  j = {{"schema", v.schema},         {"started_at", v.started_at}, {"server", v.server},
       {"transport", v.transport},   {"inflight", v.inflight},     {"warmup", v.warmup},
       {"sizing", v.sizing},         {"pool_pages", v.pool_pages}, {"client", v.client},
       {"server_endpoint", v.server_side}, {"findings", v.findings}, {"ok", v.ok()}};
  PutIfSet(j, "l3", v.l3);
  PutIfSet(j, "kv", v.kv);
  PutIfSet(j, "ratio_to_l3", v.ratio_to_l3);
  PutIfSet(j, "goal_ratio", v.goal_ratio);
  PutIfSet(j, "ttft", v.ttft);
  if (!v.error.empty()) j["error"] = v.error;
}
void from_json(const nlohmann::json& j, KvResult& v) {
  json_fields::RequireObject(j, "a kv result");
  Read(j, "schema", v.schema);
  Read(j, "started_at", v.started_at);
  Read(j, "server", v.server);
  Read(j, "transport", v.transport);
  Read(j, "inflight", v.inflight);
  Read(j, "warmup", v.warmup);
  Read(j, "sizing", v.sizing);
  Read(j, "pool_pages", v.pool_pages);
  ReadOptional(j, "l3", v.l3);
  ReadOptional(j, "kv", v.kv);
  ReadOptional(j, "ratio_to_l3", v.ratio_to_l3);
  ReadOptional(j, "goal_ratio", v.goal_ratio);
  ReadOptional(j, "ttft", v.ttft);
  Read(j, "client", v.client);
  Read(j, "server_endpoint", v.server_side);
  Read(j, "findings", v.findings);
  Read(j, "error", v.error);
}

bool KvFanResult::ok() const {
  return !members.empty() && std::all_of(members.begin(), members.end(), [](const KvFanMember& m) {
    return m.error.empty() && m.result && m.result->ok();
  });
}

void to_json(nlohmann::json& j, const KvFanMember& v) {
  j = {{"prefill", v.prefill}, {"decode", v.decode}};
  PutIfSet(j, "result", v.result);
  if (!v.error.empty()) j["error"] = v.error;
}
void from_json(const nlohmann::json& j, KvFanMember& v) {
  json_fields::RequireObject(j, "a kv fan member");
  Read(j, "prefill", v.prefill);
  Read(j, "decode", v.decode);
  ReadOptional(j, "result", v.result);
  Read(j, "error", v.error);
}

void to_json(nlohmann::json& j, const KvFanResult& v) {
  j = {{"schema", v.schema},       {"started_at", v.started_at},         {"mode", v.mode},
       {"hub", v.hub},             {"members", v.members},               {"gbytes_per_s", v.gbytes_per_s},
       {"l3_gbytes_per_s", v.l3_gbytes_per_s}, {"findings", v.findings}, {"ok", v.ok()}};
  PutIfSet(j, "ratio_to_l3", v.ratio_to_l3);
  PutIfSet(j, "goal_ratio", v.goal_ratio);
}
void from_json(const nlohmann::json& j, KvFanResult& v) {
  json_fields::RequireObject(j, "a kv fan-in/fan-out result");
  Read(j, "schema", v.schema);
  Read(j, "started_at", v.started_at);
  Read(j, "mode", v.mode);
  Read(j, "hub", v.hub);
  Read(j, "members", v.members);
  Read(j, "gbytes_per_s", v.gbytes_per_s);
  Read(j, "l3_gbytes_per_s", v.l3_gbytes_per_s);
  ReadOptional(j, "ratio_to_l3", v.ratio_to_l3);
  ReadOptional(j, "goal_ratio", v.goal_ratio);
  Read(j, "findings", v.findings);
}

}  // namespace fabcheck::model
