// k8s.shm.missing: several GPUs and no memory-backed /dev/shm.
#include "k8s/rules/common.h"

namespace fabcheck::k8s::rules {
namespace {

void Check(const Context& ctx, Reporter& out) {
  long long min_gpus = ctx.ParamInt("k8s.shm.missing", "minGpus", 2);
  for (const auto& pod : ctx.pods) {
    if (pod.host_ipc || pod.Gpus() < min_gpus) continue;
    for (const auto& c : pod.containers) {
      if (c.init || c.gpus == 0) continue;
      const VolumeMount* shm = nullptr;
      for (const auto& m : c.mounts) {
        if (m.mount_path == "/dev/shm" || m.mount_path == "/dev/shm/") shm = &m;
      }
      std::string gpus = "GPUs in the pod: " + std::to_string(pod.Gpus());
      if (!shm) {
        out.Add(PodReport(pod, &c, c.line,
                          "uses " + std::to_string(c.gpus) +
                              " GPU(s) in a multi-GPU pod but mounts nothing at /dev/shm: the container gets the "
                              "runtime's 64 MiB /dev/shm, too small for NCCL's shared-memory transport",
                          {gpus, "volumeMounts: no mountPath /dev/shm", "hostIPC: false"}));
        continue;
      }
      const YNode* volume = FindVolume(pod, shm->name);
      if (!volume) continue;  // schema problem: a mount of a missing volume; kubectl reports it
      const YNode& empty_dir = volume->Get("emptyDir");
      bool memory = empty_dir.Get("medium").Str() == "Memory";
      bool host_shm = volume->Get("hostPath").Get("path").Str() == "/dev/shm";
      if (memory || host_shm) continue;
      out.Add(PodReport(pod, &c, shm->line,
                        "mounts volume '" + shm->name + "' at /dev/shm but it is not an emptyDir with medium: Memory",
                        {gpus, "volume " + shm->name + ": " + (empty_dir.IsMap() ? "emptyDir without medium: Memory"
                                                                                   : "not an emptyDir")}));
    }
  }
}

}  // namespace

const Rule& RuleShmMissing() {
  static const Rule kRule{
      {"k8s.shm.missing", Level::kWarning, "workload", "Multi-GPU pod without a memory-backed /dev/shm",
       "NCCL's SHM transport and its proxy buffers live in /dev/shm. A container gets 64 MiB there by default; "
       "with several GPUs NCCL fails with 'unhandled system error' / 'Error while creating shared memory segment' "
       "or silently picks slower paths.",
       "Add a volume {name: dshm, emptyDir: {medium: Memory, sizeLimit: 16Gi}} and mount it at /dev/shm in the GPU "
       "containers.",
       "NVIDIA/nccl#525, #290, #342",
       {{"minGpus", "int", "2", "GPUs per pod from which /dev/shm must be memory-backed"}}},
      &Check};
  return kRule;
}

}  // namespace fabcheck::k8s::rules
