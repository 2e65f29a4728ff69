// PodResources: a fake kubelet (the same generated gRPC code) on a unix
// socket; the exporter's client lists it and the mapping finds the devices.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include "base/log.h"
#include "fabric_fixture.h"
#include "pod_resources_metrics.h"
#include "podresources_v1.grpc.pb.h"
#include "telemetry/exporter_service.h"
#include "telemetry/pod_resources.h"

namespace fabcheck::telemetry {
namespace {

namespace fs = std::filesystem;

// What one container of a pod holds, for the fake's List.
struct FakeHolding {
  std::string pod_namespace, pod, container, resource;
  std::vector<std::string> ids;
  bool dra = false;  // a DRA claim device (driver name as resource)
};

// The default List: an SR-IOV VF pod (PCI address), a GPU allocation (not
// RDMA) and two pods of the RDMA shared device plugin (synthetic IDs).
std::vector<FakeHolding> DefaultHoldings() {
  return {{"ml", "trainer-0", "main", "nvidia.com/sriov_rdma_vf", {"0000:24:00.0"}},  // mlx5_1 of the fixture
          {"ml", "trainer-0", "main", "nvidia.com/gpu", {"GPU-1234"}},
          {"ml", "shared-a", "worker", "rdma/rdma_shared_device_a", {"0"}},
          {"ml", "shared-b", "worker", "rdma/rdma_shared_device_a", {"1"}}};
}

class FakeKubelet final : public v1::PodResourcesLister::Service {
 public:
  enum class Allocatable { kOk, kUnimplemented, kDisabled, kHang, kFail };

  grpc::Status List(grpc::ServerContext*, const v1::ListPodResourcesRequest*,
                    v1::ListPodResourcesResponse* response) override {
    std::lock_guard lock(mutex);
    ++calls;
    if (fail) return grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "not allowed");
    for (const FakeHolding& h : holdings) {
      v1::PodResources* pod = nullptr;
      for (auto& p : *response->mutable_pod_resources()) {
        if (p.name() == h.pod && p.namespace_() == h.pod_namespace) pod = &p;
      }
      if (!pod) {
        pod = response->add_pod_resources();
        pod->set_name(h.pod);
        pod->set_namespace_(h.pod_namespace);
      }
      v1::ContainerResources* c = nullptr;
      for (auto& existing : *pod->mutable_containers()) {
        if (existing.name() == h.container) c = &existing;
      }
      if (!c) {
        c = pod->add_containers();
        c->set_name(h.container);
      }
      if (h.dra) {
        auto* claim = c->add_dynamic_resources();
        claim->set_claim_name("rdma-claim");
        for (const auto& id : h.ids) {
          auto* r = claim->add_claim_resources();
          r->set_driver_name(h.resource);
          r->set_device_name(id);
        }
        continue;
      }
      auto* d = c->add_devices();
      d->set_resource_name(h.resource);
      for (const auto& id : h.ids) d->add_device_ids(id);
    }
    return grpc::Status::OK;
  }

  grpc::Status GetAllocatableResources(grpc::ServerContext* context, const v1::AllocatableResourcesRequest*,
                                       v1::AllocatableResourcesResponse* response) override {
    Allocatable current;
    {
      std::lock_guard lock(mutex);
      ++allocatable_calls;
      current = allocatable_mode.load();
    }
    switch (current) {
      case Allocatable::kUnimplemented:
        return grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "unknown method GetAllocatableResources");
      case Allocatable::kDisabled:  // kubelet 1.21/1.22 with the feature gate off
        return grpc::Status(grpc::StatusCode::UNKNOWN, "PodResources API GetAllocatableResources disabled");
      case Allocatable::kFail:
        return grpc::Status(grpc::StatusCode::INTERNAL, "device manager not ready");
      case Allocatable::kHang: {
        // A kubelet that never answers: only the client's deadline ends the call.
        auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (!context->IsCancelled() && std::chrono::steady_clock::now() < give_up) {
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        return grpc::Status(grpc::StatusCode::CANCELLED, "cancelled");
      }
      case Allocatable::kOk:
        break;
    }
    std::lock_guard lock(mutex);
    for (const auto& [resource, ids] : allocatable) {
      for (const auto& id : ids) {
        // As the kubelet does: one entry per device and NUMA node.
        for (int numa : {0, 1}) {
          if (numa == 1 && id != ids.front()) break;
          auto* d = response->add_devices();
          d->set_resource_name(resource);
          d->add_device_ids(id);
          d->mutable_topology()->add_nodes()->set_id(numa);
        }
      }
    }
    return grpc::Status::OK;
  }

