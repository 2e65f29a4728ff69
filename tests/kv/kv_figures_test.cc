// The kv result math and findings on hand-made measurements.
#include <gtest/gtest.h>

#include "kv/figures.h"
#include "kv/run.h"
#include "kv/sizing.h"

namespace fabcheck::kv {
namespace {

TEST(KvFigures, TimesArePercentilesInMs) {
  std::vector<double> us;
  for (int i = 1; i <= 100; ++i) us.push_back(i * 1000.0);  // 1 .. 100 ms
  auto t = MakeTimes(us);
  EXPECT_EQ(t.samples, 100u);
  EXPECT_DOUBLE_EQ(t.p50_ms, 50);
  EXPECT_DOUBLE_EQ(t.p99_ms, 99);
  EXPECT_DOUBLE_EQ(t.max_ms, 100);
  EXPECT_DOUBLE_EQ(t.avg_ms, 50.5);
  EXPECT_EQ(MakeTimes({}).samples, 0u);
}

TEST(KvFigures, FromRawMeasurement) {
  perf::RawSize raw;
  raw.size = 65536;
  raw.mine.kv_requests = 10;
  raw.mine.tx_messages = 10 * 80 * 4;
  raw.mine.tx_bytes = raw.mine.tx_messages * 65536;
  raw.mine.tx_elapsed_s = 0.5;
  raw.mine.kv_notifications = 800;
  raw.mine.request_us = std::vector<double>(10, 50000);
  raw.mine.layer_us = std::vector<double>(800, 600);
  model::CpuUse cpu{50, 0, 0};
  auto f = MakeFigures(raw, cpu, cpu);
  EXPECT_EQ(f.requests, 10u);
  EXPECT_NEAR(f.gbytes_per_s, 3200 * 65536 / 0.5 / 1e9, 1e-9);
  EXPECT_NEAR(f.gbps, f.gbytes_per_s * 8, 1e-9);
  EXPECT_NEAR(f.pages_per_s, 6400, 1e-9);
  EXPECT_DOUBLE_EQ(f.request.p99_ms, 50);
  EXPECT_DOUBLE_EQ(f.layer.p50_ms, 0.6);
  EXPECT_NEAR(f.cpu_s_per_gb_client, 0.5 / f.gbytes_per_s, 1e-12);
}

TEST(KvFigures, GoalByPageSize) {
  EXPECT_DOUBLE_EQ(GoalRatio(256 * 1024), 0.9);
  EXPECT_DOUBLE_EQ(GoalRatio(1 << 20), 0.9);
  EXPECT_DOUBLE_EQ(GoalRatio(64 * 1024), 0.7);
}

model::PerfEndpoint End(const std::string& host, int mtu) {
  model::PerfEndpoint e;
  e.host = host;
  e.device = "veth0";
  e.mtu = mtu;
  e.registration = "host";
  return e;
}

TEST(KvFigures, MismatchedEndsAreFindings) {
  EXPECT_TRUE(CompareEnds(End("a", 9000), End("b", 9000)).empty());
  auto f = CompareEnds(End("a", 9000), End("b", 1500));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].id, "kv.mtu-mismatch");
  EXPECT_EQ(f[0].severity, model::Severity::kFail);
  EXPECT_NE(f[0].message.find("9000"), std::string::npos);
  auto c = End("a", 4096), s = End("b", 4096);
  c.gid_type = "RoCE v2";
  s.gid_type = "RoCE v1";
  s.registration = "staged";
  auto g = CompareEnds(c, s);
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0].id, "kv.gid-type-mismatch");
  EXPECT_EQ(g[1].id, "kv.registration-mismatch");
  EXPECT_EQ(g[1].severity, model::Severity::kWarn);
}

TEST(KvFigures, VerbsPortMtusDifferWhileThePathMtuAgrees) {
  // verbs: both ends run the path MTU (the smaller port's), so only the ports' own active MTUs tell.
  auto c = End("a", 1024), s = End("b", 1024);
  c.port_mtu = 4096;
  s.port_mtu = 1024;
  auto f = CompareEnds(c, s);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].id, "kv.mtu-mismatch");
  EXPECT_NE(f[0].message.find("4096 here, 1024 on the decode side"), std::string::npos) << f[0].message;
  s.port_mtu = 4096;
  EXPECT_TRUE(CompareEnds(c, s).empty()) << "the same port MTU on both ends, whatever the path says";
}

TEST(KvFigures, ShortfallNamesTheRung) {
  model::KvResult r;
  r.sizing.page_bytes = 65536;
  r.kv = model::KvFigures{};
  r.kv->gbytes_per_s = 1;
  r.l3 = model::KvL3{};
  r.l3->gbytes_per_s = 2;
  r.ratio_to_l3 = 0.5;
  r.goal_ratio = 0.7;
  auto f = Shortfall(r);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->id, "kv.below-l3");
  EXPECT_NE(f->remedy.find("L5"), std::string::npos);
  r.findings = CompareEnds(End("a", 9000), End("b", 1500));
  EXPECT_NE(Shortfall(r)->remedy.find("L2"), std::string::npos);
  r.ratio_to_l3 = 0.8;
  EXPECT_FALSE(Shortfall(r).has_value());
}

TEST(KvFigures, TtftBudget) {
  auto s = ComputeSizing(*FindModel("Llama-3-70B"), 1, 16, 8192);
  ASSERT_TRUE(s.ok());
  auto t = MakeTtft(100, *s, 50);  // half the budget: twice the prompt fits
  EXPECT_TRUE(t.fits);
  EXPECT_EQ(t.max_tokens, 16384u);
  auto over = MakeTtft(10, *s, 40);
  EXPECT_FALSE(over.fits);
  EXPECT_EQ(over.max_tokens, 2048u);  // a quarter, in whole pages
  EXPECT_EQ(TtftFinding(over, *s).severity, model::Severity::kFail);
  EXPECT_EQ(TtftFinding(t, *s).severity, model::Severity::kPass);
}

TEST(KvFigures, PoolPages) {
  auto s = ComputeSizing(*FindModel("Llama-3-70B"), 1, 16, 8192);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(PoolPages(*s, 256ull << 20), 4096u);  // 256 MiB of 64 KiB pages
  EXPECT_EQ(PoolPages(*s, 1), 512u);              // at least a layer's pages
  auto tiny = ComputeSizing(*FindModel("Llama-3-8B"), 1, 16, 16);
  EXPECT_EQ(PoolPages(*tiny, 256ull << 20), 32u);  // no more than a request has
}

TEST(KvFigures, ResultJsonRoundTrips) {
  model::KvResult r;
  r.sizing = *ComputeSizing(*FindModel("DeepSeek-V3"), 1, 64, 1000);
  r.kv = model::KvFigures{};
  r.kv->requests = 3;
  r.ratio_to_l3 = 0.75;
  r.findings = CompareEnds(End("a", 9000), End("b", 1500));
  nlohmann::json j = r;
  EXPECT_EQ(j["schema"], "fabcheck.kv/v1");
  EXPECT_FALSE(j["ok"].get<bool>());
  EXPECT_FALSE(j.contains("l3"));
  auto back = j.get<model::KvResult>();
  EXPECT_EQ(back.sizing.model.latent_dim, 576);
  EXPECT_EQ(back.kv->requests, 3u);
  EXPECT_EQ(*back.ratio_to_l3, 0.75);
  EXPECT_EQ(back.findings.size(), 1u);
}

}  // namespace
}  // namespace fabcheck::kv
