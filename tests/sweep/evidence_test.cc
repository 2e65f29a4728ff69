// The localiser's running sums: what they keep stays bounded by the fabric
// while the tests grow, and they judge as the tests would.
#include "sweep/evidence.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "sweep/localize.h"

namespace fabcheck::sweep {
namespace {

// n members, `per_leaf` a leaf, one rail, `spines` spines.
fabric::Fabric Leaves(int n, int per_leaf, int spines) {
  fabric::Fabric f;
  f.rails = 1;
  for (int i = 0; i < n; ++i) f.members.push_back({"m" + std::to_string(i), "", {"leaf" + std::to_string(i / per_leaf)}});
  f.spines.emplace_back();
  for (int s = 0; s < spines; ++s) f.spines[0].push_back("spine" + std::to_string(s));
  return f;
}

std::vector<model::SweepMember> Members(int n) {
  std::vector<model::SweepMember> m(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) m[i].index = i, m[i].name = m[i].display = "m" + std::to_string(i);
  return m;
}

TEST(QuantileSketch, ExactWhileSmallWithinATenthOfAPercentAfter) {
  QuantileSketch small;
  for (double x : {5.0, 1.0, 4.0, 2.0, 3.0}) small.Add(x);
  EXPECT_EQ(small.Quantile(0.5), 3.0);
  EXPECT_EQ(small.Quantile(0.9), 5.0);  // rank round(0.9 x 4) = 4
  EXPECT_EQ(QuantileSketch().Quantile(0.9), 0.0);

  std::mt19937_64 rng(3);
  std::lognormal_distribution<double> dist(std::log(380.0), 0.3);
  std::vector<double> all;
  QuantileSketch big;
  for (int i = 0; i < 200000; ++i) {
    const double x = dist(rng);
    all.push_back(x);
    big.Add(x);
  }
  ASSERT_EQ(big.count(), all.size());
  for (double q : {0.1, 0.5, 0.9, 0.99}) {
    std::vector<double> v = all;
    const size_t k = static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
    std::nth_element(v.begin(), v.begin() + static_cast<long>(k), v.end());
    EXPECT_NEAR(big.Quantile(q) / v[k], 1.0, 1e-3) << q;
  }
}

// A lossy spine slows an eighth of the flows of every test between leaves:
// what is kept grows with the paths through it, not with the tests, and
// the spine is still named.
TEST(Evidence, SlowFlowsThroughALossySpineStayBoundedByTheFabric) {
  const int n = 64, per_leaf = 8, spines = 4;
  fabric::Fabric f = Leaves(n, per_leaf, spines);
  fabric::FabricIndex index(f);
  Evidence ev(index);
  std::mt19937_64 rng(5);
  size_t slow_flows = 0;
  for (int round = 1; round <= 200; ++round) {
    for (int a = 0; a < n; ++a) {
      const int b = (a + per_leaf * (1 + round % 7)) % n;
      model::SweepPairResult t;
      t.a = a, t.b = b, t.rail = 0, t.round = round;
      t.path_mtu = 9000;
      double total = 0;
      int mine = 0;
      for (int k = 0; k < 8; ++k) {
        const int spine = static_cast<int>(rng() % spines);
        const float x = spine == 3 ? 4.0f : 12.5f;
        mine += spine == 3;
        t.flow_gbps.push_back(x);
        t.flow_spine.push_back(static_cast<int16_t>(spine));
        total += x;
      }
      t.bw_gbps = total;
      // A flow is judged against its test's second best (8 flows): with fewer
      // than two flows outside spine 3 there is nothing to compare with.
      if (mine < 7) slow_flows += static_cast<size_t>(mine);
      ev.Add(t);
    }
  }
  EXPECT_EQ(ev.tests(), 200u * n);
  const RailSums& rs = ev.rail(0);
  size_t counted = 0;
  for (const SlowFlow& s : rs.slow) counted += static_cast<size_t>(s.count);
  EXPECT_EQ(counted, slow_flows);
  // At most one path per pair of leaves through spine 3, whatever the number of rounds.
  EXPECT_LE(rs.slow.size(), static_cast<size_t>((n / per_leaf) * (n / per_leaf)));
  EXPECT_GT(slow_flows, 10 * rs.slow.size());
  int through = 0;
  for (int l = 0; l < n / per_leaf; ++l) through += rs.flows_across(rs.ids.uplink(l, 3));
  EXPECT_GT(through, 0);
  auto loc = Localize(ev, Members(n));
  ASSERT_EQ(loc.findings.size(), 1u) << loc.findings[0].element;
  EXPECT_EQ(loc.findings[0].kind, "spine");
  EXPECT_EQ(loc.findings[0].element, "spine3");
}

// A busy host slows every flow of its test alike: no flow is slow next to the
// others, so no link is blamed, however low the test's total.
TEST(Evidence, AFlowIsJudgedAgainstTheBestFlowOfItsTest) {
  fabric::Fabric f = Leaves(16, 8, 2);
  fabric::FabricIndex index(f);
  Evidence ev(index);
  model::SweepPairResult busy;
  busy.a = 0, busy.b = 8, busy.round = 1;
  busy.flow_gbps = {3.0f, 3.1f, 2.9f, 3.0f};
  busy.flow_spine = {0, 1, 0, 1};
  busy.bw_gbps = 12;
  ev.Add(busy);
  EXPECT_TRUE(ev.rail(0).slow.empty());
  model::SweepPairResult one = busy;
  one.flow_gbps = {25.0f, 25.0f, 5.0f, 25.0f};
  one.bw_gbps = 80;
  ev.Add(one);
  ASSERT_EQ(ev.rail(0).slow.size(), 1u);
  const SlowFlow& s = ev.rail(0).slow[0];
  EXPECT_EQ(s.count, 1);
  EXPECT_EQ(s.gbps, 5.0f);
  EXPECT_EQ(s.expected, 25.0f);
  EXPECT_TRUE(s.crosses(LinkIds::directed(ev.rail(0).ids.uplink(0, 0), LinkIds::kUp)));
  EXPECT_TRUE(s.crosses(LinkIds::directed(ev.rail(0).ids.uplink(1, 0), LinkIds::kDown)));
  EXPECT_EQ(ev.rail(0).flows_across(ev.rail(0).ids.uplink(0, 1)), 4);
  // A member with itself (loopback) and tests outside the fabric are no evidence.
  model::SweepPairResult self = one;
  self.b = self.a;
  ev.Add(self);
  model::SweepPairResult outside = one;
  outside.b = 99;
  ev.Add(outside);
  EXPECT_EQ(ev.tests(), 2u);
}

// A NIC slow with every partner is named when two of its partners are known
// good, even when it met many more partners than are kept: those with the
// best tests stay.
TEST(Evidence, ASlowNicKeepsItsBestPartnersBeyondTheBound) {
  const int n = 40;
  fabric::Fabric f = Leaves(n, n, 0);
  f.spines.clear();
  fabric::FabricIndex index(f);
  Evidence ev(index);
  // Members 30-39 are fast with each other; then member 0, slow, meets
  // members 1-29 (never measured elsewhere: not known good) before them.
  auto add = [&](int a, int b, double bw, int round) {
    model::SweepPairResult t;
    t.a = a, t.b = b, t.round = round, t.bw_gbps = bw, t.path_mtu = 9000;
    ev.Add(t);
  };
  for (int a = 30; a < n; ++a) {
    for (int b = 30; b < n; ++b) {
      if (a != b) add(a, b, 100, 1);
    }
  }
  for (int b = 1; b < n; ++b) add(0, b, 40, 1 + b);
  const NicSums& x = ev.nic(0, 0);
  EXPECT_EQ(x.tests, n - 1);
  EXPECT_EQ(x.n_partners, NicSums::kPartners);
  for (int k = 0; k < NicSums::kPartners; ++k) EXPECT_GE(x.partners[k], 30) << k;
  auto loc = Localize(ev, Members(n));
  ASSERT_FALSE(loc.findings.empty());
  EXPECT_EQ(loc.findings[0].element, "m0");
  EXPECT_EQ(loc.findings[0].kind, "node");
}

}  // namespace
}  // namespace fabcheck::sweep
