// PodResources: a fake kubelet (the same generated gRPC code) on a unix
// socket; the exporter's client lists it and the mapping finds the devices.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "fabric_fixture.h"
#include "podresources_v1.grpc.pb.h"
#include "telemetry/exporter_service.h"
#include "telemetry/pod_resources.h"

namespace fabcheck::telemetry {
namespace {

namespace fs = std::filesystem;

class FakeKubelet final : public v1::PodResourcesLister::Service {
 public:
  grpc::Status List(grpc::ServerContext*, const v1::ListPodResourcesRequest*,
                    v1::ListPodResourcesResponse* response) override {
    ++calls;
    if (fail) return grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "not allowed");
    // An SR-IOV VF pod (PCI address), a GPU allocation (not RDMA) and two
    // pods of the RDMA shared device plugin (synthetic IDs).
    auto* trainer = response->add_pod_resources();
    trainer->set_name("trainer-0");
    trainer->set_namespace_("ml");
    auto* c = trainer->add_containers();
    c->set_name("main");
    auto* vf = c->add_devices();
    vf->set_resource_name("nvidia.com/sriov_rdma_vf");
    vf->add_device_ids("0000:24:00.0");  // mlx5_1 of the fixture
    auto* gpu = c->add_devices();
    gpu->set_resource_name("nvidia.com/gpu");
    gpu->add_device_ids("GPU-1234");
    for (const char* name : {"shared-a", "shared-b"}) {
      auto* pod = response->add_pod_resources();
      pod->set_name(name);
      pod->set_namespace_("ml");
      auto* sc = pod->add_containers();
      sc->set_name("worker");
      auto* d = sc->add_devices();
      d->set_resource_name("rdma/rdma_shared_device_a");
      d->add_device_ids(name[7] == 'a' ? "0" : "1");
    }
    return grpc::Status::OK;
  }
  bool fail = false;
  int calls = 0;
};

class PodResourcesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("fcexp-pods-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    testing::WriteFabric((dir_ / "root").string(), testing::GpuNode(3));
    socket_ = (dir_ / "kubelet.sock").string();
    grpc::ServerBuilder builder;
    builder.AddListeningPort("unix://" + socket_, grpc::InsecureServerCredentials());
    builder.RegisterService(&kubelet_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
  }
  void TearDown() override {
    if (server_) server_->Shutdown();
    fs::remove_all(dir_);
  }
  fs::path dir_;
  std::string socket_;
  FakeKubelet kubelet_;
  std::unique_ptr<grpc::Server> server_;
};

TEST_F(PodResourcesTest, ListsAndMapsDevices) {
  auto client = PodResourcesClient::Connect(socket_, std::chrono::seconds(5));
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  auto devices = (*client)->List();
  ASSERT_TRUE(devices.ok()) << devices.status().ToString();
  ASSERT_EQ(devices->size(), 4u);

  auto root = sys::SysRoot::Open((dir_ / "root").string());
  ASSERT_TRUE(root.ok());
  auto shared = ParseSharedResources({"rdma/rdma_shared_device_a=mlx5_0,mlx5_2"});
  ASSERT_TRUE(shared.ok());
  PodMapping mapping = MapPodDevices(*root, *devices, *shared);
  ASSERT_EQ(mapping.by_device["mlx5_1"].size(), 1u);
  EXPECT_EQ(mapping.by_device["mlx5_1"][0].pod, "trainer-0");
  EXPECT_EQ(mapping.by_device["mlx5_1"][0].pod_namespace, "ml");
  EXPECT_EQ(mapping.by_device["mlx5_1"][0].container, "main");
  EXPECT_EQ(mapping.by_device["mlx5_0"].size(), 2u);  // both shared pods
  EXPECT_EQ(mapping.by_device["mlx5_2"].size(), 2u);
  ASSERT_EQ(mapping.unmapped.size(), 1u);  // the GPU
  EXPECT_EQ(mapping.unmapped[0].device_id, "GPU-1234");

  EXPECT_FALSE(ParseSharedResources({"no-equals-sign"}).ok());
}

TEST_F(PodResourcesTest, ExporterPutsPodLabelsOnOwnedPorts) {
  auto root = sys::SysRoot::Open((dir_ / "root").string());
  ASSERT_TRUE(root.ok());
  ExporterOptions options;
  options.node_name = "n";
  options.kubelet_socket = socket_;
  options.shared_resources = *ParseSharedResources({"rdma/rdma_shared_device_a=mlx5_0"});
  ExporterService service(
      *root, options,
      [](const sys::SysRoot&) -> Result<model::Inventory> {
        model::Inventory inv;
        model::RdmaDevice dev;
        dev.name = "mlx5_1";
        dev.pci_bdf = "0000:24:00.0";
        inv.rdma_devices.push_back(dev);
        return inv;
      },
      nullptr);
  MetricSet metrics = service.Collect();
  EXPECT_EQ(metrics.FindSample("fabcheck_exporter_pod_resources_up", {})->value, 1);
  // Owned by one container: labels on the port's series.
  const Sample* up = metrics.FindSample(
      "fabcheck_rdma_port_up", {{"device", "mlx5_1"}, {"namespace", "ml"}, {"pod", "trainer-0"}, {"container", "main"}});
  ASSERT_NE(up, nullptr);
  // Shared by two: only the info metric names them.
  EXPECT_EQ(metrics.FindSample("fabcheck_rdma_port_up", {{"device", "mlx5_0"}, {"pod", "shared-a"}}), nullptr);
  EXPECT_NE(metrics.FindSample("fabcheck_pod_rdma_device_info", {{"device", "mlx5_0"}, {"pod", "shared-b"}}), nullptr);

  kubelet_.fail = true;
  ExporterOptions fast = options;
  fast.pod_interval = std::chrono::milliseconds(0);
  ExporterService failing(*root, fast, nullptr, nullptr);
  MetricSet down = failing.Collect();
  EXPECT_EQ(down.FindSample("fabcheck_exporter_pod_resources_up", {})->value, 0);
  // The scrape itself still works.
  EXPECT_NE(down.FindSample("fabcheck_rdma_port_up", {{"device", "mlx5_1"}}), nullptr);
}

TEST(PodResourcesClientTest, AbsentSocketIsUnavailableWithAHint) {
  auto client = PodResourcesClient::Connect("/nonexistent/kubelet.sock", std::chrono::milliseconds(300));
  ASSERT_TRUE(client.ok());
  auto devices = (*client)->List();
  ASSERT_FALSE(devices.ok());
  EXPECT_EQ(devices.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(devices.status().message().find("pod-resources"), std::string::npos);
}

}  // namespace
}  // namespace fabcheck::telemetry
