// KV-cache sizing from the model: how many bytes a request's prefill hands to
// decode, in how many page writes and notifications.
//
// Per layer and page, K and V together:
//   GQA:  2 x kv_heads/tp x head_dim x dtype_bytes x page_tokens
//   MLA:  latent_dim x dtype_bytes x page_tokens   (DeepSeek-V3/R1: 512 + 64 = 576; not split by tp)
// with head_dim = hidden_size / num_attention_heads unless config.json gives head_dim.
//
// Models come from presets (data/kv-models/*.json, compiled in and installed
// in /usr/share/fabcheck/kv-models/) or from any Hugging Face config.json:
// both use config.json's own keys (num_hidden_layers, num_key_value_heads,
// hidden_size, num_attention_heads, head_dim, torch_dtype, kv_lora_rank,
// qk_rope_head_dim).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "fabcheck/model/kv.h"

namespace fabcheck::kv {

// Bytes of one element of `dtype` (bfloat16/bf16, float16/fp16/half, float32/fp32,
// float8/fp8/fp8_e4m3/fp8_e5m2, int8); InvalidArgument naming the choices.
Result<int> DtypeBytes(std::string_view dtype);

// A model's KV shape from config.json keys; `origin` names the file in errors
// and becomes the source unless the JSON has "source".
Result<model::KvModel> ParseModelConfig(const nlohmann::json& config, const std::string& origin);

struct Preset {
  model::KvModel model;
  std::vector<std::string> aliases;
  std::string file;  // data/kv-models/<file>
};
// The compiled-in presets, in file name order.
const std::vector<Preset>& Presets();
// A preset by name or alias (case-insensitive), else a config.json file at
// that path; NotFound lists the presets.
Result<model::KvModel> FindModel(std::string_view name_or_path);

// The sizing of one request. InvalidArgument when tp does not divide the KV
// heads (nor they it), or a figure is out of range.
Result<model::KvSizing> ComputeSizing(const model::KvModel& model, int tp, int page_tokens, uint64_t tokens);

}  // namespace fabcheck::kv
