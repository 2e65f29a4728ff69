#include "telemetry/pod_resources.h"

#include <grpcpp/grpcpp.h>

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

Result<std::vector<PodDevice>> PodResourcesClient::List() {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + impl_->timeout);
  v1::ListPodResourcesRequest request;
  v1::ListPodResourcesResponse response;
  grpc::Status status = impl_->stub->List(&context, request, &response);
  if (!status.ok()) {
    std::string hint = status.error_code() == grpc::StatusCode::UNAVAILABLE
                           ? " (is the kubelet's pod-resources directory mounted, e.g. hostPath "
                             "/var/lib/kubelet/pod-resources, and is the exporter root?)"
                           : "";
    return UnavailableError("PodResources List on unix://" + impl_->socket_path + " failed: " +
                            status.error_message() + " (gRPC code " + std::to_string(status.error_code()) + ")" +
                            hint);
  }
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
                         resource.device_name()});
        }
      }
    }
  }
  return out;
}

}  // namespace fabcheck::telemetry
