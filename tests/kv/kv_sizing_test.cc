// Sizing against the published config.json of each preset (numbers checked
// against the Hugging Face files the presets cite).
#include <gtest/gtest.h>

#include <fstream>

#include "base/temp_dir.h"
#include "kv/sizing.h"

namespace fabcheck::kv {
namespace {

model::KvModel Preset(const std::string& name) {
  auto m = FindModel(name);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return m.ok() ? *m : model::KvModel{};
}

TEST(KvSizing, EveryPresetFileParses) {
  // One preset per data file: none was dropped for a parse error.
  EXPECT_EQ(Presets().size(), 5u);
  for (const auto& p : Presets()) {
    EXPECT_FALSE(p.model.source.empty()) << p.file;
    EXPECT_NE(p.model.source.find("huggingface.co"), std::string::npos) << p.file;
  }
}

TEST(KvSizing, Llama3_8B) {
  auto m = Preset("Llama-3-8B");
  EXPECT_EQ(m.layers, 32);
  EXPECT_EQ(m.kv_heads, 8);
  EXPECT_EQ(m.head_dim, 128);  // 4096 / 32
  EXPECT_EQ(m.dtype_bytes, 2);
  auto s = ComputeSizing(m, 1, 16, 8192);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->bytes_per_token_per_layer, 2u * 8 * 128 * 2);  // 4 KiB
  EXPECT_EQ(s->page_bytes, 65536u);
  EXPECT_EQ(s->transfers_per_request, 32u * 512);
  EXPECT_EQ(s->bytes_per_request, 32ull * 512 * 65536);  // 1 GiB
}

TEST(KvSizing, Llama3_70BWorkedExample) {
  // docs/kv.md: Llama-3-70B, 8k-token prompt, 16-token pages.
  auto s = ComputeSizing(Preset("llama-3-70b"), 1, 16, 8192);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->model.layers, 80);
  EXPECT_EQ(s->page_bytes, 2u * 8 * 128 * 2 * 16);  // 64 KiB
  EXPECT_EQ(s->pages_per_layer, 512u);
  EXPECT_EQ(s->transfers_per_request, 40960u);
  EXPECT_EQ(s->notifications_per_request, 80u);
  EXPECT_EQ(s->bytes_per_request, 2684354560ull);  // 2.5 GiB
  // tp 8: one KV head per rank, an eighth of it.
  auto tp8 = ComputeSizing(Preset("Llama-3-70B"), 8, 16, 8192);
  ASSERT_TRUE(tp8.ok());
  EXPECT_EQ(tp8->kv_heads_per_rank, 1);
  EXPECT_EQ(tp8->page_bytes, 8192u);
}

TEST(KvSizing, Llama3_405BAndQwen72B) {
  auto l = Preset("Llama-3.1-405B");
  EXPECT_EQ(l.layers, 126);
  EXPECT_EQ(l.kv_heads, 8);
  EXPECT_EQ(l.head_dim, 128);  // 16384 / 128
  auto q = Preset("Qwen/Qwen2.5-72B-Instruct");
  EXPECT_EQ(q.layers, 80);
  EXPECT_EQ(q.kv_heads, 8);
  EXPECT_EQ(q.head_dim, 128);  // 8192 / 64
  auto s = ComputeSizing(l, 1, 16, 1000);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->pages_per_layer, 63u);  // ceil(1000 / 16)
  EXPECT_EQ(s->transfers_per_request, 126u * 63);
  EXPECT_FALSE(s->notes.empty());  // the partly filled last page is said
}

TEST(KvSizing, DeepSeekMla) {
  auto m = Preset("DeepSeek-R1");
  EXPECT_EQ(m.attention, "mla");
  EXPECT_EQ(m.layers, 61);
  EXPECT_EQ(m.latent_dim, 576);  // kv_lora_rank 512 + qk_rope_head_dim 64
  auto s = ComputeSizing(m, 8, 64, 4096);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->bytes_per_token_per_layer, 576u * 2);  // not split by tp
  EXPECT_EQ(s->page_bytes, 576u * 2 * 64);
  EXPECT_EQ(s->transfers_per_request, 61u * 64);
  EXPECT_FALSE(s->notes.empty());
}

TEST(KvSizing, TensorParallelRules) {
  auto m = Preset("Llama-3-8B");
  EXPECT_FALSE(ComputeSizing(m, 3, 16, 100).ok());   // 3 does not divide 8
  EXPECT_FALSE(ComputeSizing(m, 12, 16, 100).ok());  // nor is 12 a multiple of 8
  auto tp16 = ComputeSizing(m, 16, 16, 100);          // replicated heads
  ASSERT_TRUE(tp16.ok());
  EXPECT_EQ(tp16->kv_heads_per_rank, 1);
  EXPECT_FALSE(ComputeSizing(m, 1, 0, 100).ok());
  EXPECT_FALSE(ComputeSizing(m, 1, 16, 0).ok());
}

TEST(KvSizing, Dtypes) {
  EXPECT_EQ(*DtypeBytes("bfloat16"), 2);
  EXPECT_EQ(*DtypeBytes("FP8"), 1);
  EXPECT_EQ(*DtypeBytes("float32"), 4);
  auto bad = DtypeBytes("int3");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("bfloat16"), std::string::npos);
}

TEST(KvSizing, ARealConfigJsonAndBadOnes) {
  // A config.json as Hugging Face publishes it (Llama-3.2-3B gives head_dim).
  auto dir = TempDir::Create("kvcfg");
  ASSERT_TRUE(dir.ok());
  std::string path = (*dir)->path() + "/config.json";
  std::ofstream(path) << R"({"architectures": ["LlamaForCausalLM"], "head_dim": 128, "hidden_size": 3072,
    "num_attention_heads": 24, "num_hidden_layers": 28, "num_key_value_heads": 8, "torch_dtype": "bfloat16"})";
  auto m = FindModel(path);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->layers, 28);
  EXPECT_EQ(m->head_dim, 128);
  EXPECT_EQ(m->source, path);

  std::ofstream(path) << R"({"num_hidden_layers": "eighty", "hidden_size": 8192, "num_attention_heads": 64})";
  auto bad = FindModel(path);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("num_hidden_layers"), std::string::npos) << bad.status().message();
  std::ofstream(path) << "not json";
  EXPECT_FALSE(FindModel(path).ok());
  auto unknown = FindModel("Llama-9-1T");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("Llama-3-70B"), std::string::npos);  // lists the presets
  EXPECT_FALSE(FindModel("/nonexistent/config.json").ok());
}

}  // namespace
}  // namespace fabcheck::kv
