// k8s.rdma.ipc-lock-nonroot: IPC_LOCK added for a non-root user never becomes effective.
#include "k8s/rules/common.h"

namespace fabcheck::k8s::rules {
namespace {

void Check(const Context& ctx, Reporter& out) {
  if (ctx.profile.memlock_raised) return;
  for (const auto& pod : ctx.pods) {
    for (const auto& c : pod.containers) {
      if (!c.ipc_lock || c.privileged) continue;
      bool non_root = (c.run_as_user && *c.run_as_user != 0) || (!c.run_as_user && c.run_as_non_root);
      if (!non_root) continue;
      std::string user = c.run_as_user ? "runAsUser: " + std::to_string(*c.run_as_user) : "runAsNonRoot: true";
      Report r = PodReport(pod, &c, c.user_line,
                           "adds IPC_LOCK but runs as a non-root user (" + user +
                               "): the capability stays out of the effective set (CapEff 0), so memlock "
                               "still limits RDMA memory registration",
                           {user, "securityContext.capabilities.add: " + DescribeCaps(c),
                            "Kubernetes grants no ambient capabilities, so a non-root process starts with CapEff 0"});
      if (c.rdma_resources.empty()) r.level = Level::kWarning;  // not an RDMA container: less certain to hurt
      out.Add(std::move(r));
    }
  }
}

}  // namespace

const Rule& RuleRdmaIpcLockNonroot() {
  static const Rule kRule{
      {"k8s.rdma.ipc-lock-nonroot", Level::kError, "workload", "IPC_LOCK added for a non-root user has no effect",
       "Capabilities added in the securityContext go into the permitted and bounding sets, but a non-root "
       "process gets none in its effective set (Kubernetes sets no ambient capabilities). /proc/self/status shows "
       "CapEff 0000000000000000, memlock stays at the runtime default and RDMA registration fails.",
       "Run the RDMA process as root (runAsUser: 0) inside the container, or raise memlock for the container on "
       "the node (containerd/cri-o default ulimits, LimitMEMLOCK=infinity) and lint with a profile that says so, "
       "or make the binary carry file capabilities (setcap cap_ipc_lock+ep).",
       "NVIDIA/nvidia-container-toolkit#2037; capabilities(7) on execve of a non-root user", {}},
      &Check};
  return kRule;
}

}  // namespace fabcheck::k8s::rules
