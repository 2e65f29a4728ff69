// Rung L4 end to end on loopback: two agents answering from the capture of
// an 8-GPU DGX node, the ladder lays out 16 ranks over them, both agents
// start their 8 ranks of the real `fabcheck coll` at once, and what the
// ranks said comes back into the rung and the bundle. Here (no GPU, no
// CUDA driver) every rank stops with exit 3, so L4 is "not run" with the
// ranks' own reason, never a pass.
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

const std::string kCapture = std::string(FABCHECK_TESTDATA_DIR) + "/captures/dgx-h100-example.tar.gz";

TEST(RungColl, RanksOfEveryMemberStartTogetherAndTheirWordsComeBack) {
  std::vector<std::unique_ptr<agent::LocalAgent>> agents;
  std::vector<control::HostPort> endpoints;
  for (const char* name : {"gpu-a", "gpu-b"}) {
    agent::NodeServiceOptions o{kCapture, "test", false};
    o.coll_executable = FABCHECK_BINARY;
    auto service = agent::NodeService::Create(o);
    ASSERT_TRUE(service.ok()) << service.status().message();
    agent::AgentConfig config;
    config.root = sys::SysRoot::Live();
    config.bind = "127.0.0.1";
    config.control_port = 0;
    config.name = name;
    agent::NodeService::Wire(*service, config);
    auto agent = agent::LocalAgent::Start(config);
    ASSERT_TRUE(agent.ok()) << agent.status().message();
    endpoints.push_back({"127.0.0.1", (*agent)->control_port()});
    agents.push_back(std::move(*agent));
  }
  const fs::path out = fs::temp_directory_path() / ("fcld-l4-" + std::to_string(::getpid()));
  fs::remove_all(out);
  auto writer = bundle::Writer::Create(out.string());
  ASSERT_TRUE(writer.ok()) << writer.status().message();

  LadderOptions o;
  auto rungs = ParseRungSelection("L4");
  ASSERT_TRUE(rungs.ok());
  o.rungs = *rungs;
  o.coll_sizes = "8:64";
  o.coll_iters = 1;
  o.coll_warmup = 0;
  o.coll_timeout_s = 60;
  o.coll_port = 0;  // replaced below: a free port for rank 0's rendezvous
  {
    // Any free port: bind, read it, release.
    auto probe = agent::LocalAgent::Start({.bind = "127.0.0.1", .control_port = 0, .root = sys::SysRoot::Live()});
    ASSERT_TRUE(probe.ok());
    o.coll_port = (*probe)->control_port();
  }
  o.fabcheck_version = "test";
  o.places = {{"gpu-a", {"r1", "leaf-1", {}}}, {"gpu-b", {"r2", "leaf-2", {}}}};
  auto manifest = RunLadder(endpoints, o, &*writer);
  ASSERT_TRUE(manifest.ok()) << manifest.status().message();

  const model::RungResult* l4 = nullptr;
  for (const auto& r : manifest->rungs) {
    if (r.id == "L4") l4 = &r;
  }
  ASSERT_NE(l4, nullptr);
  EXPECT_EQ(l4->parameters["world"], 16) << l4->parameters.dump();
  EXPECT_EQ(l4->parameters["coordinator"], "127.0.0.1:" + std::to_string(o.coll_port));
  EXPECT_NE(l4->verdict, model::RungVerdict::kPass) << l4->reason;
  if (::access("/dev/nvidiactl", F_OK) != 0) {
    EXPECT_EQ(l4->verdict, model::RungVerdict::kNotRun) << l4->reason;
    EXPECT_NE(l4->reason.find("exit 3: fabcheck coll: "), std::string::npos) << l4->reason;
  }
  // The baseline groups are all recorded: the ones this pair cannot form
  // (one member per rack) with that reason; without a GPU the rest cannot
  // run either, and say so with the rung's reason.
  ASSERT_EQ(l4->baselines.size(), 8u);
  for (const auto& g : l4->baselines) {
    EXPECT_NE(g.verdict, model::RungVerdict::kPass) << g.scope;
    if (g.scope == "same-rack") {
      EXPECT_FALSE(g.applicable);
      EXPECT_EQ(g.reason, "no rack holds two members that passed L4: r1 (gpu-a); r2 (gpu-b)");
    } else if (::access("/dev/nvidiactl", F_OK) != 0 && g.applicable) {
      EXPECT_NE(g.reason.find("L4 did not run: "), std::string::npos) << g.scope << ": " << g.reason;
    }
  }
  // Both members' ranks ran: 8 exit codes each, in the bundle.
  auto b = bundle::Bundle::Open(out.string());
  ASSERT_TRUE(b.ok()) << b.status().message();
  int members_with_ranks = 0;
  for (const auto& m : manifest->members) {
    auto ranks = b->ReadJson(bundle::MemberDir(m.id) + "/L4/ranks.json");
    ASSERT_TRUE(ranks.ok()) << m.id << ": " << ranks.status().message();
    EXPECT_EQ((*ranks)["exit_codes"].size(), 8u) << ranks->dump();
    EXPECT_FALSE((*ranks)["errors"].empty());
    ++members_with_ranks;
  }
  EXPECT_EQ(members_with_ranks, 2);
  fs::remove_all(out);
}

}  // namespace
}  // namespace fabcheck::ladder
