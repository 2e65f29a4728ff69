// The baseline diff between the example's healthy run and the current one:
// every planted change is reported once, with its before and after; a bundle
// against itself shows no change.
#include <gtest/gtest.h>

#include <algorithm>

#include "example_fixture.h"
#include "report/golive.h"

namespace fabcheck::report {
namespace {

using testing::Baseline;
using testing::Current;

std::vector<const model::BaselineChange*> Of(const model::BaselineDiff& d, const std::string& kind) {
  std::vector<const model::BaselineChange*> out;
  for (const auto& c : d.changes) {
    if (c.kind == kind) out.push_back(&c);
  }
  return out;
}

TEST(BaselineDiff, FindsEveryPlantedChange) {
  auto d = DiffBundles(Baseline(), Current(), 0.1);
  EXPECT_EQ(d.baseline, "bundle example-8-baseline");
  auto added = Of(d, "member.added");
  ASSERT_EQ(added.size(), 1u);
  EXPECT_EQ(added[0]->object, "dgx-08");
  auto gone = Of(d, "member.gone");
  ASSERT_EQ(gone.size(), 1u);
  EXPECT_EQ(gone[0]->object, "dgx-09");
  auto pcie = Of(d, "pcie.downgrade");
  ASSERT_EQ(pcie.size(), 1u);
  EXPECT_EQ(pcie[0]->object, "dgx-03 mlx5_2");
  EXPECT_EQ(pcie[0]->before, "32 GT/s x16");
  EXPECT_EQ(pcie[0]->after, "16 GT/s x8");
  auto mtu = Of(d, "mtu.change");
  EXPECT_EQ(mtu.size(), 8u);  // every data-plane netdev of dgx-05
  for (const auto* c : mtu) {
    EXPECT_EQ(c->object.rfind("dgx-05 ", 0), 0u) << c->object;
    EXPECT_EQ(c->before, "9000");
    EXPECT_EQ(c->after, "4200");
  }
  auto slower = Of(d, "pair.slower");
  ASSERT_EQ(slower.size(), 1u);
  EXPECT_EQ(slower[0]->object, "dgx-02 -> dgx-07 rail 1");
  EXPECT_EQ(slower[0]->severity, model::Severity::kFail);
  EXPECT_EQ(slower[0]->after, "147 Gb/s");
  auto rising = Of(d, "counter.rising");
  EXPECT_EQ(rising.size(), 5u);
  EXPECT_TRUE(std::any_of(rising.begin(), rising.end(), [](const auto* c) {
    return c->object == "dgx-07 mlx5_1/1 port_rcv_errors" && c->after == "+1840";
  }));
  auto regressed = Of(d, "rung.regressed");
  EXPECT_EQ(regressed.size(), 4u);  // L1L2.node, L1L2.cluster, L3, L4; L2.path still passes
  // Worst first.
  EXPECT_EQ(d.changes.front().severity, model::Severity::kFail);
  EXPECT_EQ(d.changes.back().severity, model::Severity::kInfo);
}

TEST(BaselineDiff, ThresholdAndIdentity) {
  EXPECT_TRUE(DiffBundles(Current(), Current(), 0.1).changes.empty());
  // Only the slow pair lost more than 10%; at 70% nothing counts as slower.
  // (Of points into the diff: each diff is kept while its pointers are read.)
  const model::BaselineDiff at70 = DiffBundles(Baseline(), Current(), 0.7);
  EXPECT_TRUE(Of(at70, "pair.slower").empty());
  // A pair that lost RDMA is reported as such, not as slower.
  BundleEvidence tcp = Current();
  for (auto& r : tcp.manifest.rungs) {
    for (auto& p : r.pairs) {
      if (r.id == "L3" && p.a == "dgx-01" && p.b == "dgx-02" && p.rail == 0) p.rdma = false, p.transport = "tcp";
    }
  }
  const model::BaselineDiff rdma = DiffBundles(Baseline(), tcp, 0.1);
  auto lost = Of(rdma, "pair.rdma-lost");
  ASSERT_EQ(lost.size(), 1u);
  EXPECT_EQ(lost[0]->before, "verbs");
  EXPECT_EQ(lost[0]->after, "tcp");
  // Restored links are news too.
  const model::BaselineDiff back = DiffBundles(Current(), Baseline(), 0.1);
  auto restored = Of(back, "pcie.restored");
  ASSERT_EQ(restored.size(), 1u);
  EXPECT_EQ(restored[0]->severity, model::Severity::kInfo);
}

}  // namespace
}  // namespace fabcheck::report
