// PodResources without gRPC: the client reports itself unavailable; the
// mapping helpers still work (they need no gRPC).
#include "telemetry/pod_resources.h"

#include <algorithm>

#include "base/strings.h"

namespace fabcheck::telemetry {

struct PodResourcesClient::Impl {};
PodResourcesClient::PodResourcesClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PodResourcesClient::~PodResourcesClient() = default;

Result<std::unique_ptr<PodResourcesClient>> PodResourcesClient::Connect(const std::string&,
                                                                        std::chrono::milliseconds) {
  return UnavailableError(
      "PodResources: this fabcheck was built without gRPC (install libgrpc++-dev protobuf-compiler-grpc and "
      "rebuild) so it cannot label metrics with pods");
}

Result<std::vector<PodDevice>> PodResourcesClient::List() { return UnavailableError("PodResources: built without gRPC"); }
Result<std::vector<AllocatableDevice>> PodResourcesClient::GetAllocatable() {
  return UnavailableError("PodResources: built without gRPC");
}

}  // namespace fabcheck::telemetry
