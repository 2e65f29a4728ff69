#include "telemetry/pod_resources.h"

#include <grpcpp/grpcpp.h>

#include <set>
#include <utility>

#include "podresources_v1.grpc.pb.h"

namespace fabcheck::telemetry {

struct PodResourcesClient::Impl {
  std::string socket_path;
  std::chrono::milliseconds timeout;
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<v1::PodResourcesLister::Stub> stub;
};

PodResourcesClient::PodResourcesClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PodResourcesClient::~PodResourcesClient() = default;

Result<std::unique_ptr<PodResourcesClient>> PodResourcesClient::Connect(const std::string& socket_path,
                                                                        std::chrono::milliseconds timeout) {
  if (socket_path.empty()) return InvalidArgumentError("PodResources: empty kubelet socket path");
  auto impl = std::make_unique<Impl>();
  impl->socket_path = socket_path;
  impl->timeout = timeout;
  grpc::ChannelArguments args;
  // The kubelet answers List with every pod of the node: allow big replies.
  args.SetMaxReceiveMessageSize(16 * 1024 * 1024);
  impl->channel = grpc::CreateCustomChannel("unix://" + socket_path, grpc::InsecureChannelCredentials(), args);
  impl->stub = v1::PodResourcesLister::NewStub(impl->channel);
  return std::unique_ptr<PodResourcesClient>(new PodResourcesClient(std::move(impl)));
}

namespace {

Status CallError(std::string_view call, const std::string& socket_path, const grpc::Status& status) {
  std::string hint = status.error_code() == grpc::StatusCode::UNAVAILABLE
                         ? " (is the kubelet's pod-resources directory mounted, e.g. hostPath "
                           "/var/lib/kubelet/pod-resources, and is the exporter root?)"
                         : "";
  std::string message = "PodResources " + std::string(call) + " on unix://" + socket_path + " failed: " +
                        status.error_message() + " (gRPC code " + std::to_string(status.error_code()) + ")" + hint;
  if (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) return DeadlineExceededError(message);
  return UnavailableError(message);
}

}  // namespace

Result<std::vector<PodDevice>> PodResourcesClient::List() {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + impl_->timeout);
  v1::ListPodResourcesRequest request;
  v1::ListPodResourcesResponse response;
  grpc::Status status = impl_->stub->List(&context, request, &response);
  if (!status.ok()) return CallError("List", impl_->socket_path, status);
  std::vector<PodDevice> out;
  for (const auto& pod : response.pod_resources()) {
    for (const auto& container : pod.containers()) {
      for (const auto& devices : container.devices()) {
        for (const auto& id : devices.device_ids()) {
          out.push_back({pod.namespace_(), pod.name(), container.name(), devices.resource_name(), id});
        }
      }
      for (const auto& claim : container.dynamic_resources()) {
        for (const auto& resource : claim.claim_resources()) {
          if (resource.device_name().empty()) continue;
          out.push_back({pod.namespace_(), pod.name(), container.name(), resource.driver_name(),
                         resource.device_name(), /*dynamic=*/true});
        }
      }
    }
  }
  return out;
}

Result<std::vector<AllocatableDevice>> PodResourcesClient::GetAllocatable() {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + impl_->timeout);
  v1::AllocatableResourcesRequest request;
  v1::AllocatableResourcesResponse response;
  grpc::Status status = impl_->stub->GetAllocatableResources(&context, request, &response);
  if (!status.ok()) {
    // Kubelets before 1.21 lack the method (UNIMPLEMENTED); 1.21-1.22 with the
    // feature gate off answer fmt.Errorf("... GetAllocatableResources disabled"),
    // which gRPC-Go sends as UNKNOWN.
    bool disabled = status.error_code() == grpc::StatusCode::UNKNOWN &&
                    status.error_message().find("disabled") != std::string::npos;
    if (status.error_code() == grpc::StatusCode::UNIMPLEMENTED || disabled) {
      return UnimplementedError("PodResources GetAllocatableResources on unix://" + impl_->socket_path +
                                " is not available: " + status.error_message() +
                                " (kubelet before 1.23, or feature gate KubeletPodResourcesGetAllocatable off)");
    }
    return CallError("GetAllocatableResources", impl_->socket_path, status);
  }
  std::vector<AllocatableDevice> out;
  // One entry per device and NUMA node (kubelet's containerDevicesFromResourceDeviceInstances).
  std::set<std::pair<std::string, std::string>> seen;
  for (const auto& devices : response.devices()) {
    for (const auto& id : devices.device_ids()) {
      if (seen.emplace(devices.resource_name(), id).second) out.push_back({devices.resource_name(), id});
    }
  }
  return out;
}

}  // namespace fabcheck::telemetry
