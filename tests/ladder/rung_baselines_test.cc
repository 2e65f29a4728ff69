// The baseline groups of L3 end to end on loopback: three agents answering
// from the capture of a DGX node, racks from the topology (a and b in r1, c
// in r2), `--transport tcp`. After the rung the ladder measures one pair per
// scope, records the scopes it cannot form with the reason, keeps within
// --baseline-timeout, and writes each direction's perf JSON into the bundle.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "bundle/bundle.h"
#include "agent/node_service.h"
#include "ladder/runner.h"
#include "ladder/rungs.h"

namespace fabcheck::ladder {
namespace {

namespace fs = std::filesystem;

const std::string kDgxCapture = std::string(FABCHECK_TESTDATA_DIR) + "/captures/dgx-h100-example.tar.gz";

class RungBaselines : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : {"node-a", "node-b", "node-c"}) {
      auto service = agent::NodeService::Create(agent::NodeServiceOptions{kDgxCapture, "test", false});
      ASSERT_TRUE(service.ok()) << service.status().message();
      agent::AgentConfig config;
      config.root = sys::SysRoot::Live();
      config.bind = "127.0.0.1";
      config.control_port = 0;
      config.name = name;
      agent::NodeService::Wire(*service, config);
      auto agent = agent::LocalAgent::Start(config);
      ASSERT_TRUE(agent.ok()) << agent.status().message();
      endpoints_.push_back({"127.0.0.1", (*agent)->control_port()});
      agents_.push_back(std::move(*agent));
    }
    out_ = fs::temp_directory_path() / ("fcld-baselines-" + std::to_string(::getpid()));
    fs::remove_all(out_);
  }
  void TearDown() override { fs::remove_all(out_); }

  LadderOptions Options() const {
    LadderOptions o;
    o.rungs = *ParseRungSelection("L3");
    o.transport = "tcp";
    o.bw_size = 64 << 10;
    o.bw_duration_s = 0.2;
    o.lat_duration_s = 0.1;
    o.parallel_pairs = 1;  // one pair at a time: loopback pairs share this machine's cores
    o.fabcheck_version = "test";
    o.places = {{"node-a", {"r1", "leaf-1", {}}}, {"node-b", {"r1", "leaf-1", {}}}, {"node-c", {"r2", "leaf-2", {}}}};
    return o;
  }

  std::vector<std::unique_ptr<agent::LocalAgent>> agents_;
  std::vector<control::HostPort> endpoints_;
  fs::path out_;
};

const model::RungResult& PerfRungOf(const model::LadderManifest& m) {
  for (const auto& r : m.rungs) {
    if (r.id == "L3") return r;
  }
  static const model::RungResult kNone;
  ADD_FAILURE() << "no L3";
  return kNone;
}

const model::BaselineGroup& GroupOf(const model::RungResult& r, const std::string& scope) {
  for (const auto& g : r.baselines) {
    if (g.scope == scope) return g;
  }
  static const model::BaselineGroup kNone;
  ADD_FAILURE() << "no group " << scope;
  return kNone;
}

