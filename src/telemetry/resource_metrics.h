// The Kubernetes resource and SR-IOV metrics of a scrape: the kubelet's
// allocatable and allocated devices per resource (resource_accounting.h),
// the devices allocated to no running pod, and each SR-IOV PF with its VFs.
// Inputs are refreshed by the exporter service on the PodResources schedule;
// this only renders them.
#pragma once

#include <string>
#include <vector>

#include "sys/sriov.h"
#include "sys/sysroot.h"
#include "telemetry/metrics.h"
#include "telemetry/pod_resources.h"
#include "telemetry/resource_accounting.h"

namespace fabcheck::telemetry {

// A device ID resolved on this node: the VF or HCA it names, if any.
struct NamedDevice {
  std::string resource;
  std::string device_id;
  std::string pci_address;  // "" unless the ID is a PCI function present here
  std::string rdma_device;  // "" unless the ID is, or its PCI function has, an RDMA device
  const PodDevice* holder = nullptr;  // for held_unallocatable
};

// The unallocated (or held-but-unallocatable) IDs that name a VF or HCA of
// this node. Synthetic IDs (RDMA shared device plugin: "0".."N-1") and GPU
// UUIDs name no such device and stay in the counts only: one series per
// shared-plugin slot would be up to rdmaHcaMax (often 1000) series.
std::vector<NamedDevice> NameDevices(const sys::SysRoot& root, const std::vector<AllocatableDevice>& ids);
// Every held ID (bounded by the pods, so all are kept), resolved where it
// names something here (a removed VF no longer does); `holder` points into `held`.
std::vector<NamedDevice> NameHeldDevices(const sys::SysRoot& root, const std::vector<PodDevice>& held);

struct SriovView {
  std::vector<sys::sriov::PhysicalFunction> pfs;
  const std::vector<PodDevice>* held = nullptr;                // null: List unknown now
  const std::vector<AllocatableDevice>* allocatable = nullptr;  // null: unknown
};

void AddResourceMetrics(const ResourceAccounting& accounting, const std::vector<NamedDevice>& unallocated,
                        const std::vector<NamedDevice>& held_unallocatable, const Labels& node, MetricSet& out);

// A VF counts as unreclaimed when its driver is a kernel network driver, its
// netdev is not in this reader's network namespace (the SR-IOV CNI moved it
// into a pod) and no container of a listed pod holds its PCI address: its pod
// is gone but the VF never came back (a failed CNI DEL, a leaked namespace).
void AddSriovMetrics(const SriovView& view, const Labels& node, MetricSet& out);

}  // namespace fabcheck::telemetry
