// Fan-in and fan-out (`kv run --agents`) over loopback: several in-process
// agents (control API, perf server and the /v1/kv route, as `fabcheck agent`
// wires them) on 127.0.0.1, transfers over TCP, all at once through one hub.
#include <gtest/gtest.h>

#include "kv/fan.h"
#include "kv/sizing.h"
#include "report/kv_text.h"
#include "agent/local_agent.h"

namespace fabcheck::kv {
namespace {

using namespace std::chrono_literals;

class KvFanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < 3; ++i) {
      agent::AgentConfig c;
      c.bind = "127.0.0.1";
      c.control_port = 0;
      c.perf_port = 0;
      c.name = "member" + std::to_string(i);
      c.root = sys::SysRoot::Live();
      c.kv = AgentKvHandler({std::nullopt, nullptr, sys::SysRoot::Live()});
      auto a = agent::LocalAgent::Start(c);
      ASSERT_TRUE(a.ok()) << a.status().ToString();
      agents_.push_back(std::move(*a));
    }
  }
  FanOptions Options() {
    model::KvModel m;
    m.name = "tiny";
    m.attention = "gqa";
    m.layers = 4;
    m.kv_heads = 2;
    m.head_dim = 64;
    m.dtype = "bfloat16";
    m.dtype_bytes = 2;
    FanOptions o;
    for (const auto& a : agents_) o.members.push_back({"127.0.0.1", a->control_port()});
    o.run.sizing = *ComputeSizing(m, 1, 16, 256);  // 8 KiB pages, 16 per layer
    o.run.requests = 6;
    o.run.warmup = 1;
    o.run.l3_duration_s = 0.3;
    o.run.client.io_timeout = 5s;
    o.run.client.connect_timeout = 5s;
    o.control.connect_timeout = 2s;
    return o;
  }
  std::vector<std::unique_ptr<agent::LocalAgent>> agents_;
};

TEST_F(KvFanTest, FanInTwoPrefillMembersIntoOneDecode) {
  auto r = RunFan(Options());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->mode, "fan-in");
  EXPECT_EQ(r->hub, "member0");
  ASSERT_EQ(r->members.size(), 2u);
  double sum = 0, l3 = 0;
  for (size_t i = 0; i < 2; ++i) {
    const auto& m = r->members[i];
    EXPECT_EQ(m.prefill, "member" + std::to_string(i + 1));
    EXPECT_EQ(m.decode, "member0");
    ASSERT_TRUE(m.error.empty()) << m.error;
    ASSERT_TRUE(m.result && m.result->kv);
    EXPECT_EQ(m.result->kv->requests, 6u);
    EXPECT_EQ(m.result->kv->pages, 6u * 4 * 16);
    // Each transfer went to the hub's perf server.
    EXPECT_EQ(m.result->server, "127.0.0.1:" + std::to_string(agents_[0]->info().perf_port));
    sum += m.result->kv->gbytes_per_s;
    l3 += m.result->l3->gbytes_per_s;
  }
  EXPECT_NEAR(r->gbytes_per_s, sum, 1e-9);
  EXPECT_NEAR(r->l3_gbytes_per_s, l3, 1e-9);
  ASSERT_TRUE(r->ratio_to_l3);
  EXPECT_NEAR(*r->ratio_to_l3, sum / l3, 1e-9);
  EXPECT_TRUE(r->ok());
  const std::string text = report::FormatKvFan(*r);
  EXPECT_NE(text.find("fan-in through member0, 2 transfer(s) at once"), std::string::npos) << text;
  EXPECT_NE(text.find("member2          member0"), std::string::npos) << text;
}

TEST_F(KvFanTest, FanOutOneMemberIntoEveryOther) {
  FanOptions o = Options();
  o.fan_out = true;
  o.run.l3 = false;
  auto r = RunFan(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->mode, "fan-out");
  ASSERT_EQ(r->members.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const auto& m = r->members[i];
    EXPECT_EQ(m.prefill, "member0");
    EXPECT_EQ(m.decode, "member" + std::to_string(i + 1));
    ASSERT_TRUE(m.error.empty()) << m.error;
    ASSERT_TRUE(m.result && m.result->kv);
    EXPECT_EQ(m.result->server, "127.0.0.1:" + std::to_string(agents_[i + 1]->info().perf_port));
  }
  EXPECT_GT(r->gbytes_per_s, 0);
  EXPECT_FALSE(r->ratio_to_l3) << "no L3 runs, no ratio";
}

