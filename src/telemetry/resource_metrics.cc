#include "telemetry/resource_metrics.h"

#include <map>
#include <set>

#include "base/strings.h"
#include "sys/infiniband.h"
#include "sys/pci.h"

namespace fabcheck::telemetry {
namespace {

constexpr auto kGauge = MetricType::kGauge;

Labels With(const Labels& base, std::initializer_list<std::pair<std::string, std::string>> extra) {
  Labels out = base;
  for (const auto& item : extra) out.push_back(item);
  return out;
}

void AddDeviceLabels(const NamedDevice& d, Labels& labels) {
  if (!d.pci_address.empty()) labels.emplace_back("pci_address", d.pci_address);
  if (!d.rdma_device.empty()) labels.emplace_back("device", d.rdma_device);
}

// What `device_id` names on this node; `resolved` false when nothing.
NamedDevice Name(const sys::SysRoot& root, const std::string& resource, const std::string& device_id,
                 bool& resolved) {
  NamedDevice d{resource, device_id, "", "", nullptr};
  resolved = false;
  std::string lower = ToLower(device_id);
  if (LooksLikePciAddress(lower)) {
    if (!root.IsDirectory(sys::pci::Function(lower).dir())) return d;
    d.pci_address = lower;
    auto names = root.ListDir(sys::pci::Function(lower).RdmaDevices());
    if (names.ok() && !names->empty()) d.rdma_device = names->front();
    resolved = true;
  } else if (!device_id.empty() && device_id.find('/') == std::string::npos &&
             root.IsDirectory(sys::infiniband::DeviceDir(device_id))) {
    d.rdma_device = device_id;
    resolved = true;
  }
  return d;
}

}  // namespace

std::vector<NamedDevice> NameDevices(const sys::SysRoot& root, const std::vector<AllocatableDevice>& ids) {
  std::vector<NamedDevice> out;
  for (const AllocatableDevice& id : ids) {
    bool resolved = false;
    NamedDevice d = Name(root, id.resource, id.device_id, resolved);
    if (resolved) out.push_back(std::move(d));
  }
  return out;
}

std::vector<NamedDevice> NameHeldDevices(const sys::SysRoot& root, const std::vector<PodDevice>& held) {
  std::vector<NamedDevice> out;
  for (const PodDevice& h : held) {
    bool resolved = false;
    NamedDevice d = Name(root, h.resource, h.device_id, resolved);
    d.holder = &h;
    out.push_back(std::move(d));
  }
  return out;
}

void AddResourceMetrics(const ResourceAccounting& accounting, const std::vector<NamedDevice>& unallocated,
                        const std::vector<NamedDevice>& held_unallocatable, const Labels& node, MetricSet& out) {
  for (const ResourceCounts& r : accounting.resources) {
    Labels labels = With(node, {{"resource", r.resource}});
    out.Add("fabcheck_k8s_resource_allocated_devices",
            "Device IDs of a device-plugin resource held by containers of the pods the kubelet lists "
            "(PodResources List; distinct IDs).",
            kGauge, labels, static_cast<double>(r.allocated));
    if (!r.allocatable) continue;
    out.Add("fabcheck_k8s_resource_allocatable_devices",
            "Devices the kubelet can allocate for a resource (PodResources GetAllocatableResources: the healthy "
            "devices its device plugin registered). 0 for a resource listed earlier that the kubelet no longer "
            "lists (its device plugin is gone or every device unhealthy).",
            kGauge, labels, static_cast<double>(*r.allocatable));
    out.Add("fabcheck_k8s_resource_unallocated_devices",
            "Allocatable devices of a resource that no container of a pod the kubelet lists holds (free for a new "
            "pod).",
            kGauge, labels, static_cast<double>(*r.unallocated));
    out.Add("fabcheck_k8s_resource_held_unallocatable_devices",
            "Devices of a resource a container holds that the kubelet no longer offers as allocatable (the device "
            "went unhealthy or away while in use).",
            kGauge, labels, static_cast<double>(*r.held_unallocatable));
  }
  for (const NamedDevice& d : unallocated) {
    Labels labels = With(node, {{"resource", d.resource}, {"device_id", d.device_id}});
    AddDeviceLabels(d, labels);
    out.Add("fabcheck_k8s_device_unallocated_info",
            "A VF or HCA the kubelet offers as allocatable that no container of a pod it lists holds (only IDs "
            "that name a PCI function or RDMA device of this node; see the _devices counts for the rest).",
            kGauge, std::move(labels), 1);
  }
  for (const NamedDevice& d : held_unallocatable) {
    Labels labels = With(node, {{"resource", d.resource}, {"device_id", d.device_id}});
    AddDeviceLabels(d, labels);
    if (d.holder) {
      labels.emplace_back("namespace", d.holder->pod_namespace);
      labels.emplace_back("pod", d.holder->pod);
      labels.emplace_back("container", d.holder->container);
    }
    out.Add("fabcheck_k8s_device_held_unallocatable_info",
            "A device a container holds that the kubelet no longer offers as allocatable (unhealthy or removed).",
            kGauge, std::move(labels), 1);
  }
}

void AddSriovMetrics(const SriovView& view, const Labels& node, MetricSet& out) {
  std::set<std::string> held;
  if (view.held) {
    for (const PodDevice& d : *view.held) held.insert(ToLower(d.device_id));
  }
  std::map<std::string, std::string> resource_of;  // VF PCI address -> resource offering it
  if (view.allocatable) {
    for (const AllocatableDevice& d : *view.allocatable) resource_of.emplace(ToLower(d.device_id), d.resource);
  }
  for (const sys::sriov::PhysicalFunction& pf : view.pfs) {
    Labels labels = With(node, {{"pci_address", pf.pci_address}});
    if (!pf.rdma_devices.empty()) labels.emplace_back("device", pf.rdma_devices.front());
    if (!pf.netdevs.empty()) labels.emplace_back("netdev", pf.netdevs.front());
    if (pf.total_vfs) {
      out.Add("fabcheck_sriov_pf_total_vfs", "VFs the SR-IOV physical function supports (sriov_totalvfs).", kGauge,
              labels, *pf.total_vfs);
    }
    if (pf.num_vfs) {
      out.Add("fabcheck_sriov_pf_enabled_vfs", "VFs enabled on the physical function now (sriov_numvfs).", kGauge,
              labels, *pf.num_vfs);
    }
    int with_netdev = 0;
    int with_rdma = 0;
    for (const sys::sriov::VirtualFunction& vf : pf.vfs) {
      with_netdev += vf.netdevs.empty() ? 0 : 1;
      with_rdma += vf.rdma_devices.empty() ? 0 : 1;
      Labels v = With(node, {{"pf_pci_address", pf.pci_address},
                             {"pci_address", vf.pci_address},
                             {"vf", std::to_string(vf.index)},
                             {"driver", vf.driver}});
      if (!vf.netdevs.empty()) v.emplace_back("netdev", vf.netdevs.front());
      if (!vf.rdma_devices.empty()) v.emplace_back("device", vf.rdma_devices.front());
      out.Add("fabcheck_sriov_vf_info",
              "An enabled VF with its driver, and its netdev and RDMA device when visible in the exporter's "
              "network namespace (a VF moved into a pod shows neither).",
              kGauge, v, 1);
      bool netdev_away = !vf.driver.empty() && !sys::sriov::IsUserspaceDriver(vf.driver) && vf.netdevs.empty();
      if (view.held && netdev_away && !held.count(vf.pci_address)) {
        Labels u = With(node, {{"pf_pci_address", pf.pci_address},
                               {"pci_address", vf.pci_address},
                               {"vf", std::to_string(vf.index)}});
        if (auto it = resource_of.find(vf.pci_address); it != resource_of.end()) u.emplace_back("resource", it->second);
        out.Add("fabcheck_k8s_vf_unreclaimed_info",
                "A VF whose netdev is not in the host's network namespace (moved into a pod) while no container "
                "of a pod the kubelet lists holds it: not returned after its pod ended.",
                kGauge, std::move(u), 1);
      }
    }
    out.Add("fabcheck_sriov_pf_vfs_with_netdev",
            "Enabled VFs whose netdev is in the exporter's network namespace (the host's: VFs in pods are not).",
            kGauge, labels, with_netdev);
    out.Add("fabcheck_sriov_pf_vfs_with_rdma_device", "Enabled VFs that have an RDMA device visible here.", kGauge,
            labels, with_rdma);
  }
}

}  // namespace fabcheck::telemetry