TEST_F(RungBaselines, OnePairPerScopeIsMeasuredAndTheRestSayWhy) {
  // The groups are formed from who passes L3. Over loopback TCP a pair is
  // judged against the rung's best, and a loaded machine can slow one below
  // a quarter of it: up to three runs until all three members pass.
  Result<model::LadderManifest> manifest = InternalError("not run");
  for (int attempt = 0; attempt < 3; ++attempt) {
    fs::remove_all(out_);
    auto writer = bundle::Writer::Create(out_.string());
    ASSERT_TRUE(writer.ok()) << writer.status().message();
    manifest = RunLadder(endpoints_, Options(), &*writer);
    ASSERT_TRUE(manifest.ok()) << manifest.status().message();
    if (PerfRungOf(*manifest).members_passed.size() == 3) break;
  }
  const auto& l3 = PerfRungOf(*manifest);
  ASSERT_EQ(l3.members_passed.size(), 3u) << l3.reason;
  ASSERT_EQ(l3.baselines.size(), 6u);
  for (const auto& m : manifest->members) EXPECT_FALSE(m.rack.empty()) << m.id;

  // single node: node-a to itself (one data address: its one NIC); over TCP
  // that stays in the kernel, and the group says so.
  const auto& single = GroupOf(l3, "single-node");
  EXPECT_EQ(single.members, (std::vector<std::string>{"node-a"}));
  ASSERT_EQ(single.pairs.size(), 1u);
  EXPECT_EQ(single.pairs[0].a, "node-a");
  EXPECT_EQ(single.pairs[0].b, "node-a");
  EXPECT_NE(single.reason.find("no evidence of the fabric"), std::string::npos) << single.reason;
  // Two nodes (node-a, node-b) is also the same-rack pair: measured once.
  const auto& two = GroupOf(l3, "two-nodes");
  EXPECT_EQ(two.members, (std::vector<std::string>{"node-a", "node-b"}));
  ASSERT_EQ(two.pairs.size(), 2u);  // both directions on rail 0
  EXPECT_EQ(GroupOf(l3, "same-rack").same_as, "two-nodes");
  EXPECT_EQ(GroupOf(l3, "same-rack").verdict, two.verdict);
  EXPECT_EQ(GroupOf(l3, "one-rail").same_as, "two-nodes");
  // Cross rack: node-a (r1) and node-c (r2).
  const auto& cross = GroupOf(l3, "cross-rack");
  EXPECT_EQ(cross.members, (std::vector<std::string>{"node-a", "node-c"}));
  ASSERT_EQ(cross.pairs.size(), 2u);
  // One data address per member: all rails is one rail, recorded as such.
  EXPECT_FALSE(GroupOf(l3, "all-rails").applicable);
  EXPECT_NE(GroupOf(l3, "all-rails").reason.find("one data-plane rail each"), std::string::npos);

  auto b = bundle::Bundle::Open(out_.string());
  ASSERT_TRUE(b.ok()) << b.status().message();
  auto files = b->Files();
  for (const auto* g : {&single, &two, &cross}) {
    EXPECT_GT(g->elapsed_s, 0) << g->scope;
    for (const auto& p : g->pairs) {
      // TCP: measured, never an RDMA baseline.
      EXPECT_EQ(p.transport, "tcp") << g->scope;
      ASSERT_TRUE(p.bw_gbps.has_value()) << g->scope << ": " << p.reason;
      EXPECT_GT(*p.bw_gbps, 0);
      EXPECT_NE(p.verdict, model::RungVerdict::kPass) << g->scope;
      EXPECT_NE(std::find(files.begin(), files.end(), p.evidence_file), files.end()) << p.evidence_file;
    }
    EXPECT_NE(g->verdict, model::RungVerdict::kPass) << g->scope << ": " << g->reason;
  }
  // The manifest on disk carries the groups.
  EXPECT_EQ(b->manifest().rungs.size(), manifest->rungs.size());
  EXPECT_EQ(PerfRungOf(b->manifest()).baselines.size(), 6u);
}

TEST_F(RungBaselines, TheTimeCapStopsTheGroupsLeftAndNoBaselinesLeavesThemOut) {
  auto o = Options();
  o.baseline_timeout_s = 0.001;  // spent by the time a second group could start
  // As above: the groups run only when L3 passed (loopback TCP on a loaded
  // machine may fail a pair), so up to three runs.
  Result<model::LadderManifest> capped = InternalError("not run");
  for (int attempt = 0; attempt < 3; ++attempt) {
    capped = RunLadder(endpoints_, o, nullptr);
    ASSERT_TRUE(capped.ok()) << capped.status().message();
    if (PerfRungOf(*capped).members_passed.size() == 3) break;
  }
  const auto& l3 = PerfRungOf(*capped);
  ASSERT_EQ(l3.members_passed.size(), 3u) << l3.reason;
  for (const char* scope : {"two-nodes", "cross-rack"}) {
    EXPECT_EQ(GroupOf(l3, scope).verdict, model::RungVerdict::kNotRun) << scope;
    EXPECT_NE(GroupOf(l3, scope).reason.find("--baseline-timeout"), std::string::npos) << GroupOf(l3, scope).reason;
  }
  o.baselines = false;
  auto none = RunLadder(endpoints_, o, nullptr);
  ASSERT_TRUE(none.ok()) << none.status().message();
  EXPECT_TRUE(PerfRungOf(*none).baselines.empty());
  EXPECT_FALSE(nlohmann::json(PerfRungOf(*none)).contains("baselines"));
}

}  // namespace
}  // namespace fabcheck::ladder
