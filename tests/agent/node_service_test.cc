// What an agent answers the ladder (POST /v1/node, GET /v1/counters), on a
// real capture of a DGX node, and through the agent's HTTP server.
#include "agent/node_service.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "base/base64.h"
#include "control/client.h"
#include "fabcheck/model/doctor.h"
#include "fabcheck/model/inventory.h"

namespace fabcheck::agent {
namespace {

const std::string kCapture = std::string(FABCHECK_TESTDATA_DIR) + "/captures/dgx-h100-example.tar.gz";

TEST(NodeService, InventoryDoctorFactsAndSnapshotOfACapture) {
  auto service = NodeService::Create({kCapture, "test", false});
  ASSERT_TRUE(service.ok()) << service.status().message();
  auto answer = (*service)->Node({{"snapshot", true}});
  ASSERT_TRUE(answer.ok()) << answer.status().message();
  auto inv = (*answer)["inventory"].get<model::Inventory>();
  EXPECT_FALSE(inv.rdma_devices.empty());
  auto doctor = (*answer)["doctor"].get<model::DoctorReport>();
  EXPECT_FALSE(doctor.findings.empty());
  EXPECT_NE(doctor.sysroot.find("dgx-h100-example"), std::string::npos) << doctor.sysroot;
  EXPECT_TRUE((*answer)["facts"].contains("pfc_priorities"));
  EXPECT_EQ((*answer)["facts"]["nccl_version"], "");  // not asked of a capture
  auto snapshot = Base64Decode((*answer)["snapshot_b64"].get<std::string>());
  ASSERT_TRUE(snapshot);
  ASSERT_GT(snapshot->size(), 1000u);
  EXPECT_EQ(static_cast<unsigned char>((*snapshot)[0]), 0x1f);  // gzip
}

TEST(NodeService, AProfileIsAppliedAndABadOneRefused) {
  auto service = NodeService::Create({kCapture, "test", false});
  ASSERT_TRUE(service.ok());
  auto with = (*service)->Node({{"snapshot", false}, {"profile_name", "x.yaml"},
                                {"profile_yaml", "schema: fabcheck.profile/v1\nnics:\n  count: 64\n"}});
  ASSERT_TRUE(with.ok()) << with.status().message();
  auto doctor = (*with)["doctor"].get<model::DoctorReport>();
  bool count = false;
  for (const auto& f : doctor.findings) count |= f.id == "node.count" && f.severity == model::Severity::kFail;
  EXPECT_TRUE(count) << "nics.count 64 must fail on an 8-NIC node";
  EXPECT_EQ((*with)["snapshot_b64"], "");
  auto bad = (*service)->Node({{"profile_yaml", "nics:\n  cuont: 8\n"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("cuont"), std::string::npos) << bad.status().message();
  EXPECT_FALSE((*service)->Node(nlohmann::json::array()).ok());
}

TEST(NodeService, CountersOfEveryPortAndNetdev) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("fcld-counters-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  auto put = [&](const std::string& rel, const std::string& text) {
    fs::create_directories((dir / rel).parent_path());
    std::ofstream(dir / rel) << text;
  };
  const std::string port = "sys/class/infiniband/mlx5_0/ports/1/";
  put(port + "state", "4: ACTIVE\n");
  put(port + "link_layer", "InfiniBand\n");
  put(port + "counters/port_rcv_errors", "7\n");
  put(port + "counters/symbol_error", "garbage\n");  // unreadable: left out, the rest still read
  put(port + "hw_counters/out_of_sequence", "12\n");
  put("sys/class/net/eth9/statistics/rx_bytes", "123456\n");
  put("sys/class/net/lo/statistics/rx_bytes", "1\n");
  auto root = sys::SysRoot::Open(dir.string());
  ASSERT_TRUE(root.ok()) << root.status().message();
  model::CounterSample s = SampleCounters(*root);
  EXPECT_GT(s.time_unix, 0);
  EXPECT_EQ(s.values["mlx5_0/1"]["port_rcv_errors"], 7u) << nlohmann::json(s).dump();
  EXPECT_EQ(s.values["mlx5_0/1"]["hw_counters/out_of_sequence"], 12u);
  EXPECT_FALSE(s.values["mlx5_0/1"].count("symbol_error"));
  EXPECT_EQ(s.values["eth9"]["rx_bytes"], 123456u);
  EXPECT_FALSE(s.values.count("lo"));
  fs::remove_all(dir);
}

TEST(NodeService, ServedByTheAgent) {
  auto service = NodeService::Create({kCapture, "test", false});
  ASSERT_TRUE(service.ok());
  AgentConfig config;
  config.root = sys::SysRoot::Live();
  config.bind = "127.0.0.1";
  config.control_port = 0;
  NodeService::Wire(*service, config);
  auto agent = LocalAgent::Start(config);
  ASSERT_TRUE(agent.ok()) << agent.status().message();
  control::AgentClient client({"127.0.0.1", (*agent)->control_port()}, {});
  auto node = client.Node({{"snapshot", false}}, std::chrono::seconds(30));
  ASSERT_TRUE(node.ok()) << node.status().message();
  EXPECT_TRUE(node->contains("doctor"));
  auto counters = client.Counters(std::chrono::seconds(10));
  ASSERT_TRUE(counters.ok()) << counters.status().message();
  EXPECT_TRUE((*counters)["values"].is_object());  // the capture holds no counter files
  EXPECT_GT((*counters)["time_unix"].get<double>(), 0);
  auto inv = client.Inventory();
  ASSERT_TRUE(inv.ok());
  EXPECT_FALSE((*inv)["rdma_devices"].empty());

  // An agent without the service says so (501), never a crash.
  AgentConfig bare;
  bare.root = sys::SysRoot::Live();
  bare.bind = "127.0.0.1";
  bare.control_port = 0;
  auto old = LocalAgent::Start(bare);
  ASSERT_TRUE(old.ok());
  auto none = control::AgentClient({"127.0.0.1", (*old)->control_port()}, {}).Node({}, std::chrono::seconds(5));
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace fabcheck::agent
