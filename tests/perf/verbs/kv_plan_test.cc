// The KV-cache pattern's work-request plan over verbs and the page table both
// transports share (pure logic; the lab runs the loops on soft-RoCE).
#include <gtest/gtest.h>

#include <set>

#include "perf/kv_pattern.h"
#include "perf/verbs/kv_plan.h"
#include "perf/verbs/plan.h"

namespace fabcheck::perf::verbs {
namespace {

KvPattern Pattern(int layers, uint64_t per_layer, uint64_t pool) {
  KvPattern kv;
  kv.layers = layers;
  kv.pages_per_layer = per_layer;
  kv.pool_pages = pool;
  return kv;
}

TEST(KvPlanTest, ImmediateRoundTripsRequestAndLayer) {
  for (uint64_t request : {0ull, 1ull, 77ull, 0x7ffffull, 0x80000ull + 5}) {
    for (uint32_t layer : {0u, 1u, 79u, 4095u}) {
      uint32_t imm = KvNotifyImm(request, layer);
      EXPECT_EQ(KvImmLayer(imm), layer);
      EXPECT_EQ(KvImmRequest(imm), request & 0x7ffff);
      EXPECT_EQ(imm & kKvEndImm, 0u) << "a notification never looks like the end marker";
    }
  }
}

TEST(KvPlanTest, OneRequestIsEveryPageThenANotificationPerLayer) {
  const KvPattern kv = Pattern(3, 4, 8);
  const std::vector<uint32_t> table = {5, 2, 7, 0, 3, 6, 1, 4};
  KvSlotPlanner plan(kv, table, /*source_pages=*/8, /*signal_interval=*/5);
  plan.Start(2);  // request 2: pages 24..35 of the run
  std::vector<KvWr> wrs;
  while (plan.HasNext()) wrs.push_back(plan.Next());
  ASSERT_EQ(wrs.size(), 3u * (4 + 1));
  for (int layer = 0; layer < 3; ++layer) {
    for (int i = 0; i < 4; ++i) {
      const KvWr& w = wrs[layer * 5 + i];
      const uint64_t k = KvPageNumber(2, layer, i, kv);
      EXPECT_EQ(w.kind, KvWr::Kind::kPage);
      EXPECT_EQ(w.layer, static_cast<uint32_t>(layer));
      EXPECT_EQ(w.first_of_layer, i == 0);
      EXPECT_EQ(w.remote_page, table[k % table.size()]) << "the page table's destination";
      EXPECT_EQ(w.local_page, KvSourcePage(k, 8));
    }
    const KvWr& n = wrs[layer * 5 + 4];
    EXPECT_EQ(n.kind, KvWr::Kind::kNotify);
    EXPECT_EQ(n.imm, KvNotifyImm(2, layer));
    EXPECT_TRUE(n.signalled);
  }
  // Signalling: every 5th request of the QP, and every notification.
  for (const KvWr& w : wrs) {
    EXPECT_EQ(w.signalled, w.kind == KvWr::Kind::kNotify || (w.seq + 1) % 5 == 0) << "seq " << w.seq;
  }
  EXPECT_EQ(plan.taken(), 15u);
  KvWr end = plan.End();
  EXPECT_EQ(end.kind, KvWr::Kind::kEnd);
  EXPECT_EQ(end.imm, kKvEndImm);
  EXPECT_TRUE(end.signalled);
  EXPECT_EQ(end.seq, 15u);
}

TEST(KvPlanTest, DestinationsAreScatteredOverThePoolAndReusedPastIt) {
  const KvPattern kv = Pattern(2, 64, 100);
  const std::vector<uint32_t> table = ShuffledPageTable(100);
  KvSlotPlanner plan(kv, table, 16, 100);
  std::set<uint64_t> dest;
  int adjacent = 0;
  uint64_t prev = ~0ull;
  plan.Start(0);
  while (plan.HasNext()) {
    KvWr w = plan.Next();
    if (w.kind != KvWr::Kind::kPage) continue;
    if (prev != ~0ull && w.remote_page == prev + 1) ++adjacent;
    prev = w.remote_page;
    dest.insert(w.remote_page);
    EXPECT_LT(w.remote_page, 100u);
    EXPECT_LT(w.local_page, 16u);
  }
  // 128 pages into a pool of 100: every destination used, some twice.
  EXPECT_EQ(dest.size(), 100u);
  EXPECT_LT(adjacent, 20) << "a shuffled table is not a contiguous run";
}

TEST(KvPlanTest, SignalIntervalNeverLetsTheQueueFillUnsignalled) {
  const int tx_depth = 16;
  const int interval = SignalInterval(100, tx_depth);
  const KvPattern kv = Pattern(4, 50, 64);
  const std::vector<uint32_t> table = ShuffledPageTable(64);
  KvSlotPlanner plan(kv, table, 64, interval);
  uint64_t since_signal = 0;
  for (uint64_t r = 0; r < 3; ++r) {
    plan.Start(r);
    while (plan.HasNext()) {
      since_signal = plan.Next().signalled ? 0 : since_signal + 1;
      ASSERT_LT(since_signal, static_cast<uint64_t>(tx_depth));
    }
  }
}

TEST(KvPlanTest, NotificationsMustArriveInOrderPerQp) {
  KvExpect e;
  EXPECT_FALSE(CheckNotification(e, KvNotifyImm(3, 0), 2));
  EXPECT_FALSE(CheckNotification(e, KvNotifyImm(3, 1), 2));
  // The next request of this slot may be any later id (other slots take ids in between).
  EXPECT_FALSE(CheckNotification(e, KvNotifyImm(9, 0), 2));
  auto skipped = CheckNotification(e, KvNotifyImm(9, 0), 2);
  ASSERT_TRUE(skipped);
  EXPECT_NE(skipped->find("request 9 layer 1 was expected"), std::string::npos) << *skipped;
  KvExpect fresh;
  auto mid = CheckNotification(fresh, KvNotifyImm(1, 1), 2);
  ASSERT_TRUE(mid);
  EXPECT_NE(mid->find("layer 0 was expected"), std::string::npos) << *mid;
  KvExpect e2;
  EXPECT_TRUE(CheckNotification(e2, kKvEndImm, 2));
}

TEST(KvPlanTest, CompletionsCoverEveryRequestUpToThemAcrossTheWrap) {
  EXPECT_EQ(CompletedThrough(0, 99), 100u);
  EXPECT_EQ(CompletedThrough(100, 199), 200u);
  const uint64_t near = (uint64_t{1} << 32) - 10;
  EXPECT_EQ(CompletedThrough(near, 5), (uint64_t{1} << 32) + 6) << "wr_id carries only the low 32 bits";
}

TEST(KvPlanTest, RegionIsMailboxesThenPages) {
  TestParams p;
  p.transport = TransportKind::kVerbs;
  p.test = model::PerfTest::kKv;
  p.sizes = {65536};
  p.streams = 4;
  p.kv = Pattern(80, 512, 4096);
  EXPECT_EQ(KvMailboxBytes(4), 4096u);
  EXPECT_EQ(KvRegionBytes(p, Role::kServer), 4096u + 4096u * 65536u);
  EXPECT_EQ(KvRegionBytes(p, Role::kClient), 4096u + (64u << 20));  // the 64 MiB of source pages
  p.kv.pool_pages = 10;
  EXPECT_EQ(KvSourcePages(p), 10u) << "never more source pages than the pool";
}

TEST(KvPlanTest, VerbsKvWritesPagesAndRefusesOtherOps) {
  TestParams p;
  p.transport = TransportKind::kVerbs;
  p.test = model::PerfTest::kKv;
  p.op = model::PerfOp::kWrite;
  EXPECT_TRUE(ValidateVerbsParams(p).ok());
  p.op = model::PerfOp::kSend;
  Status s = ValidateVerbsParams(p);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("--op write"), std::string::npos) << s.message();
}

TEST(KvPatternTest, PageTableIsAPermutationAndItsParserChecksIt) {
  auto table = ShuffledPageTable(1000);
  std::set<uint32_t> seen(table.begin(), table.end());
  EXPECT_EQ(seen.size(), 1000u);
  EXPECT_EQ(*seen.rbegin(), 999u);
  auto ok = ParsePageTable({{"pages", table}}, 1000, "server x");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(*ok, table);
  auto short_table = ParsePageTable({{"pages", {1, 0}}}, 3, "server x");
  EXPECT_EQ(short_table.status().code(), StatusCode::kDataLoss);
  auto outside = ParsePageTable({{"pages", {0, 1, 7}}}, 3, "server x");
  ASSERT_FALSE(outside.ok());
  EXPECT_NE(outside.status().message().find("destination page 7 outside the pool of 3"), std::string::npos);
  auto garbage = ParsePageTable({{"pages", "lots"}}, 3, "server x");
  EXPECT_EQ(garbage.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(garbage.status().message().find("server x"), std::string::npos);
}

}  // namespace
}  // namespace fabcheck::perf::verbs
