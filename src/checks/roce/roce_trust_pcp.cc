// roce.trust.pcp: the RoCE netdev trusts PCP (VLAN priority) rather than DSCP.
#include "checks/roce/qos.h"
#include "sys/net_class.h"

namespace fabcheck::checks {
namespace {

void Run(const Context& ctx, Reporter& out) {
  if (!out.NeedRdma(ctx)) return;
  auto netdevs = ReadRoceNetdevs(ctx);
  if (netdevs.empty()) {
    out.Pass("node", "no RoCE port: nothing to check");
    return;
  }
  std::optional<std::string> want;
  if (ctx.profile) want = ctx.profile->trust;
  for (const auto& r : netdevs) {
    std::string trust;
    std::vector<std::string> ev;
    // The NVIDIA driver's own file wins (mlnx_qos does the same).
    std::string path = sys::net_class::Interface(r.netdev).QosTrust();
    if (!r.netdev.empty() && ctx.root->Exists(path)) {
      if (auto v = ctx.root->ReadAttribute(path); v.ok()) {
        trust = *v;
        ev.push_back(Evidence(path, *v));
      }
    }
    if (trust.empty() && r.dcb.ok()) {
      trust = r.dcb->Trust();
      ev.push_back(r.dcb->source + ": " + std::to_string(r.dcb->apps.size()) + " APP table entries, " +
                   (trust == "dscp" ? "some map DSCP values" : "none maps a DSCP value") + " -> trust " + trust);
    }
    if (trust.empty()) {
      out.Unknown(r.Object(), "trust mode unknown: " + (r.dcb.ok() ? std::string("no data") : r.dcb.status().message()));
      continue;
    }
    if (want && trust == *want) {
      out.Pass(r.Object(), "trust " + trust + ", as the profile expects", ev);
    } else if (trust == "pcp" || (want && trust != *want)) {
      bool fail = want.has_value();
      out.Add(fail ? model::Severity::kFail : model::Severity::kWarn, r.Object(),
              "priority trust is " + trust + (want ? " (the profile expects " + *want + ")" : "") +
                  ": RoCE v2 traffic is classified by " +
                  (trust == "pcp" ? "the VLAN PCP bits, which untagged or re-tagged L3 traffic does not carry; the "
                                    "DSCP that NCCL_IB_TC sets is ignored"
                                  : "DSCP"),
              ev,
              trust == "pcp" ? "set DSCP trust to match a routed RoCE fabric: mlnx_qos -i " + r.netdev +
                                   " --trust dscp (or dcb app / apptrust), and map the RoCE DSCP to the PFC priority"
                             : "set the trust mode the profile specifies (mlnx_qos -i " + r.netdev + " --trust " +
                                   want.value_or("pcp") + ")");
    } else {
      out.Pass(r.Object(), "trust " + trust, ev);
    }
  }
}

}  // namespace

extern const Check kRoceTrustPcp = {
    "roce.trust.pcp", Rung::kRoce, "A RoCE netdev trusts PCP (VLAN priority) instead of DSCP",
    "Routed RoCE v2 fabrics classify by DSCP; with PCP trust, untagged traffic lands in priority 0, which is "
    "usually lossy, whatever NCCL_IB_TC says.",
    "mlnx_qos -i <if> --trust dscp (or dcb apptrust), with the DSCP-to-priority map the switches use.", &Run};

}  // namespace fabcheck::checks
