// sys.cap-ipc-lock: running in a container without CAP_IPC_LOCK (and with a
// finite memlock limit), the usual reason RDMA registration fails in pods.
#include <fmt/format.h>

#include "checks/container/process.h"
#include "sys/procfs.h"

namespace fabcheck::checks {
namespace {

void Run(const Context& ctx, Reporter& out) {
  if (!out.NeedInventory(ctx)) return;
  ProcessFacts f = ReadProcessFacts(*ctx.root);
  if (!f.cap_eff.ok()) {
    out.Unknown("process", "capabilities unknown: " + f.cap_eff.status().message());
    return;
  }
  std::vector<std::string> ev = {fmt::format("{}: CapEff {:016x}, bit {} (CAP_IPC_LOCK) {}", sys::procfs::kSelfStatus, *f.cap_eff,
                                             kCapIpcLock, f.HasIpcLock() ? "set" : "not set")};
  if (f.in_container) ev.push_back("container: " + f.container_evidence);
  if (f.memlock.ok()) ev.push_back("memlock soft limit " + FormatLimit(f.memlock->soft));
  if (f.HasIpcLock()) {
    out.Pass("process", "CAP_IPC_LOCK is effective", ev);
    return;
  }
  bool unlimited = f.memlock.ok() && f.memlock->soft == kRlimUnlimited;
  if (unlimited) {
    out.Pass("process", "no CAP_IPC_LOCK, but the memlock limit is unlimited, so registration is not limited", ev);
  } else if (!f.in_container) {
    out.Info("process", "no CAP_IPC_LOCK (normal outside containers; the memlock limit decides: see sys.memlock.low)",
             ev);
  } else if (!ctx.HasRdma()) {
    out.Info("process", "container without CAP_IPC_LOCK; it matters only for RDMA, and this node has none", ev);
  } else {
    out.Add(model::Severity::kFail, "process",
            "running in a container without CAP_IPC_LOCK and with a finite memlock limit: RDMA memory registration "
            "will fail (ibv_reg_mr ENOMEM/EPERM)",
            ev,
            "Kubernetes: securityContext.capabilities.add: [\"IPC_LOCK\"] on the container; docker: --cap-add "
            "IPC_LOCK (or --ulimit memlock=-1:-1)");
  }
}

}  // namespace

extern const Check kSysCapIpcLock = {
    "sys.cap-ipc-lock", Rung::kContainer, "Running in a container without CAP_IPC_LOCK",
    "Every RDMA pod example adds IPC_LOCK: without it (and with the runtime's small memlock limit) memory "
    "registration fails and NCCL cannot use the NIC.",
    "Add the IPC_LOCK capability to the container (securityContext.capabilities.add: [IPC_LOCK]).", &Run};

}  // namespace fabcheck::checks
