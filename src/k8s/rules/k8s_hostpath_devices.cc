// k8s.hostpath.devices: /dev, /dev/infiniband or /sys/class/infiniband mounted from the host.
#include "base/strings.h"
#include "k8s/rules/common.h"

namespace fabcheck::k8s::rules {
namespace {

bool Under(const std::string& path, const std::string& prefix) {
  return path == prefix || StartsWith(path, prefix + "/");
}

void Check(const Context& ctx, Reporter& out) {
  for (const auto& pod : ctx.pods) {
    for (const auto& c : pod.containers) {
      for (const auto& m : c.mounts) {
        const YNode* volume = FindVolume(pod, m.name);
        if (!volume) continue;
        std::string path = volume->Get("hostPath").Get("path").Str();
        while (path.size() > 1 && path.back() == '/') path.pop_back();
        if (path.empty()) continue;
        bool dev = path == "/dev" || Under(path, "/dev/infiniband");
        bool sys = path == "/sys" || path == "/sys/class" || Under(path, "/sys/class/infiniband");
        if (!dev && !sys) continue;
        Report r = PodReport(pod, &c, m.line,
                             "mounts host path " + path + " at " + m.mount_path +
                                 (dev ? ": the container reaches RDMA devices outside its device plugin allocation"
                                      : (m.read_only ? " read-only" : " writable: it can change the node's RDMA "
                                                                       "device settings")),
                             {"volume " + m.name + ": hostPath " + path, std::string("readOnly: ") +
                                                                             (m.read_only ? "true" : "false")});
        if (sys && m.read_only) {
          r.level = Level::kInfo;
          r.remedy = "Read-only sysfs is what node exporters need; keep it read-only and in a node agent only.";
        } else if (pod.Gpus() == 0 && !pod.UsesRdma()) {
          // Driver installers, device plugins and MIG managers (GPU Operator,
          // Network Operator) need the host's /dev and /sys: that is their job.
          // The risk the rule is about is a GPU/RDMA workload bypassing its
          // device plugin allocation.
          r.level = Level::kInfo;
          r.message += " (a node agent: the pod requests no GPU or RDMA device)";
          r.remedy = "Expected in a driver, device plugin or node agent; keep it out of GPU/RDMA workloads.";
        }
        out.Add(std::move(r));
      }
    }
  }
}

}  // namespace

const Rule& RuleHostpathDevices() {
  static const Rule kRule{
      {"k8s.hostpath.devices", Level::kWarning, "workload", "Host /dev, /dev/infiniband or /sys/class/infiniband mounted",
       "Mounting /dev/infiniband (or all of /dev) hands the pod every uverbs, umad and rdma_cm device of the node: "
       "the device plugin's accounting, NUMA alignment and tenant separation stop meaning anything, and two jobs "
       "may share an HCA unknowingly. A writable /sys/class/infiniband lets the pod change port settings.",
       "Request the RDMA device through its resource (rdma/..., nvidia.com/...); the device plugin mounts the "
       "right /dev/infiniband entries. Mount sysfs read-only, and only in node agents.",
       "apache/brpc#2298; Mellanox/k8s-rdma-shared-dev-plugin rdma_device_spec.go", {}},
      &Check};
  return kRule;
}

}  // namespace fabcheck::k8s::rules
