// k8s.rdma.no-ipc-lock: an RDMA resource without CAP_IPC_LOCK.
#include "base/strings.h"
#include "k8s/rules/common.h"

namespace fabcheck::k8s::rules {
namespace {

void Check(const Context& ctx, Reporter& out) {
  // Platforms that start containers with memlock unlimited make IPC_LOCK unnecessary.
  if (ctx.profile.memlock_raised) return;
  for (const auto& pod : ctx.pods) {
    for (const auto& c : pod.containers) {
      if (c.rdma_resources.empty() || c.ipc_lock || c.privileged) continue;
      bool inferred = true;
      for (const auto& r : c.rdma_resources) inferred = inferred && ctx.index.RdmaIsInferred(r);
      Report r = PodReport(pod, &c, c.caps_line,
                           "requests " + Join(c.rdma_resources, ", ") +
                               (inferred ? ", probably an RDMA-capable VF," : "") +
                               " but does not add the IPC_LOCK capability: memory registration is limited by the "
                               "container's small memlock limit",
                           {"resources: " + DescribeResources(c), "securityContext.capabilities.add: " + DescribeCaps(c),
                            "profile " + ctx.profile.name + ": memlock is not raised by the platform"});
      if (inferred) {
        // Without the node policy or device plugin config, a VF's RDMA is a guess: warn, do not fail.
        r.level = Level::kWarning;
        r.evidence.push_back("RDMA inferred from the SR-IOV/host-device network that uses the resource; lint its "
                             "SriovNetworkNodePolicy or device plugin config too (isRdma) to be sure");
      }
      out.Add(std::move(r));
    }
  }
}

}  // namespace

const Rule& RuleRdmaNoIpcLock() {
  static const Rule kRule{
      {"k8s.rdma.no-ipc-lock", Level::kError, "workload", "RDMA resource requested without the IPC_LOCK capability",
       "RDMA memory registration (ibv_reg_mr) pins pages and is bounded by RLIMIT_MEMLOCK unless the process has "
       "CAP_IPC_LOCK. Container runtimes default memlock to a few KiB or MiB, so registration fails with ENOMEM or "
       "EPERM; NCCL then falls back to sockets or aborts, and perftest cannot allocate its buffers.",
       "Add securityContext.capabilities.add: [\"IPC_LOCK\"] to the container (every Network Operator and RDMA "
       "shared device plugin example does), and run it in a namespace whose Pod Security level allows it "
       "(privileged). On a platform that raises memlock for you, lint with its --platform.",
       "Azure/aks-rdma-infiniband security-context.yaml; NVIDIA/aicr#2306; Mellanox/k8s-rdma-shared-dev-plugin "
       "example/test-hca-pod.yaml; Mellanox/network-operator example/sriov-network pods",
       {}},
      &Check};
  return kRule;
}

}  // namespace fabcheck::k8s::rules
