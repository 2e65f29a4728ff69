// netdev.down: the netdev of an RDMA port is not up.
#include "checks/check.h"
#include "checks/facts.h"
#include "sys/net_class.h"

namespace fabcheck::checks {
namespace {

void Run(const Context& ctx, Reporter& out) {
  if (!out.NeedRdma(ctx)) return;
  std::vector<std::string> good;
  for (const auto& ref : ctx.Ports()) {
    const auto& p = *ref.port;
    if (p.netdev.empty()) {
      if (p.link_layer == "Ethernet") {
        out.Unknown(ref.Label(), "no netdev is mapped to this RoCE port (sys.rdma-netns says whether it is in "
                                 "another network namespace)");
      }
      continue;  // IB ports need no netdev for RDMA
    }
    const auto* nd = ctx.inventory->FindNetDevice(p.netdev);
    if (!nd) continue;  // not in this network namespace: sys.rdma-netns reports it
    const auto files = sys::net_class::Interface(nd->name);
    std::vector<std::string> ev = {Evidence(files.Operstate(), nd->operstate.empty() ? "(unreadable)" : nd->operstate)};
    if (nd->carrier) ev.push_back(Evidence(files.Carrier(), *nd->carrier ? "1" : "0"));
    // Some drivers report "unknown" for a working interface; the carrier decides then.
    bool up = nd->operstate == "up" || (nd->operstate == "unknown" && nd->carrier.value_or(false));
    if (nd->operstate.empty() && !nd->carrier) {
      out.Unknown(ref.Label() + " (" + nd->name + ")", "netdev state could not be read", ev);
    } else if (!up) {
      bool roce = p.link_layer == "Ethernet";
      out.Add(roce ? model::Severity::kFail : model::Severity::kWarn, ref.Label() + " (" + nd->name + ")",
              "netdev " + nd->name + " is " + (nd->operstate.empty() ? "not up" : nd->operstate) +
                  (roce ? ": RoCE traffic needs it up (its GIDs come from its addresses)"
                        : ": IPoIB is down (RDMA itself does not need it, but the job's IP traffic and rdma_cm do)"),
              ev, "ip link set " + nd->name + " up; check the cable (carrier) and the switch port");
    } else {
      good.push_back(nd->name);
    }
  }
  if (!good.empty()) out.Pass("node", "RDMA netdevs up: " + JoinLimited(good, 8));
  if (out.count() == 0) out.Pass("node", "no RDMA port has a netdev to check (InfiniBand without IPoIB)");
}

}  // namespace

extern const Check kNetdevDown = {
    "netdev.down", Rung::kL2, "The netdev of an RDMA port is not up",
    "RoCE traffic is addressed by the netdev's IP addresses (its GIDs); a down netdev means a port without a usable "
    "GID. On InfiniBand the IPoIB netdev carries the job's IP traffic and rdma_cm address resolution.",
    "ip link set <netdev> up; check the carrier (cable, switch port); make the configuration persistent "
    "(netplan, NetworkManager, systemd-networkd).",
    &Run};

}  // namespace fabcheck::checks