  std::mutex mutex;
  std::atomic<bool> fail = false;
  int calls = 0;
  int allocatable_calls = 0;
  std::vector<FakeHolding> holdings = DefaultHoldings();
  std::atomic<Allocatable> allocatable_mode = Allocatable::kOk;
  std::map<std::string, std::vector<std::string>> allocatable;
};

class PodResourcesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("fcexp-pods-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fixtures::WriteFabric((dir_ / "root").string(), fixtures::GpuNode(3));
    socket_ = (dir_ / "kubelet.sock").string();
    grpc::ServerBuilder builder;
    builder.AddListeningPort("unix://" + socket_, grpc::InsecureServerCredentials());
    builder.RegisterService(&kubelet_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
  }
  void TearDown() override {
    if (server_) server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
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

// A RoCE node whose mlx5_0 PF (0000:18:00.0) has five VFs, planted:
//   vf0 00.2  netdev + RDMA device mlx5_2, held by trainer-0
//   vf1 00.3  netdev + mlx5_3, held by nobody (free in the pool)
//   vf2 00.4  neither (moved into trainer-1's namespace), held by trainer-1
//   vf3 00.5  no netdev (in some namespace) + mlx5_4, held by nobody: unreclaimed
//   vf4 00.6  vfio-pci (DPDK): no netdev by design, not in the pool
// and mlx5_1's PF (0000:24:00.0) SR-IOV capable with no VF enabled.
fixtures::FabricSpec SriovNode() {
  fixtures::FabricSpec spec = fixtures::GpuNode(2, /*roce=*/true);
  spec.nics[0].sriov_total_vfs = 8;
  spec.nics[0].vfs = {{true, true, "mlx5_core"},
                      {true, true, "mlx5_core"},
                      {false, false, "mlx5_core"},
                      {false, true, "mlx5_core"},
                      {false, false, "vfio-pci"}};
  spec.nics[1].sriov_total_vfs = 8;
  return spec;
}

class ResourceHealthTest : public PodResourcesTest {
 protected:
  void SetUp() override {
    PodResourcesTest::SetUp();
    fixtures::WriteFabric((dir_ / "sriov").string(), SriovNode());
    const std::string vf = "nvidia.com/sriov_rdma_vf";
    kubelet_.holdings = {{"ml", "trainer-0", "main", vf, {"0000:18:00.2"}},
                         {"ml", "trainer-0", "main", "nvidia.com/gpu", {"GPU-1"}},
                         {"ml", "trainer-1", "main", vf, {"0000:18:00.4"}},
                         {"ml", "shared-a", "worker", "rdma/rdma_shared_device_a", {"0"}},
                         // A VF that was removed (sriov_numvfs lowered) under a running pod.
                         {"ml", "gone-0", "main", vf, {"0000:18:01.7"}},
                         {"ml", "dra-0", "main", "rdma.example.com", {"mlx5_1"}, /*dra=*/true}};
    kubelet_.allocatable = {
        {vf, {"0000:18:00.2", "0000:18:00.3", "0000:18:00.4", "0000:18:00.5"}},
        {"rdma/rdma_shared_device_a", {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}},
        {"nvidia.com/gpu", {"GPU-1", "GPU-2"}}};
  }
  ExporterOptions Options() {
    ExporterOptions options;
    options.node_name = "n";
    options.kubelet_socket = socket_;
    options.pod_interval = std::chrono::milliseconds(0);
    options.pod_timeout = std::chrono::milliseconds(300);
    return options;
  }
  sys::SysRoot Root() { return *sys::SysRoot::Open((dir_ / "sriov").string()); }
  static double Value(const MetricSet& m, std::string_view name, const Labels& match) {
    const Sample* s = m.FindSample(name, match);
    EXPECT_NE(s, nullptr) << name;
    return s ? s->value : -1;
  }
  static size_t Count(const MetricSet& m, std::string_view name) {
    const MetricFamily* f = m.Find(name);
    return f ? f->samples.size() : 0;
  }
};

TEST_F(ResourceHealthTest, ClientDeduplicatesTheKubeletsPerNumaEntries) {
  auto client = PodResourcesClient::Connect(socket_, std::chrono::seconds(5));
  ASSERT_TRUE(client.ok());
  auto allocatable = (*client)->GetAllocatable();
  ASSERT_TRUE(allocatable.ok()) << allocatable.status().ToString();
  EXPECT_EQ(allocatable->size(), 16u);  // 4 VFs + 10 shared slots + 2 GPUs, each first ID listed twice
  auto held = (*client)->List();
  ASSERT_TRUE(held.ok());
  size_t dynamic = std::count_if(held->begin(), held->end(), [](const PodDevice& d) { return d.dynamic; });
  EXPECT_EQ(dynamic, 1u);
}

TEST_F(ResourceHealthTest, AllocatableAllocatedAndUnallocatedPerResource) {
  ExporterService service(Root(), Options(), nullptr, nullptr);
  MetricSet m = service.Collect();
  const std::string vf = "nvidia.com/sriov_rdma_vf";
  EXPECT_EQ(Value(m, "fabcheck_exporter_pod_resources_allocatable_supported", {}), 1);
  EXPECT_EQ(Value(m, "fabcheck_exporter_pod_resources_allocatable_up", {}), 1);
  EXPECT_EQ(Value(m, "fabcheck_k8s_resource_allocatable_devices", {{"resource", vf}}), 4);
  EXPECT_EQ(Value(m, "fabcheck_k8s_resource_allocated_devices", {{"resource", vf}}), 3);
  EXPECT_EQ(Value(m, "fabcheck_k8s_resource_unallocated_devices", {{"resource", vf}}), 2);
  EXPECT_EQ(Value(m, "fabcheck_k8s_resource_held_unallocatable_devices", {{"resource", vf}}), 1);
  const std::string shared = "rdma/rdma_shared_device_a";
  EXPECT_EQ(Value(m, "fabcheck_k8s_resource_allocatable_devices", {{"resource", shared}}), 10);
  EXPECT_EQ(Value(m, "fabcheck_k8s_resource_unallocated_devices", {{"resource", shared}}), 9);
  EXPECT_EQ(Value(m, "fabcheck_k8s_resource_allocatable_devices", {{"resource", "nvidia.com/gpu"}}), 2);
  EXPECT_EQ(Value(m, "fabcheck_k8s_resource_unallocated_devices", {{"resource", "nvidia.com/gpu"}}), 1);
  // DRA claims are no device-plugin resource.
  EXPECT_EQ(m.FindSample("fabcheck_k8s_resource_allocated_devices", {{"resource", "rdma.example.com"}}), nullptr);

  // Devices allocated to no running pod: the two free VFs, named; synthetic
  // shared-plugin slots and GPU UUIDs only in the counts.
  ASSERT_EQ(Count(m, "fabcheck_k8s_device_unallocated_info"), 2u);
  EXPECT_NE(m.FindSample("fabcheck_k8s_device_unallocated_info",
                         {{"resource", vf}, {"device_id", "0000:18:00.3"}, {"pci_address", "0000:18:00.3"},
                          {"device", "mlx5_3"}}),
            nullptr);
  EXPECT_NE(m.FindSample("fabcheck_k8s_device_unallocated_info", {{"device_id", "0000:18:00.5"}}), nullptr);
  for (const char* name : testing::kPodResourcesMetrics) {
    if (std::string_view(name) == "fabcheck_k8s_vf_unreclaimed_info" ||
        std::string_view(name) == "fabcheck_pod_rdma_device_info") {
      continue;  // SriovFunctionsAndTheUnreclaimedVf; ExporterPutsPodLabelsOnOwnedPorts
    }
    EXPECT_NE(m.Find(name), nullptr) << name << " is listed in pod_resources_metrics.h but not exported";
  }
  // Held by a pod, no longer offered: named with its holder.
  ASSERT_EQ(Count(m, "fabcheck_k8s_device_held_unallocatable_info"), 1u);
  EXPECT_NE(m.FindSample("fabcheck_k8s_device_held_unallocatable_info",
                         {{"device_id", "0000:18:01.7"}, {"namespace", "ml"}, {"pod", "gone-0"}}),
            nullptr);
}

TEST_F(ResourceHealthTest, SriovFunctionsAndTheUnreclaimedVf) {
  ExporterService service(Root(), Options(), nullptr, nullptr);
  MetricSet m = service.Collect();
  const Labels pf0 = {{"pci_address", "0000:18:00.0"}, {"device", "mlx5_0"}, {"netdev", "ens1f0np0"}};
  EXPECT_EQ(Value(m, "fabcheck_sriov_pf_total_vfs", pf0), 8);
  EXPECT_EQ(Value(m, "fabcheck_sriov_pf_enabled_vfs", pf0), 5);
  EXPECT_EQ(Value(m, "fabcheck_sriov_pf_vfs_with_netdev", pf0), 2);
  EXPECT_EQ(Value(m, "fabcheck_sriov_pf_vfs_with_rdma_device", pf0), 3);
  const Labels pf1 = {{"pci_address", "0000:24:00.0"}};
  EXPECT_EQ(Value(m, "fabcheck_sriov_pf_total_vfs", pf1), 8);
  EXPECT_EQ(Value(m, "fabcheck_sriov_pf_enabled_vfs", pf1), 0);
  EXPECT_EQ(Count(m, "fabcheck_sriov_vf_info"), 5u);
  EXPECT_NE(m.FindSample("fabcheck_sriov_vf_info", {{"pci_address", "0000:18:00.2"}, {"vf", "0"},
                                                    {"driver", "mlx5_core"}, {"netdev", "ens1f0v0"},
                                                    {"device", "mlx5_2"}}),
            nullptr);
  EXPECT_NE(m.FindSample("fabcheck_sriov_vf_info", {{"pci_address", "0000:18:00.6"}, {"driver", "vfio-pci"}}),
            nullptr);
  // Only vf3: its netdev left the host, and no pod holds it. vf2 is away
  // too but trainer-1 holds it; vf4 (vfio-pci) never has a netdev.
  ASSERT_EQ(Count(m, "fabcheck_k8s_vf_unreclaimed_info"), 1u);
  EXPECT_NE(m.FindSample("fabcheck_k8s_vf_unreclaimed_info",
                         {{"pci_address", "0000:18:00.5"}, {"pf_pci_address", "0000:18:00.0"}, {"vf", "3"},
                          {"resource", "nvidia.com/sriov_rdma_vf"}}),
            nullptr);

  // trainer-1 ends but its VF never comes back: now vf2 is unreclaimed too.
  {
    std::lock_guard lock(kubelet_.mutex);
    std::erase_if(kubelet_.holdings, [](const FakeHolding& h) { return h.pod == "trainer-1"; });
  }
  MetricSet after = service.Collect();
  EXPECT_EQ(Count(after, "fabcheck_k8s_vf_unreclaimed_info"), 2u);

  // Without the kubelet, nobody can say who holds a VF: no unreclaimed claims.
  kubelet_.fail = true;
  MetricSet blind = service.Collect();
  EXPECT_EQ(Count(blind, "fabcheck_k8s_vf_unreclaimed_info"), 0u);
  EXPECT_EQ(Count(blind, "fabcheck_k8s_resource_allocatable_devices"), 0u);
  EXPECT_EQ(Value(blind, "fabcheck_exporter_pod_resources_allocatable_up", {}), 0);
  EXPECT_EQ(Value(blind, "fabcheck_sriov_pf_enabled_vfs", pf0), 5);  // sysfs still read
}

TEST_F(ResourceHealthTest, AResourceThatVanishesDropsToZeroAllocatable) {
  ExporterService service(Root(), Options(), nullptr, nullptr);
  const std::string shared = "rdma/rdma_shared_device_a";
  EXPECT_EQ(Value(service.Collect(), "fabcheck_k8s_resource_allocatable_devices", {{"resource", shared}}), 10);
  {
    // The shared device plugin dies: the kubelet stops listing its resource.
    std::lock_guard lock(kubelet_.mutex);
    kubelet_.allocatable.erase(shared);
  }
  MetricSet m = service.Collect();
  EXPECT_EQ(Value(m, "fabcheck_k8s_resource_allocatable_devices", {{"resource", shared}}), 0);
  EXPECT_EQ(Value(m, "fabcheck_k8s_resource_unallocated_devices", {{"resource", shared}}), 0);
  EXPECT_EQ(Value(m, "fabcheck_k8s_resource_held_unallocatable_devices", {{"resource", shared}}), 1);
}

class LogCapture {
 public:
  LogCapture() {
    previous_ = log::SetSink([this](log::Level, std::string_view, std::string_view message) {
      std::lock_guard lock(mutex_);
      lines_.emplace_back(message);
    });
  }
  ~LogCapture() { log::SetSink(previous_); }
  int CountContaining(std::string_view text) {
    std::lock_guard lock(mutex_);
    return static_cast<int>(
        std::count_if(lines_.begin(), lines_.end(), [&](const std::string& l) { return l.find(text) != l.npos; }));
  }

 private:
  std::mutex mutex_;
  std::vector<std::string> lines_;
  log::Sink previous_;
};

TEST_F(ResourceHealthTest, OlderKubeletsWithoutGetAllocatableKeepTheAllocatedCounts) {
  for (auto mode : {FakeKubelet::Allocatable::kUnimplemented, FakeKubelet::Allocatable::kDisabled}) {
    SCOPED_TRACE(static_cast<int>(mode));
    kubelet_.allocatable_mode = mode;
    LogCapture logs;
    ExporterService service(Root(), Options(), nullptr, nullptr);
    MetricSet m;
    for (int i = 0; i < 3; ++i) m = service.Collect();
    EXPECT_EQ(Value(m, "fabcheck_exporter_pod_resources_up", {}), 1);
    EXPECT_EQ(Value(m, "fabcheck_exporter_pod_resources_allocatable_supported", {}), 0);
    EXPECT_EQ(m.FindSample("fabcheck_exporter_pod_resources_allocatable_up", {}), nullptr);
    EXPECT_EQ(Value(m, "fabcheck_k8s_resource_allocated_devices", {{"resource", "nvidia.com/sriov_rdma_vf"}}), 3);
    EXPECT_EQ(Count(m, "fabcheck_k8s_resource_allocatable_devices"), 0u);
    EXPECT_EQ(Count(m, "fabcheck_k8s_device_unallocated_info"), 0u);
    // Said once, however many scrapes.
    EXPECT_EQ(logs.CountContaining("GetAllocatableResources"), 1);
    EXPECT_EQ(logs.CountContaining("feature gate KubeletPodResourcesGetAllocatable"), 1);
  }
  // Upgraded under the running exporter: the counts appear.
  kubelet_.allocatable_mode = FakeKubelet::Allocatable::kUnimplemented;
  ExporterService service(Root(), Options(), nullptr, nullptr);
  EXPECT_EQ(Count(service.Collect(), "fabcheck_k8s_resource_allocatable_devices"), 0u);
  kubelet_.allocatable_mode = FakeKubelet::Allocatable::kOk;
  MetricSet upgraded = service.Collect();
  EXPECT_EQ(Value(upgraded, "fabcheck_exporter_pod_resources_allocatable_supported", {}), 1);
  EXPECT_EQ(Value(upgraded, "fabcheck_k8s_resource_allocatable_devices", {{"resource", "nvidia.com/gpu"}}), 2);
}

TEST_F(ResourceHealthTest, AKubeletThatNeverAnswersCostsOneDeadline) {
  kubelet_.allocatable_mode = FakeKubelet::Allocatable::kHang;
  ExporterService service(Root(), Options(), nullptr, nullptr);
  auto start = std::chrono::steady_clock::now();
  MetricSet m = service.Collect();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 2.0);  // the 300 ms deadline, not the fake's 10 s
  EXPECT_EQ(Value(m, "fabcheck_exporter_pod_resources_up", {}), 1);
  EXPECT_EQ(Value(m, "fabcheck_exporter_pod_resources_allocatable_up", {}), 0);
  EXPECT_EQ(Count(m, "fabcheck_k8s_resource_allocatable_devices"), 0u);
  EXPECT_EQ(Value(m, "fabcheck_k8s_resource_allocated_devices", {{"resource", "nvidia.com/gpu"}}), 1);

  kubelet_.allocatable_mode = FakeKubelet::Allocatable::kFail;
  MetricSet failed = service.Collect();
  EXPECT_EQ(Value(failed, "fabcheck_exporter_pod_resources_allocatable_up", {}), 0);
  kubelet_.allocatable_mode = FakeKubelet::Allocatable::kOk;
  EXPECT_EQ(Value(service.Collect(), "fabcheck_exporter_pod_resources_allocatable_up", {}), 1);
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
