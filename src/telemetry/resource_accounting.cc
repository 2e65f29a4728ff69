#include "telemetry/resource_accounting.h"

#include <map>
#include <utility>

namespace fabcheck::telemetry {

ResourceAccounting AccountResources(const std::vector<AllocatableDevice>* allocatable,
                                    const std::vector<PodDevice>& held, const std::set<std::string>& remembered) {
  ResourceAccounting out;
  out.allocatable_known = allocatable != nullptr;
  std::map<std::string, std::set<std::string>> offered;  // resource -> device IDs
  std::map<std::string, std::set<std::string>> holding;
  if (allocatable) {
    for (const std::string& resource : remembered) offered[resource];
    for (const AllocatableDevice& d : *allocatable) offered[d.resource].insert(d.device_id);
  }
  for (const PodDevice& d : held) {
    if (!d.dynamic) holding[d.resource].insert(d.device_id);
  }

  std::set<std::string> names;
  for (const auto& [resource, ids] : offered) names.insert(resource);
  for (const auto& [resource, ids] : holding) names.insert(resource);
  for (const std::string& resource : names) {
    ResourceCounts counts;
    counts.resource = resource;
    const std::set<std::string>& h = holding[resource];
    counts.allocated = h.size();
    if (allocatable) {
      const std::set<std::string>& a = offered[resource];
      counts.allocatable = a.size();
      size_t unallocated = 0;
      for (const std::string& id : a) {
        if (h.count(id)) continue;
        ++unallocated;
        out.unallocated.push_back({resource, id});
      }
      counts.unallocated = unallocated;
      size_t stale = 0;
      for (const std::string& id : h) stale += a.count(id) ? 0 : 1;
      counts.held_unallocatable = stale;
    }
    out.resources.push_back(std::move(counts));
  }
  if (allocatable) {
    for (const PodDevice& d : held) {
      if (d.dynamic) continue;
      auto it = offered.find(d.resource);
      if (it == offered.end() || !it->second.count(d.device_id)) out.held_unallocatable.push_back(d);
    }
  }
  return out;
}

}  // namespace fabcheck::telemetry
