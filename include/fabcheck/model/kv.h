// KvResult: the result of one `fabcheck kv run` (rung L5): the inference
// KV-cache transfer from a prefill node to a decode node, sized from the
// model, beside the same pair's L3 write bandwidth measured in the same run.
//
// JSON schema "fabcheck.kv/v1" (docs/kv.md). Units: bytes, GB/s = 1e9 bytes/s,
// Gb/s = 1e9 bits/s, times in milliseconds.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fabcheck/model/finding.h"
#include "fabcheck/model/perf.h"

namespace fabcheck::model {

inline constexpr const char* kKvSchema = "fabcheck.kv/v1";

// What the KV cache of one model looks like, per token and layer.
struct KvModel {
  std::string name;       // "Llama-3-70B", or "custom" for --layers/--kv-heads/...
  std::string source;     // where the numbers come from (the config.json's URL, a file, "command line")
  std::string attention;  // "gqa" (K and V per KV head) or "mla" (one compressed latent per token)
  int layers = 0;
  int kv_heads = 0;       // gqa
  int head_dim = 0;       // gqa
  int latent_dim = 0;     // mla: kv_lora_rank + qk_rope_head_dim
  std::string dtype;      // "bfloat16", "float16", "float8", "float32"
  int dtype_bytes = 0;
};

// The transfer one request makes, from the model and the serving choices.
struct KvSizing {
  KvModel model;
  int tp = 1;                         // tensor-parallel ranks the KV heads are split over
  int kv_heads_per_rank = 0;          // gqa: kv_heads / tp (at least 1: heads are replicated beyond)
  int page_tokens = 0;                // tokens per page (the paged-attention block)
  uint64_t tokens = 0;                // prompt length of a request
  uint64_t bytes_per_token_per_layer = 0;
  uint64_t page_bytes = 0;            // one layer's page, K and V together
  uint64_t pages_per_layer = 0;       // ceil(tokens / page_tokens)
  uint64_t layer_bytes = 0;           // pages_per_layer x page_bytes
  uint64_t transfers_per_request = 0; // layers x pages_per_layer page writes
  uint64_t notifications_per_request = 0;  // one per layer
  uint64_t bytes_per_request = 0;     // transfers x page_bytes
  std::vector<std::string> notes;
};

// Percentiles of a set of times, in milliseconds.
struct KvTimes {
  uint64_t samples = 0;
  double p50_ms = 0, p99_ms = 0, max_ms = 0, avg_ms = 0;
};

struct KvFigures {
  uint64_t requests = 0;              // measured (warmup excluded)
  uint64_t pages = 0;
  uint64_t notifications = 0;
  uint64_t bytes = 0;
  double elapsed_s = 0;               // first measured page posted -> last request acknowledged
  double gbytes_per_s = 0;            // effective: bytes / elapsed
  double gbps = 0;
  double pages_per_s = 0;
  KvTimes request;                    // per-request transfer time
  KvTimes layer;                      // per-layer time (first page posted -> its notification acknowledged)
  double cpu_s_per_gb_client = 0;     // CPU seconds per GB moved (process, user + system)
  double cpu_s_per_gb_server = 0;
};

// The rung below, measured between the same pair in the same run: perf write
// bandwidth at the page size with as many streams as requests in flight.
struct KvL3 {
  std::string op;                     // "write" (verbs) or "send" (tcp byte stream)
  uint64_t size = 0;                  // the page size
  int streams = 0;
  double duration_s = 0;
  double gbytes_per_s = 0;
  double gbps = 0;
  double cpu_s_per_gb_client = 0;
  double cpu_s_per_gb_server = 0;
  std::string error;                  // the L3 run failed: no ratio
};

// The time-to-first-token budget the KV transfer must fit in.
struct KvTtft {
  double budget_ms = 0;
  double transfer_p99_ms = 0;
  bool fits = false;
  // The longest prompt whose transfer fits the budget at the measured rate
  // (transfer time scaled by bytes, whole pages), in tokens.
  uint64_t max_tokens = 0;
};

struct KvResult {
  std::string schema = kKvSchema;
  std::string started_at;
  std::string server;                 // HOST:PORT of the decode side's perf server
  std::string transport;              // "tcp" or "verbs"
  int inflight = 1;
  uint64_t warmup = 0;
  KvSizing sizing;
  uint64_t pool_pages = 0;            // destination pages the server allocated (its page table)
  std::optional<KvL3> l3;             // absent with --no-l3
  std::optional<KvFigures> kv;        // absent when the kv run failed before measuring
  std::optional<double> ratio_to_l3;  // kv.gbytes_per_s / l3.gbytes_per_s
  std::optional<double> goal_ratio;   // 0.9 at pages of 256 KiB and more, 0.7 below
  std::optional<KvTtft> ttft;
  PerfEndpoint client;                // prefill side
  PerfEndpoint server_side;           // decode side, JSON "server_endpoint"
  std::vector<Finding> findings;      // pre-run comparison (MTU, GID type, registration), shortfall, budget
  std::string error;
  bool ok() const;                    // no error and no failing finding
};

// `fabcheck kv run --agents`: several transfers at once through one member
// (the hub, the first agent): fan-in, every other member a prefill side
// writing into the hub's pool at the same time (many-to-one); fan-out, the
// hub a prefill side writing into every other member at once. Each transfer
// is a whole `kv run` (its L3 figure, then the KV pattern), all started
// together, so the L3 runs overlap each other and so do the transfers.
// JSON schema "fabcheck.kv-fan/v1".
inline constexpr const char* kKvFanSchema = "fabcheck.kv-fan/v1";

struct KvFanMember {
  std::string prefill;             // agent names
  std::string decode;
  std::optional<KvResult> result;  // absent when the member could not run it
  std::string error;
};

struct KvFanResult {
  std::string schema = kKvFanSchema;
  std::string started_at;
  std::string mode;                // "fan-in" or "fan-out"
  std::string hub;                 // the member every transfer goes into (fan-in) or out of (fan-out)
  std::vector<KvFanMember> members;
  // Sums over the transfers that measured: the hub's aggregate rate, and the
  // L3 runs' aggregate beside it (they ran at the same time too).
  double gbytes_per_s = 0;
  double l3_gbytes_per_s = 0;
  std::optional<double> ratio_to_l3;
  std::optional<double> goal_ratio;
  std::vector<Finding> findings;   // every member's, prefixed with its pair
  bool ok() const;                 // every member ran and passed
};

void to_json(nlohmann::json& j, const KvModel& v);
void from_json(const nlohmann::json& j, KvModel& v);
void to_json(nlohmann::json& j, const KvSizing& v);
void from_json(const nlohmann::json& j, KvSizing& v);
void to_json(nlohmann::json& j, const KvTimes& v);
void from_json(const nlohmann::json& j, KvTimes& v);
void to_json(nlohmann::json& j, const KvFigures& v);
void from_json(const nlohmann::json& j, KvFigures& v);
void to_json(nlohmann::json& j, const KvL3& v);
void from_json(const nlohmann::json& j, KvL3& v);
void to_json(nlohmann::json& j, const KvTtft& v);
void from_json(const nlohmann::json& j, KvTtft& v);
void to_json(nlohmann::json& j, const KvResult& v);
void from_json(const nlohmann::json& j, KvResult& v);
void to_json(nlohmann::json& j, const KvFanMember& v);
void from_json(const nlohmann::json& j, KvFanMember& v);
void to_json(nlohmann::json& j, const KvFanResult& v);
void from_json(const nlohmann::json& j, KvFanResult& v);

}  // namespace fabcheck::model
