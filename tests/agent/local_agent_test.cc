// What a LocalAgent tells a coordinator about its perf server: `sweep
// --transport auto` runs a pair over verbs only where both agents list it.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "../fixtures/sysroot_writer.h"
#include "agent/local_agent.h"

namespace fabcheck::agent {
namespace {

bool ListsVerbs(const control::AgentInfo& info) {
  return std::find(info.transports.begin(), info.transports.end(), "verbs") != info.transports.end();
}

Result<std::unique_ptr<LocalAgent>> StartOn(const std::filesystem::path& root_dir) {
  auto root = sys::SysRoot::Open(root_dir.string());
  if (!root.ok()) return root.status();
  AgentConfig c;
  c.root = *root;
  c.bind = "127.0.0.1";
  c.control_port = 0;
  c.perf_port = 0;
  c.name = "node";
  return LocalAgent::Start(c);
}

TEST(LocalAgent, ListsVerbsOnlyWhereTheNodeHasAnRdmaDevice) {
  const auto dir = fixtures::FixtureTempDir() / ("agent_transports_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "sys/class/net");
  {
    auto plain = StartOn(dir);
    ASSERT_TRUE(plain.ok()) << plain.status().ToString();
    EXPECT_EQ((*plain)->info().transports, std::vector<std::string>{"tcp"});
  }
  std::filesystem::create_directories(dir / "sys/class/infiniband/mlx5_0");
  {
    auto rdma = StartOn(dir);
    ASSERT_TRUE(rdma.ok()) << rdma.status().ToString();
    EXPECT_TRUE(ListsVerbs((*rdma)->info()));
    EXPECT_EQ((*rdma)->info().transports.front(), "tcp");
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace fabcheck::agent
