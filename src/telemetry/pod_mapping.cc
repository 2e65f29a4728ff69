// Mapping kubelet device IDs to RDMA devices (no gRPC needed here).
#include <algorithm>
#include <cctype>

#include "base/strings.h"
#include "telemetry/pod_resources.h"
#include "sys/infiniband.h"
#include "sys/pci.h"

namespace fabcheck::telemetry {

bool LooksLikePciAddress(std::string_view id) {
  if (id.size() != 12 || id[4] != ':' || id[7] != ':' || id[10] != '.') return false;
  for (size_t i = 0; i < id.size(); ++i) {
    if (i == 4 || i == 7 || i == 10) continue;
    if (!std::isxdigit(static_cast<unsigned char>(id[i]))) return false;
  }
  return true;
}

Result<SharedResourceTable> ParseSharedResources(const std::vector<std::string>& entries) {
  SharedResourceTable table;
  for (const std::string& entry : entries) {
    size_t eq = entry.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == entry.size()) {
      return InvalidArgumentError("--rdma-shared-resource '" + entry +
                                  "': expected RESOURCE=DEV[,DEV...], e.g. rdma/rdma_shared_device_a=mlx5_0,mlx5_1");
    }
    auto devices = Split(entry.substr(eq + 1), ',', true);
    table[entry.substr(0, eq)] = devices;
  }
  return table;
}

PodMapping MapPodDevices(const sys::SysRoot& root, const std::vector<PodDevice>& devices,
                         const SharedResourceTable& shared) {
  PodMapping mapping;
  auto assign = [&](const PodDevice& d, const std::string& rdma_device) {
    auto& list = mapping.by_device[rdma_device];
    PodAssignment a{d.pod_namespace, d.pod, d.container, d.resource, d.device_id};
    bool duplicate = std::any_of(list.begin(), list.end(), [&](const PodAssignment& b) {
      return b.pod_namespace == a.pod_namespace && b.pod == a.pod && b.container == a.container &&
             b.resource == a.resource;
    });
    if (!duplicate) list.push_back(std::move(a));
  };
  for (const PodDevice& d : devices) {
    auto table = shared.find(d.resource);
    if (table != shared.end()) {
      for (const std::string& rdma_device : table->second) assign(d, rdma_device);
      continue;
    }
    std::vector<std::string> found;
    std::string id = ToLower(d.device_id);
    if (LooksLikePciAddress(id)) {
      auto names = root.ListDir(sys::pci::Function(id).RdmaDevices());
      if (names.ok()) found = *names;
    } else if (!d.device_id.empty() && d.device_id.find('/') == std::string::npos &&
               root.IsDirectory(sys::infiniband::DeviceDir(d.device_id))) {
      found.push_back(d.device_id);
    }
    if (found.empty()) {
      mapping.unmapped.push_back(d);
      continue;
    }
    for (const std::string& rdma_device : found) assign(d, rdma_device);
  }
  return mapping;
}

}  // namespace fabcheck::telemetry
