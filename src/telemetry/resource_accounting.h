// Kubernetes resource health from the kubelet's two PodResources calls:
// what the device plugins offer (GetAllocatableResources) against what the
// containers of the listed pods hold (List), per resource and per device ID.
//
// Per resource R, with A = the device IDs allocatable for R and H = the
// device IDs of R that some container of a pod in List holds:
//   allocatable  = |A|          healthy devices the plugin registered
//   allocated    = |H|          held by a container (whether A has it or not)
//   unallocated  = |A \ H|      allocatable and held by no container of a
//                               pod the kubelet lists: free for a new pod
//   held_unallocatable = |H \ A|  a container holds it but the kubelet no
//                               longer offers it: the device went unhealthy
//                               or away (plugin restarted, VF removed)
// The kubelet's List has the pods it admitted and has not yet removed; their
// devices return to A \ H when the pod is gone. DRA claims are not
// device-plugin resources (GetAllocatableResources has none) and are left out.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "telemetry/pod_resources.h"

namespace fabcheck::telemetry {

struct ResourceCounts {
  std::string resource;
  std::optional<size_t> allocatable;         // nullopt: the kubelet cannot say (no GetAllocatableResources)
  size_t allocated = 0;
  std::optional<size_t> unallocated;         // nullopt with allocatable
  std::optional<size_t> held_unallocatable;  // nullopt with allocatable
};

struct ResourceAccounting {
  bool allocatable_known = false;
  std::vector<ResourceCounts> resources;          // sorted by name
  std::vector<AllocatableDevice> unallocated;     // A \ H, every resource
  std::vector<PodDevice> held_unallocatable;      // H \ A, with the holders
};

// `allocatable` null: the kubelet lacks GetAllocatableResources (only
// `allocated` is known). `remembered`: resources seen allocatable before;
// one the kubelet no longer lists at all counts as allocatable 0 (the
// kubelet drops a resource whose plugin is gone, rather than listing it empty).
ResourceAccounting AccountResources(const std::vector<AllocatableDevice>* allocatable,
                                    const std::vector<PodDevice>& held, const std::set<std::string>& remembered);

}  // namespace fabcheck::telemetry
