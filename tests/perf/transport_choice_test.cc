// --transport auto, the default of perf run and kv run: verbs where the node
// has an RDMA device, TCP otherwise with the reason to print.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

#include "perf/transport.h"

namespace fabcheck::perf {
namespace {

TEST(ChooseTransport, AutoIsVerbsOnlyWithAnRdmaDevice) {
  const auto dir = std::filesystem::temp_directory_path() / ("transport_choice_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "sys/class/net");
  auto root = sys::SysRoot::Open(dir.string());
  ASSERT_TRUE(root.ok()) << root.status().ToString();

  auto none = ChooseTransport("auto", *root);
  ASSERT_TRUE(none.has_value());
  EXPECT_EQ(none->kind, TransportKind::kTcp);
  EXPECT_NE(none->why_tcp.find("no RDMA device"), std::string::npos) << none->why_tcp;
  EXPECT_NE(none->why_tcp.find("/sys/class/infiniband"), std::string::npos) << none->why_tcp;

  std::filesystem::create_directories(dir / "sys/class/infiniband/mlx5_0");
  auto rdma = ChooseTransport("auto", *root);
  ASSERT_TRUE(rdma.has_value());
  EXPECT_EQ(rdma->kind, TransportKind::kVerbs);
  EXPECT_TRUE(rdma->why_tcp.empty());

  // Asked for by name: taken as asked, whatever the node has.
  EXPECT_EQ(ChooseTransport("tcp", *root)->kind, TransportKind::kTcp);
  EXPECT_TRUE(ChooseTransport("tcp", *root)->why_tcp.empty());
  EXPECT_EQ(ChooseTransport("rdma", *root)->kind, TransportKind::kVerbs);
  EXPECT_FALSE(ChooseTransport("udp", *root).has_value());
  EXPECT_FALSE(ChooseTransport("", *root).has_value());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace fabcheck::perf
