// k8s.multinode.no-rdma: a multi-node GPU group with no RDMA resource.
#include <set>

#include "k8s/rules/common.h"

namespace fabcheck::k8s::rules {
namespace {

// A privileged container, or one with the host's /dev or /dev/infiniband
// mounted, reaches the HCAs without a device plugin: it has RDMA (k8s.privileged
// and k8s.hostpath.devices say what that costs), so "over TCP" would be wrong.
bool RdmaWithoutResource(const PodView& pod) {
  for (const auto& c : pod.containers) {
    if (c.privileged) return true;
    for (const auto& m : c.mounts) {
      const YNode* volume = FindVolume(pod, m.name);
      if (!volume) continue;
      std::string path = volume->Get("hostPath").Get("path").Str();
      while (path.size() > 1 && path.back() == '/') path.pop_back();
      if (path == "/dev" || path == "/dev/infiniband") return true;
    }
  }
  return false;
}

void Check(const Context& ctx, Reporter& out) {
  std::set<const Object*> seen;
  for (const auto& pod : ctx.pods) {
    if (!pod.multi_node_group || pod.Gpus() == 0 || pod.host_network || seen.count(pod.owner)) continue;
    bool rdma = false;
    for (const auto& other : ctx.pods) {
      if (other.owner == pod.owner && (other.UsesRdma() || RdmaWithoutResource(other))) rdma = true;
    }
    seen.insert(pod.owner);
    if (rdma) continue;
    out.Add(PodReport(pod, nullptr, pod.line,
                      "runs " + std::to_string(pod.group_size) + " pods with " + std::to_string(pod.Gpus()) +
                          " GPU(s) each as one job but requests no RDMA resource: inter-node collectives go over TCP "
                          "on the pod network",
                      {"group size: " + std::to_string(pod.group_size), "GPUs per pod: " + std::to_string(pod.Gpus()),
                       "no RDMA resource in any pod template of the job"}));
  }
}

}  // namespace

const Rule& RuleMultinodeNoRdma() {
  static const Rule kRule{
      {"k8s.multinode.no-rdma", Level::kInfo, "workload", "Multi-node GPU job without an RDMA resource",
       "A multi-node training or inference group (MPIJob, PyTorchJob, JobSet, LeaderWorkerSet, a parallel Job) "
       "whose pods request GPUs but no RDMA device runs its collectives over TCP on the pod network, typically "
       "10-50x slower than the fabric. It may be intended (small job, no fabric); often it is an omission.",
       "Request the RDMA resource (and IPC_LOCK, a networks annotation) in the worker template, or suppress with "
       "fabcheck.io/ignore-k8s.multinode.no-rdma: \"<why TCP is fine>\".",
       "kubeflow/trainer#2870; vllm-project/vllm#4865", {}},
      &Check};
  return kRule;
}

}  // namespace fabcheck::k8s::rules
