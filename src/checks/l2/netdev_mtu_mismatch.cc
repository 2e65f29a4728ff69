// netdev.mtu.mismatch: the RDMA netdevs of the node disagree on MTU, or are
// below the profile's MTU.
#include <map>

#include "checks/check.h"
#include "checks/facts.h"
#include "sys/net_class.h"

namespace fabcheck::checks {
namespace {

void Run(const Context& ctx, Reporter& out) {
  if (!out.NeedRdma(ctx)) return;
  // RoCE and IPoIB MTUs live in different worlds (9000 vs 2044/4092), so each
  // link layer is compared within itself.
  std::map<std::string, std::vector<const model::NetDevice*>> by_layer;
  std::set<std::string> seen;
  for (const auto& ref : ctx.Ports()) {
    const auto* nd = ctx.inventory->FindNetDevice(ref.port->netdev);
    if (!nd || !seen.insert(nd->name).second) continue;
    by_layer[ref.port->link_layer].push_back(nd);
  }
  if (by_layer.empty()) {
    out.Pass("node", "no RDMA netdev in this network namespace to compare");
    return;
  }
  for (const auto& [layer, netdevs] : by_layer) {
    std::map<int, std::vector<std::string>> by_mtu;
    for (const auto* nd : netdevs) {
      if (!nd->mtu) {
        out.Unknown(nd->name, "MTU could not be read", {Evidence(sys::net_class::Interface(nd->name).Mtu(), "(unreadable)")});
        continue;
      }
      by_mtu[*nd->mtu].push_back(nd->name);
    }
    if (by_mtu.empty()) continue;
    // The majority MTU is the node's intent; ties go to the larger MTU.
    int majority = by_mtu.begin()->first;
    for (const auto& [mtu, names] : by_mtu) {
      if (names.size() >= by_mtu[majority].size()) majority = mtu;
    }
    bool roce = layer == "Ethernet";
    std::optional<int> want;
    if (roce && ctx.profile) want = ctx.profile->mtu;
    bool problem = false;
    for (const auto& [mtu, names] : by_mtu) {
      for (const auto& name : names) {
        std::string ev = Evidence(sys::net_class::Interface(name).Mtu(), std::to_string(mtu));
        if (want && mtu < *want) {
          out.Add(model::Severity::kFail, name,
                  "MTU " + std::to_string(mtu) + " is below the profile's " + std::to_string(*want) +
                      (roce ? " (RoCE path MTU follows the netdev MTU: large messages will be fragmented into small "
                              "packets or time out against peers using jumbo frames)"
                            : ""),
                  {ev, "profile " + ctx.profile->source + ": network.mtu = " + std::to_string(*want)},
                  "ip link set " + name + " mtu " + std::to_string(*want) + " and make it persistent");
          problem = true;
        } else if (mtu != majority) {
          out.Add(model::Severity::kWarn, name,
                  "MTU " + std::to_string(mtu) + " differs from the other " + layer + " RDMA netdevs of this node (" +
                      std::to_string(majority) + " on " + JoinLimited(by_mtu[majority]) + ")",
                  {ev}, "set the same MTU on every RDMA netdev and switch port: ip link set " + name + " mtu " +
                            std::to_string(want.value_or(majority)));
          problem = true;
        }
      }
    }
    if (!problem) {
      out.Pass("node", layer + " RDMA netdevs agree on MTU " + std::to_string(majority) + ": " +
                           JoinLimited(by_mtu[majority], 8),
               {want ? "profile expects at least " + std::to_string(*want) : std::string("no profile MTU: majority rule")});
    }
  }
}

}  // namespace

extern const Check kNetdevMtuMismatch = {
    "netdev.mtu.mismatch", Rung::kL2, "RDMA netdevs of the node differ in MTU, or are below the profile's MTU",
    "An MTU mismatch lets small messages through and makes large ones stall or time out; RoCE's path MTU follows "
    "the netdev MTU, so one rail at 1500 among 9000s runs with 1024-byte packets.",
    "Set one MTU on every RDMA netdev (and the switch ports): ip link set <netdev> mtu 9000, made persistent.",
    &Run};

}  // namespace fabcheck::checks