TEST_F(KvFanTest, AMemberThatIsGoneIsNamed) {
  FanOptions o = Options();
  o.run.l3 = false;
  o.members.push_back({"127.0.0.1", 1});  // a member whose agent does not answer: nothing listens on port 1
  auto r = RunFan(o);
  ASSERT_FALSE(r.ok()) << "an agent that cannot be reached stops the run before anything moves";
  EXPECT_NE(r.status().message().find("127.0.0.1:1"), std::string::npos) << r.status().ToString();
  FanOptions one = Options();
  one.members.resize(1);
  EXPECT_EQ(RunFan(one).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(KvFanTest, TheRouteRefusesBadRequests) {
  auto handler = AgentKvHandler({std::nullopt, nullptr, sys::SysRoot::Live()});
  nlohmann::json run = RunSpecToJson(Options().run);
  EXPECT_EQ(handler({{"run", run}}).status().code(), StatusCode::kInvalidArgument);  // no targets
  EXPECT_EQ(handler({{"run", run}, {"targets", nlohmann::json::array()}}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(handler({{"run", run}, {"targets", {{{"port", 5}}}}}).status().code(), StatusCode::kInvalidArgument);
  nlohmann::json bad = run;
  bad["inflight"] = 0;
  auto s = handler({{"run", bad}, {"targets", {{{"host", "127.0.0.1"}}}}});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("inflight"), std::string::npos);
  bad = run;
  bad["requests"] = "many";
  EXPECT_EQ(handler({{"run", bad}, {"targets", {{{"host", "127.0.0.1"}}}}}).status().code(),
            StatusCode::kInvalidArgument);
  // A target nobody serves: the answer carries its error, named.
  auto r = handler({{"run", run}, {"targets", {{{"host", "127.0.0.1"}, {"port", 1}, {"name", "ghost"}}}}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ((*r)["results"].size(), 1u);
  EXPECT_EQ((*r)["results"][0]["target"], "ghost");
  EXPECT_TRUE((*r)["results"][0].contains("error"));
}

TEST(KvFanSpec, AutoTravelsToTheAgentsAndAnUnknownTransportIsRefused) {
  RunOptions o;
  o.sizing.bytes_per_request = 1 << 20;
  o.requests = 4;
  o.transport_auto = true;
  nlohmann::json j = RunSpecToJson(o);
  EXPECT_EQ(j["transport"], "auto") << "each agent picks for its own node";
  RunOptions back;
  ASSERT_TRUE(RunSpecFromJson(j, back).ok());
  EXPECT_TRUE(back.transport_auto);
  o.transport_auto = false;
  o.transport = perf::TransportKind::kVerbs;
  ASSERT_TRUE(RunSpecFromJson(RunSpecToJson(o), back).ok());
  EXPECT_FALSE(back.transport_auto);
  EXPECT_EQ(back.transport, perf::TransportKind::kVerbs);
  j["transport"] = "udp";
  Status bad = RunSpecFromJson(j, back);
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("auto, tcp and verbs"), std::string::npos) << bad.message();
}

TEST(KvFanSum, RatioOnlyWhenEveryTransferHasItsL3) {
  model::KvFanResult r;
  for (double g : {1.0, 2.0}) {
    model::KvFanMember m;
    m.result = model::KvResult{};
    m.result->kv = model::KvFigures{};
    m.result->kv->gbytes_per_s = g;
    m.result->l3 = model::KvL3{};
    m.result->l3->gbytes_per_s = 2 * g;
    r.members.push_back(m);
  }
  SumFan(r, 65536);
  EXPECT_DOUBLE_EQ(r.gbytes_per_s, 3);
  EXPECT_DOUBLE_EQ(r.l3_gbytes_per_s, 6);
  EXPECT_DOUBLE_EQ(*r.ratio_to_l3, 0.5);
  EXPECT_DOUBLE_EQ(*r.goal_ratio, 0.7);
  r.members[1].result->l3->error = "refused";
  SumFan(r, 1 << 20);
  EXPECT_FALSE(r.ratio_to_l3);
  EXPECT_DOUBLE_EQ(r.gbytes_per_s, 3);
  nlohmann::json j = r;
  EXPECT_EQ(j["schema"], "fabcheck.kv-fan/v1");
  EXPECT_EQ(j.get<model::KvFanResult>().members.size(), 2u);
}

}  // namespace
}  // namespace fabcheck::kv
