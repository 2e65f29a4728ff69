// sys.memlock.low: RLIMIT_MEMLOCK is finite and below what RDMA registration needs.
#include <fmt/format.h>

#include "base/units.h"
#include "checks/container/process.h"
#include "sys/procfs.h"

namespace fabcheck::checks {
namespace {

// Below this, NCCL and perftest fail to register their buffers (ibv_reg_mr:
// ENOMEM) on any multi-NIC node; above it but finite, large jobs still fail.
constexpr uint64_t kMinimumUsable = 64ull << 20;

void Run(const Context& ctx, Reporter& out) {
  if (!out.NeedInventory(ctx)) return;
  ProcessFacts f = ReadProcessFacts(*ctx.root);
  if (!f.memlock.ok()) {
    out.Unknown("process", "memlock limit unknown: " + f.memlock.status().message());
    return;
  }
  const Rlimit& l = *f.memlock;
  std::vector<std::string> ev = {std::string(sys::procfs::kSelfLimits) + ": Max locked memory soft " + FormatLimit(l.soft) + ", hard " +
                                 FormatLimit(l.hard)};
  if (f.cap_eff.ok()) ev.push_back(fmt::format("{}: CapEff {:016x} (CAP_IPC_LOCK {})", sys::procfs::kSelfStatus, *f.cap_eff,
                                               f.HasIpcLock() ? "set" : "not set"));
  if (l.soft == kRlimUnlimited) {
    out.Pass("process", "memlock limit is unlimited", ev);
    return;
  }
  if (f.HasIpcLock()) {
    out.Pass("process", "memlock limit is " + FormatLimit(l.soft) + " but CAP_IPC_LOCK lifts it for RDMA registration",
             ev);
    return;
  }
  uint64_t need = kMinimumUsable;
  std::string need_text = FormatSize(kMinimumUsable);
  bool profile_min = ctx.profile && ctx.profile->min_memlock_bytes;
  if (profile_min) {
    need = *ctx.profile->min_memlock_bytes;
    need_text = FormatLimit(need) + " (profile system.min_memlock)";
  }
  std::string remedy =
      "raise it for the job: ulimit -l unlimited (bare metal: /etc/security/limits.d/*.conf '* - memlock unlimited', "
      "systemd LimitMEMLOCK=infinity; containers: --ulimit memlock=-1:-1, or give the pod CAP_IPC_LOCK)";
  if (!ctx.HasRdma()) {
    out.Info("process", "memlock limit is " + FormatLimit(l.soft) + "; it matters only for RDMA, and this node has none",
             ev);
    return;
  }
  if (l.soft < need) {
    out.Add(model::Severity::kFail, "process",
            "memlock limit is " + FormatLimit(l.soft) + ", below " + need_text +
                ": RDMA memory registration (ibv_reg_mr) fails with ENOMEM once NCCL or perftest pins its buffers",
            ev, remedy);
  } else {
    out.Add(model::Severity::kWarn, "process",
            "memlock limit is " + FormatLimit(l.soft) + " (finite): enough for small tests, but large jobs that "
            "register more memory will fail",
            ev, remedy);
  }
}

}  // namespace

extern const Check kSysMemlockLow = {
    "sys.memlock.low", Rung::kContainer, "RLIMIT_MEMLOCK is finite and below what RDMA registration needs",
    "RDMA pins the memory it registers, and the kernel counts it against RLIMIT_MEMLOCK unless the process has "
    "CAP_IPC_LOCK. Container runtimes default to a few MiB, so ibv_reg_mr fails (ENOMEM) and NCCL falls back or "
    "aborts.",
    "ulimit -l unlimited for the job (limits.conf, systemd LimitMEMLOCK=infinity, docker --ulimit memlock=-1), or "
    "give the container CAP_IPC_LOCK. Read from /proc/self/limits.",
    &Run};

}  // namespace fabcheck::checks
