// Rung L5 of the go-live report from kv results given beside the bundle
// (`report --kv`): its verdict, the rung its reason points at, the members it
// names, and the report's go/no-go.
#include <gtest/gtest.h>

#include <fstream>

#include "example_fixture.h"
#include "report/golive.h"
#include "report/load.h"

namespace fabcheck::report {
namespace {

using testing::Current;

model::KvResult Result(const std::string& client, const std::string& server, double ratio) {
  model::KvResult r;
  r.client.host = client;
  r.server = server + ":18520";
  r.sizing.page_bytes = 65536;
  r.kv = model::KvFigures{};
  r.kv->gbytes_per_s = ratio * 40;
  r.l3 = model::KvL3{};
  r.l3->gbytes_per_s = 40;
  r.ratio_to_l3 = ratio;
  r.goal_ratio = 0.7;
  if (ratio < 0.7) {
    model::Finding f;
    f.id = "kv.below-l3";
    f.severity = model::Severity::kWarn;
    f.message = "the KV transfer moves less than L3";
    f.remedy = "L3 itself moves more, so look at the transfer pattern (L5)";
    r.findings.push_back(f);
  }
  return r;
}

const model::RungSummary* Rung(const model::GoLiveReport& r, const std::string& id) {
  for (const auto& g : r.rungs) {
    if (g.id == id) return &g;
  }
  return nullptr;
}

TEST(KvRung, AbsentWithoutKvResults) {
  auto r = BuildReport(Current(), {});
  EXPECT_EQ(Rung(r, "L5"), nullptr);
}

TEST(KvRung, AShortfallWarnsAndNamesTheRungToLookAt) {
  BundleEvidence e = Current();
  const auto& a = e.manifest.members[0];
  const auto& b = e.manifest.members[1];
  ASSERT_FALSE(a.data_addresses.empty());
  e.kv.push_back({"kv.json", Result(a.data_addresses[0], b.name, 0.45)});
  model::RungResult rung = KvRung(e);
  EXPECT_EQ(rung.verdict, model::RungVerdict::kWarn);
  EXPECT_NE(rung.reason.find("look at the transfer pattern"), std::string::npos) << rung.reason;
  EXPECT_EQ(rung.members, (std::vector<std::string>{a.id, b.id})) << "hosts matched to members";
  ASSERT_EQ(rung.findings.size(), 1u);
  EXPECT_EQ(rung.findings[0].object.rfind(a.id, 0), 0u) << rung.findings[0].object;
  auto r = BuildReport(e, {});
  const auto* l5 = Rung(r, "L5");
  ASSERT_NE(l5, nullptr);
  EXPECT_EQ(l5->verdict, "warn");
  EXPECT_EQ(r.rungs.back().id, "L5");
  for (const auto& m : r.members) EXPECT_EQ(m.rung_status.size(), r.rungs.size()) << m.id;
  EXPECT_EQ(r.go, Current().manifest.verdict.go) << "a warning does not change go/no-go";
}

TEST(KvRung, AFailedTransferIsNoGoAtL5) {
  BundleEvidence e = Current();
  e.manifest.verdict.go = true;
  e.manifest.verdict.first_failing_rung.clear();
  model::KvResult bad = Result("10.9.9.1", "10.9.9.2", 0.9);
  bad.error = "server 10.9.9.2:18520 during kv page write: Connection reset by peer";
  e.kv.push_back({"kv.json", bad});
  auto r = BuildReport(e, {});
  EXPECT_FALSE(r.go);
  EXPECT_EQ(r.first_failing_rung, "L5");
  const auto* l5 = Rung(r, "L5");
  ASSERT_NE(l5, nullptr);
  EXPECT_EQ(l5->verdict, "fail");
  EXPECT_NE(l5->reason.find("Connection reset"), std::string::npos) << l5->reason;
  EXPECT_NE(l5->reason.find("run L3 on this pair first"), std::string::npos) << l5->reason;
  EXPECT_EQ(r.exit_code, 2);
}

TEST(KvRung, LoadsKvAndFanFilesAndRefusesOthers) {
  const std::string dir = ::testing::TempDir();
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir + name) << text;
    return dir + name;
  };
  BundleEvidence e;
  ASSERT_TRUE(LoadKvResults(write("one.json", nlohmann::json(Result("a", "b", 0.8)).dump()), e).ok());
  model::KvFanResult fan;
  fan.mode = "fan-in";
  model::KvFanMember m1, m2;
  m1.prefill = "p1";
  m1.decode = "d";
  m1.result = Result("p1", "d", 0.9);
  m2.prefill = "p2";
  m2.decode = "d";
  m2.error = "agent p2: unreachable";
  fan.members = {m1, m2};
  ASSERT_TRUE(LoadKvResults(write("fan.json", nlohmann::json(fan).dump()), e).ok());
  ASSERT_EQ(e.kv.size(), 3u);
  EXPECT_EQ(e.kv[2].result.error, "agent p2: unreachable") << "a member without a result is a failed transfer";
  EXPECT_EQ(KvRung(e).verdict, model::RungVerdict::kFail);
  auto other = LoadKvResults(write("perf.json", R"({"schema": "fabcheck.perf/v1"})"), e);
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.message().find("not a kv result"), std::string::npos) << other.message();
  EXPECT_FALSE(LoadKvResults(write("junk.json", "{nope"), e).ok());
  EXPECT_FALSE(LoadKvResults(dir + "missing.json", e).ok());
}

}  // namespace
}  // namespace fabcheck::report

namespace fabcheck::report {
namespace {

TEST(KvRung, APassSaysWhatItJudged) {
  BundleEvidence e;
  e.kv.push_back({"a.json", Result("h1", "h2", 0.95)});
  EXPECT_EQ(KvRung(e).reason, "1 transfer(s) at or above their L3 goal");
  model::KvResult no_l3 = Result("h1", "h3", 0.95);
  no_l3.l3.reset();
  no_l3.ratio_to_l3.reset();
  no_l3.goal_ratio.reset();
  e.kv.push_back({"b.json", no_l3});
  model::RungResult rung = KvRung(e);
  EXPECT_EQ(rung.verdict, model::RungVerdict::kPass);
  EXPECT_NE(rung.reason.find("1 without an L3 figure"), std::string::npos) << rung.reason;
}

}  // namespace
}  // namespace fabcheck::report
