// Which pod holds which RDMA device: the kubelet's PodResources API (gRPC
// over a unix socket, `List`), mapped to RDMA device names; and what the
// device plugins offer (`GetAllocatableResources`), for resource_accounting.h.
//
// Device IDs by plugin (rdma-facts §6): the SR-IOV network device plugin
// gives VF PCI addresses (mapped through /sys/bus/pci/devices/<bdf>/infiniband),
// some plugins and DRA drivers give RDMA device names; the RDMA shared device
// plugin gives synthetic IDs "0".."N-1" that identify no NIC, so its resources
// are mapped with an explicit RESOURCE=DEV,DEV table from the user (the same
// selectors the plugin's config holds).
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "sys/sysroot.h"

namespace fabcheck::telemetry {

// One device (or DRA claim device) allocated to one container.
struct PodDevice {
  std::string pod_namespace;
  std::string pod;
  std::string container;
  std::string resource;   // "nvidia.com/sriov_rdma_vf", "rdma/rdma_shared_device_a", DRA driver name
  std::string device_id;  // as the kubelet reports it
  bool dynamic = false;   // a DRA claim's device (not a device-plugin resource)
};

// One device a device plugin offers, from GetAllocatableResources.
struct AllocatableDevice {
  std::string resource;
  std::string device_id;
};

// Connects to the kubelet socket; every call is bounded by `timeout`.
class PodResourcesClient {
 public:
  static Result<std::unique_ptr<PodResourcesClient>> Connect(const std::string& socket_path,
                                                             std::chrono::milliseconds timeout);
  ~PodResourcesClient();
  // All allocated devices of all pods on this node.
  Result<std::vector<PodDevice>> List();
  // The devices the kubelet can allocate (device plugins' healthy devices;
  // a device on two NUMA nodes is listed once). Unimplemented when the
  // kubelet lacks the call (before 1.21) or has it switched off (feature
  // gate KubeletPodResourcesGetAllocatable): the caller goes on without it.
  Result<std::vector<AllocatableDevice>> GetAllocatable();

 private:
  struct Impl;
  explicit PodResourcesClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// RDMA device -> the containers holding it.
struct PodAssignment {
  std::string pod_namespace;
  std::string pod;
  std::string container;
  std::string resource;
  std::string device_id;
};
using PodDeviceMap = std::map<std::string, std::vector<PodAssignment>>;

struct PodMapping {
  PodDeviceMap by_device;
  std::vector<PodDevice> unmapped;  // device IDs that name no RDMA device on this node
};

// "rdma/rdma_shared_device_a=mlx5_0,mlx5_1" entries, parsed.
using SharedResourceTable = std::map<std::string, std::vector<std::string>>;
Result<SharedResourceTable> ParseSharedResources(const std::vector<std::string>& entries);

// "0000:3b:02.6" (domain, bus, device, function, hex): how the SR-IOV device plugin names a VF.
bool LooksLikePciAddress(std::string_view id);

// Maps device IDs to RDMA devices present under `root`.
PodMapping MapPodDevices(const sys::SysRoot& root, const std::vector<PodDevice>& devices,
                         const SharedResourceTable& shared);

}  // namespace fabcheck::telemetry
