// nccl.ib-disabled: NCCL_IB_DISABLE turns off the IB/RoCE transport.
#include "checks/check.h"

namespace fabcheck::checks {
namespace {

void Run(const Context& ctx, Reporter& out) {
  auto v = ctx.env->Get("NCCL_IB_DISABLE");
  // Without an ACTIVE RDMA port NCCL has no IB/RoCE transport to enable:
  // "may use IB" would be a pass for a node that can only do TCP.
  const bool usable = ctx.inventory && !ctx.ActivePorts().empty();
  if (!v && !usable) {
    out.Info("environment",
             "NCCL_IB_DISABLE is not set, but this node has no ACTIVE RDMA port: NCCL will use TCP sockets "
             "(NET/Socket) whatever it says (see rdma.none)");
    return;
  }
  if (!v) {
    out.Pass("environment", "NCCL_IB_DISABLE is not set: NCCL may use the IB/RoCE transport");
    return;
  }
  // NCCL_PARAM reads it with strtoll(value, NULL, 0); any non-zero disables.
  long long n = std::strtoll(v->value.c_str(), nullptr, 0);
  std::vector<std::string> ev = {ctx.env->Describe("NCCL_IB_DISABLE")};
  if (n == 0 && !usable) {
    out.Info("environment", "NCCL_IB_DISABLE=" + v->value + " leaves IB/RoCE enabled, but this node has no ACTIVE "
                            "RDMA port: NCCL will use TCP sockets (see rdma.none)", ev);
    return;
  }
  if (n == 0) {
    out.Pass("environment", "NCCL_IB_DISABLE=" + v->value + " leaves the IB/RoCE transport enabled", ev);
    return;
  }
  bool rdma = ctx.HasRdma();
  out.Add(rdma ? model::Severity::kFail : model::Severity::kWarn, "NCCL_IB_DISABLE",
          "NCCL_IB_DISABLE=" + v->value + " disables NCCL's IB/RoCE transport: inter-node traffic goes over TCP "
          "sockets (`via NET/Socket` in the log)" +
              (rdma ? std::string(" although this node has RDMA devices") : std::string()),
          ev, "unset NCCL_IB_DISABLE (remove it from the job, " + v->source + ")");
}

}  // namespace

extern const Check kNcclIbDisabled = {
    "nccl.ib-disabled", Rung::kNccl, "NCCL_IB_DISABLE=1 turns RDMA off for NCCL",
    "Left over from debugging, it makes every inter-node transfer use TCP sockets; the job works, slowly, and "
    "nothing but NCCL's INFO log says why.",
    "Unset NCCL_IB_DISABLE in the job, its launcher, /etc/nccl.conf or ~/.nccl.conf.", &Run};

}  // namespace fabcheck::checks
