#include "kv/sizing.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/input.h"
#include "base/strings.h"
#include "fabcheck/model/json_fields.h"
#include "kv/presets.h"

namespace fabcheck::kv {

namespace {

constexpr int kMaxDim = 1 << 20;

// A positive whole number at `key`, or InvalidArgument naming the file and key.
Result<int> Positive(const nlohmann::json& j, const char* key, const std::string& origin) {
  int v = 0;
  try {
    v = model::json_fields::NumberOr(j, key, 0);
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgumentError(fmt::format("{}: {}", origin, model::json_fields::ExceptionMessage(e)));
  }
  if (v <= 0 || v > kMaxDim) {
    return InvalidArgumentError(fmt::format("{}: \"{}\" must be a whole number from 1 to {}{}", origin, key, kMaxDim,
                                            j.contains(key) ? "" : " (missing)"));
  }
  return v;
}

}  // namespace

Result<int> DtypeBytes(std::string_view dtype) {
  std::string d = ToLower(dtype);
  if (d == "bfloat16" || d == "bf16" || d == "float16" || d == "fp16" || d == "half") return 2;
  if (d == "float32" || d == "fp32" || d == "float") return 4;
  if (d == "float8" || d == "fp8" || d == "fp8_e4m3" || d == "fp8_e5m2" || d == "float8_e4m3fn" || d == "int8") {
    return 1;
  }
  return InvalidArgumentError(fmt::format(
      "unknown dtype '{}' (use bfloat16, float16, float32, fp8 or int8: the KV cache's element type)", dtype));
}

Result<model::KvModel> ParseModelConfig(const nlohmann::json& j, const std::string& origin) {
  if (!j.is_object()) return InvalidArgumentError(origin + ": a model config must be a JSON object (config.json)");
  model::KvModel m;
  m.name = j.value("name", std::string());
  if (m.name.empty()) m.name = j.value("_name_or_path", std::string("custom"));
  m.source = j.value("source", origin);
  ASSIGN_OR_RETURN(m.layers, Positive(j, "num_hidden_layers", origin));
  std::string dtype = j.contains("torch_dtype") && j["torch_dtype"].is_string() ? j["torch_dtype"].get<std::string>()
                                                                                 : std::string("bfloat16");
  m.dtype = dtype;
  ASSIGN_OR_RETURN(m.dtype_bytes, DtypeBytes(dtype));
  if (j.contains("kv_lora_rank") && !j["kv_lora_rank"].is_null()) {
    // MLA: the cache holds the compressed latent and the decoupled RoPE key.
    m.attention = "mla";
    ASSIGN_OR_RETURN(int rank, Positive(j, "kv_lora_rank", origin));
    ASSIGN_OR_RETURN(int rope, Positive(j, "qk_rope_head_dim", origin));
    m.latent_dim = rank + rope;
    return m;
  }
  m.attention = "gqa";
  ASSIGN_OR_RETURN(int heads, Positive(j, "num_attention_heads", origin));
  // Hugging Face's default: no num_key_value_heads means multi-head attention.
  m.kv_heads = heads;
  if (j.contains("num_key_value_heads") && !j["num_key_value_heads"].is_null()) {
    ASSIGN_OR_RETURN(m.kv_heads, Positive(j, "num_key_value_heads", origin));
  }
  if (j.contains("head_dim") && !j["head_dim"].is_null()) {
    ASSIGN_OR_RETURN(m.head_dim, Positive(j, "head_dim", origin));
  } else {
    ASSIGN_OR_RETURN(int hidden, Positive(j, "hidden_size", origin));
    if (hidden % heads != 0) {
      return InvalidArgumentError(fmt::format("{}: hidden_size {} is not a multiple of num_attention_heads {}; give "
                                              "head_dim",
                                              origin, hidden, heads));
    }
    m.head_dim = hidden / heads;
  }
  return m;
}

const std::vector<Preset>& Presets() {
  static const std::vector<Preset> presets = [] {
    std::vector<Preset> out;
    for (const EmbeddedPreset& e : EmbeddedPresets()) {
      auto j = nlohmann::json::parse(e.json, nullptr, /*allow_exceptions=*/false);
      auto m = ParseModelConfig(j, std::string("data/kv-models/") + e.file);
      // The presets are tested; a broken one is a build error, not a user's.
      if (!m.ok()) continue;
      Preset p{*m, {}, e.file};
      if (j.contains("aliases") && j["aliases"].is_array()) {
        for (const auto& a : j["aliases"]) {
          if (a.is_string()) p.aliases.push_back(a.get<std::string>());
        }
      }
      out.push_back(std::move(p));
    }
    return out;
  }();
  return presets;
}

Result<model::KvModel> FindModel(std::string_view name_or_path) {
  std::string want = ToLower(name_or_path);
  std::vector<std::string> names;
  for (const Preset& p : Presets()) {
    if (ToLower(p.model.name) == want) return p.model;
    for (const auto& a : p.aliases) {
      if (ToLower(a) == want) return p.model;
    }
    names.push_back(p.model.name);
  }
  std::string path(name_or_path);
  if (path.find('/') == std::string::npos && !EndsWith(path, ".json")) {
    return NotFoundError(fmt::format("unknown model '{}' (presets: {}; or give a config.json file, or --layers "
                                     "--kv-heads --head-dim --dtype / --latent-dim by hand)",
                                     name_or_path, Join(names, ", ")));
  }
  auto text = ReadFileBounded(path, 1 << 20);
  if (!text.ok()) {
    if (text.status().code() == StatusCode::kNotFound && path.find('/') != std::string::npos &&
        !EndsWith(path, ".json")) {
      return NotFoundError(fmt::format("unknown model '{}' (presets: {})", name_or_path, Join(names, ", ")));
    }
    return text.status();
  }
  auto j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return InvalidArgumentError(fmt::format("{}: not valid JSON (expected a config.json)", path));
  return ParseModelConfig(j, path);
}

Result<model::KvSizing> ComputeSizing(const model::KvModel& m, int tp, int page_tokens, uint64_t tokens) {
  if (tp < 1 || tp > 4096) return InvalidArgumentError(fmt::format("--tp {} out of range (1 .. 4096)", tp));
  if (page_tokens < 1 || page_tokens > 65536) {
    return InvalidArgumentError(fmt::format("--page {} tokens out of range (1 .. 65536)", page_tokens));
  }
  if (tokens < 1 || tokens > (uint64_t{1} << 24)) {
    return InvalidArgumentError(fmt::format("--tokens {} out of range (1 .. 16M)", tokens));
  }
  if (m.layers < 1 || m.dtype_bytes < 1) return InvalidArgumentError("model without layers or dtype");
  model::KvSizing s;
  s.model = m;
  s.tp = tp;
  s.page_tokens = page_tokens;
  s.tokens = tokens;
  if (m.attention == "mla") {
    if (m.latent_dim < 1) return InvalidArgumentError("an MLA model needs --latent-dim (kv_lora_rank + qk_rope_head_dim)");
    s.bytes_per_token_per_layer = uint64_t(m.latent_dim) * uint64_t(m.dtype_bytes);
    if (tp > 1) {
      s.notes.push_back(fmt::format("MLA's latent is shared by all heads, so --tp {} does not split it: every rank "
                                    "holds (and may send) the whole latent", tp));
    }
  } else {
    if (m.kv_heads < 1 || m.head_dim < 1) return InvalidArgumentError("a GQA model needs --kv-heads and --head-dim");
    if (tp <= m.kv_heads) {
      if (m.kv_heads % tp != 0) {
        return InvalidArgumentError(fmt::format("--tp {} does not divide the {} KV heads (use a divisor or a multiple "
                                                "of {})", tp, m.kv_heads, m.kv_heads));
      }
      s.kv_heads_per_rank = m.kv_heads / tp;
    } else {
      if (tp % m.kv_heads != 0) {
        return InvalidArgumentError(
            fmt::format("--tp {} is neither a divisor nor a multiple of the {} KV heads", tp, m.kv_heads));
      }
      s.kv_heads_per_rank = 1;
      s.notes.push_back(fmt::format("--tp {} is above the {} KV heads: each head is replicated on {} ranks, each rank "
                                    "holds one", tp, m.kv_heads, tp / m.kv_heads));
    }
    s.bytes_per_token_per_layer = 2 * uint64_t(s.kv_heads_per_rank) * uint64_t(m.head_dim) * uint64_t(m.dtype_bytes);
  }
  s.page_bytes = s.bytes_per_token_per_layer * uint64_t(page_tokens);
  s.pages_per_layer = (tokens + uint64_t(page_tokens) - 1) / uint64_t(page_tokens);
  s.layer_bytes = s.pages_per_layer * s.page_bytes;
  s.transfers_per_request = uint64_t(m.layers) * s.pages_per_layer;
  s.notifications_per_request = uint64_t(m.layers);
  s.bytes_per_request = s.transfers_per_request * s.page_bytes;
  if (tokens % uint64_t(page_tokens) != 0) {
    s.notes.push_back(fmt::format("{} tokens fill {} pages of {}; the last page is partly empty but sent whole",
                                  tokens, s.pages_per_layer, page_tokens));
  }
  return s;
}

}  // namespace fabcheck::kv
