// A failing pair and its ports' counters in the same rung: the pair carries
// both ends' deltas, and one end counting link errors names its NIC or cable.
#include "bundle/correlate.h"

#include <gtest/gtest.h>

namespace fabcheck::bundle {
namespace {

model::PairTest Pair(const std::string& a, const std::string& b, model::RungVerdict verdict) {
  model::PairTest p;
  p.a = a;
  p.b = b;
  p.rail = 1;
  p.device_a = "mlx5_1";
  p.device_b = "mlx5_1";
  p.verdict = verdict;
  p.reason = "147 Gb/s, 41% of the expected 360 Gb/s";
  return p;
}

// The example-8 rung: dgx-02 -> dgx-07 rail 1 fails; dgx-07 mlx5_1 counts
// symbol and receive errors, dgx-02 only the sender's symptoms.
model::RungResult Example() {
  model::RungResult r;
  r.id = "L3";
  r.pairs = {Pair("dgx-02", "dgx-07", model::RungVerdict::kFail), Pair("dgx-01", "dgx-02", model::RungVerdict::kPass)};
  r.counter_deltas = {
      {"dgx-07", "mlx5_1/1", "port_rcv_errors", 12, 1852, 1840, 96},
      {"dgx-07", "mlx5_1/1", "symbol_error", 40, 5252, 5212, 96},
      {"dgx-07", "mlx5_1/1", "hw_counters/out_of_sequence", 0, 311, 311, 96},
      {"dgx-07", "mlx5_0/1", "symbol_error", 0, 3, 3, 96},  // another port: not this pair's
      {"dgx-02", "mlx5_1/1", "hw_counters/local_ack_timeout_err", 0, 27, 27, 96},
      {"dgx-02", "ens36f0np0", "rx_prio3_pause", 1200, 13244, 12044, 96},
  };
  return r;
}

TEST(Correlate, AFailingPairCarriesBothEndsPortCountersAndNamesTheEndWithLinkErrors) {
  model::RungResult r = Example();
  CorrelatePairCounters(r);
  const auto& bad = r.pairs[0];
  ASSERT_EQ(bad.counters.size(), 4u);  // dgx-07 mlx5_1/1 x3, dgx-02 mlx5_1/1 x1; not mlx5_0, not the netdev
  for (const auto& d : bad.counters) EXPECT_EQ(d.object, "mlx5_1/1") << d.member << " " << d.counter;
  ASSERT_TRUE(bad.suspect.has_value());
  EXPECT_EQ(bad.suspect->member, "dgx-07");
  EXPECT_EQ(bad.suspect->port, "mlx5_1/1");
  EXPECT_EQ(bad.suspect->element, "NIC or cable");
  EXPECT_EQ(bad.suspect->confidence, "high");  // symbol errors: the wire itself
  EXPECT_NE(bad.suspect->why.find("symbol_error +5212"), std::string::npos) << bad.suspect->why;
  EXPECT_NE(bad.suspect->why.find("port_rcv_errors +1840"), std::string::npos) << bad.suspect->why;
  // A passing pair carries nothing.
  EXPECT_TRUE(r.pairs[1].counters.empty());
  EXPECT_FALSE(r.pairs[1].suspect.has_value());
  // The finding names the suspect with its counters as evidence.
  model::Finding f = SuspectFinding(r, bad);
  EXPECT_EQ(f.id, "ladder.perf.link-errors");
  EXPECT_EQ(f.severity, model::Severity::kFail);
  EXPECT_EQ(f.object, "dgx-07 mlx5_1/1");
  EXPECT_EQ(f.evidence.size(), 5u);
}

TEST(Correlate, ReceiveErrorsAloneAreMediumAndBothEndsPointAtTheCable) {
  model::RungResult r = Example();
  r.counter_deltas = {{"dgx-07", "mlx5_1/1", "port_rcv_errors", 0, 90, 90, 96}};
  CorrelatePairCounters(r);
  ASSERT_TRUE(r.pairs[0].suspect.has_value());
  EXPECT_EQ(r.pairs[0].suspect->confidence, "medium");

  r.counter_deltas.push_back({"dgx-02", "mlx5_1/1", "symbol_error", 0, 400, 400, 96});
  CorrelatePairCounters(r);
  ASSERT_TRUE(r.pairs[0].suspect.has_value());
  EXPECT_EQ(r.pairs[0].suspect->member, "dgx-02");  // the end with more errors
  EXPECT_NE(r.pairs[0].suspect->element.find("cable"), std::string::npos);
}

TEST(Correlate, NoLinkErrorNoSuspectAndSymptomsAloneNameNobody) {
  model::RungResult r = Example();
  r.counter_deltas = {{"dgx-02", "mlx5_1/1", "hw_counters/local_ack_timeout_err", 0, 27, 27, 96}};
  CorrelatePairCounters(r);
  EXPECT_EQ(r.pairs[0].counters.size(), 1u);
  EXPECT_FALSE(r.pairs[0].suspect.has_value());
}

TEST(Correlate, TheSuspectRoundTripsThroughTheManifestJson) {
  model::RungResult r = Example();
  CorrelatePairCounters(r);
  nlohmann::json j = r.pairs[0];
  model::PairTest back = j.get<model::PairTest>();
  ASSERT_TRUE(back.suspect.has_value());
  EXPECT_EQ(back.suspect->member, "dgx-07");
  EXPECT_EQ(back.counters.size(), 4u);
  // Pairs without them keep the old shape: no "counters", no "suspect".
  nlohmann::json passing = r.pairs[1];
  EXPECT_FALSE(passing.contains("counters"));
  EXPECT_FALSE(passing.contains("suspect"));
}

}  // namespace
}  // namespace fabcheck::bundle
