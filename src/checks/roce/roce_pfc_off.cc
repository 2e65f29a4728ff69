// roce.pfc.off: PFC is enabled on no priority of a RoCE netdev (or not on the
// profile's priority). Read through dcbnl; "unknown" where it cannot be asked.
#include "checks/roce/qos.h"

namespace fabcheck::checks {
namespace {

void Run(const Context& ctx, Reporter& out) {
  if (!out.NeedRdma(ctx)) return;
  auto netdevs = ReadRoceNetdevs(ctx);
  if (netdevs.empty()) {
    out.Pass("node", "no RoCE port (InfiniBand is lossless by design): nothing to check");
    return;
  }
  std::optional<int> want;
  if (ctx.profile) want = ctx.profile->pfc_priority;
  for (const auto& r : netdevs) {
    if (!r.dcb.ok()) {
      out.Unknown(r.Object(), "PFC state unknown: " + r.dcb.status().message());
      continue;
    }
    const DcbInfo& d = *r.dcb;
    if (!d.pfc_en) {
      out.Unknown(r.Object(), "the dcbnl answer has no PFC attribute (the driver does not report IEEE PFC)",
                  {d.source});
      continue;
    }
    std::vector<std::string> ev = {d.source + ": prio-pfc enabled on " + d.PfcPriorities() +
                                   (d.pfc_cap ? " (pfc-cap " + std::to_string(*d.pfc_cap) + ")" : "")};
    if (*d.pfc_en == 0) {
      out.Add(QosSeverity(ctx), r.Object(),
              "PFC is off on every priority: RoCE traffic is lossy, and drops turn into retransmission timeouts "
              "under load (unless the fabric is deliberately designed lossy)",
              ev,
              "enable PFC on the RoCE priority, matching the switches: dcb pfc set dev " + r.netdev +
                  " prio-pfc " + std::to_string(want.value_or(3)) + ":on (or mlnx_qos -i " + r.netdev +
                  " --pfc 0,0,0,1,0,0,0,0)");
    } else if (want && !(*d.pfc_en & (1u << *want))) {
      out.Add(model::Severity::kFail, r.Object(),
              "PFC is not enabled on priority " + std::to_string(*want) + " (the profile's RoCE priority); it is on " +
                  d.PfcPriorities(),
              ev, "dcb pfc set dev " + r.netdev + " prio-pfc " + std::to_string(*want) + ":on, and check that the "
                  "switches and NCCL_IB_TC agree on the priority");
    } else {
      out.Pass(r.Object(), "PFC enabled on priority " + d.PfcPriorities(), ev);
    }
  }
}

}  // namespace

extern const Check kRocePfcOff = {
    "roce.pfc.off", Rung::kRoce, "PFC is enabled on no priority of a RoCE netdev",
    "RoCE's transport assumes a (nearly) lossless network; without PFC a congested switch drops packets and "
    "RDMA recovers only by timeouts, so throughput collapses under load while light tests look fine.",
    "Enable PFC on the RoCE priority (dcb pfc set dev <if> prio-pfc 3:on, or mlnx_qos --pfc), identically on "
    "hosts and switches. Where dcbnl cannot be asked (captures, containers without the netdev) the result is "
    "unknown, never a failure.",
    &Run};

}  // namespace fabcheck::checks
