// The metrics the exporter exports only when it talks to a kubelet: the
// dashboard and alert test accepts them, the PodResources test checks that
// each one is exported (so the list cannot go stale).
#pragma once

namespace fabcheck::telemetry::testing {

inline constexpr const char* kPodResourcesMetrics[] = {
    "fabcheck_exporter_pod_resources_up",
    "fabcheck_exporter_pod_resources_allocatable_up",
    "fabcheck_exporter_pod_resources_allocatable_supported",
    "fabcheck_pod_rdma_device_info",
    "fabcheck_k8s_resource_allocatable_devices",
    "fabcheck_k8s_resource_allocated_devices",
    "fabcheck_k8s_resource_unallocated_devices",
    "fabcheck_k8s_resource_held_unallocatable_devices",
    "fabcheck_k8s_device_unallocated_info",
    "fabcheck_k8s_device_held_unallocatable_info",
    "fabcheck_k8s_vf_unreclaimed_info",
};

}  // namespace fabcheck::telemetry::testing
