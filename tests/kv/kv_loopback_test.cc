// The kv pattern end to end over loopback, in one process: a perf Server on
// 127.0.0.1 (the same server L3 tests use) and kv::Run against it.
#include <gtest/gtest.h>

#include <thread>

#include "kv/run.h"
#include "kv/sizing.h"
#include "perf/server.h"

namespace fabcheck::kv {
namespace {

using namespace std::chrono_literals;

class KvLoopbackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    perf::ServeOptions o;
    o.root = sys::SysRoot::Live();
    o.bind = "127.0.0.1";
    o.port = 0;
    o.io_timeout = 5s;
    o.connect_timeout = 5s;
    auto s = perf::Server::Start(o);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    server_ = std::move(*s);
    thread_ = std::thread([this] { server_->Run(); });
  }
  void TearDown() override {
    if (server_) {
      server_->Stop();
      thread_.join();
    }
  }
  // 4 layers, 2 KV heads of 64, bf16, 16-token pages: 8 KiB pages, 16 per layer.
  RunOptions Options(uint64_t tokens = 256) {
    model::KvModel m;
    m.name = "tiny";
    m.attention = "gqa";
    m.layers = 4;
    m.kv_heads = 2;
    m.head_dim = 64;
    m.dtype = "bfloat16";
    m.dtype_bytes = 2;
    RunOptions o;
    o.sizing = *ComputeSizing(m, 1, 16, tokens);
    o.client.root = sys::SysRoot::Live();
    o.client.host = "127.0.0.1";
    o.client.port = server_->port();
    o.client.io_timeout = 5s;
    o.client.connect_timeout = 5s;
    o.l3_duration_s = 0.3;
    return o;
  }
  std::unique_ptr<perf::Server> server_;
  std::thread thread_;
};

TEST_F(KvLoopbackTest, RequestsLayersAndTheRatioToL3) {
  RunOptions o = Options();
  o.inflight = 2;
  o.requests = 20;
  o.warmup = 2;
  o.ttft_budget_ms = 60'000;
  auto r = kv::Run(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->error.empty()) << r->error;
  ASSERT_TRUE(r->kv.has_value());
  const auto& k = *r->kv;
  EXPECT_EQ(k.requests, 20u);
  EXPECT_EQ(k.pages, 20u * 4 * 16);
  EXPECT_EQ(k.bytes, k.pages * 8192);
  EXPECT_EQ(k.notifications, 20u * 4);
  EXPECT_EQ(k.request.samples, 20u);
  EXPECT_EQ(k.layer.samples, 80u);
  EXPECT_GT(k.gbytes_per_s, 0);
  EXPECT_GE(k.request.p99_ms, k.request.p50_ms);
  EXPECT_GE(k.request.max_ms, k.request.p99_ms);
  // A layer is part of its request.
  EXPECT_LE(k.layer.p50_ms, k.request.max_ms);
  ASSERT_TRUE(r->l3.has_value());
  EXPECT_TRUE(r->l3->error.empty()) << r->l3->error;
  EXPECT_GT(r->l3->gbytes_per_s, 0);
  ASSERT_TRUE(r->ratio_to_l3.has_value());
  EXPECT_NEAR(*r->ratio_to_l3, k.gbytes_per_s / r->l3->gbytes_per_s, 1e-9);
  EXPECT_EQ(*r->goal_ratio, 0.7);
  ASSERT_TRUE(r->ttft.has_value());
  EXPECT_TRUE(r->ttft->fits);
  EXPECT_EQ(r->client.host, "127.0.0.1");
  EXPECT_EQ(r->server_side.host, "127.0.0.1");
  // Same host, same MTU: no mismatch finding.
  for (const auto& f : r->findings) EXPECT_EQ(f.id.find("mismatch"), std::string::npos) << f.message;
  EXPECT_EQ(server_->tests_failed(), 0u);
}

TEST_F(KvLoopbackTest, DurationModeWithoutL3) {
  RunOptions o = Options(1000);  // 63 pages per layer, the last partly filled
  o.duration_s = 0.3;
  o.l3 = false;
  o.pool_bytes = 8192 * 10;  // fewer destination pages than a request: they are reused
  auto r = kv::Run(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->error.empty()) << r->error;
  EXPECT_FALSE(r->l3.has_value());
  EXPECT_FALSE(r->ratio_to_l3.has_value());
  EXPECT_EQ(r->pool_pages, 63u);  // at least one layer's pages
  ASSERT_TRUE(r->kv.has_value());
  EXPECT_GT(r->kv->requests, 0u);
  EXPECT_EQ(r->kv->pages, r->kv->requests * 4 * 63);
}

TEST_F(KvLoopbackTest, ImpossibleBudgetFails) {
  RunOptions o = Options(4096);
  o.requests = 4;
  o.l3 = false;
  o.ttft_budget_ms = 0.001;
  auto r = kv::Run(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->ttft.has_value());
  EXPECT_FALSE(r->ttft->fits);
  EXPECT_FALSE(r->ok());
  EXPECT_EQ(r->findings.back().id, "kv.ttft-budget");
}

TEST_F(KvLoopbackTest, TheServerRefusesABadPattern) {
  // A client that skips its own checks is refused by the server's.
  perf::ClientOptions c = Options().client;
  c.params.test = model::PerfTest::kKv;
  c.params.op = model::PerfOp::kSend;
  c.params.sizes = {8192};
  c.params.iters = 1;
  c.params.kv = {0, 1, 1};
  EXPECT_FALSE(perf::ValidateTestParams(c.params).ok());
  c.params.kv = {4, 16, perf::kMaxKvPoolPages + 1};
  auto v = perf::ValidateTestParams(c.params);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.message().find("pool"), std::string::npos);
  c.params.kv = {4, 16, 64};
  c.params.bidir = true;
  EXPECT_FALSE(perf::ValidateTestParams(c.params).ok());
}

}  // namespace
}  // namespace fabcheck::kv
