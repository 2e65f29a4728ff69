// roce.no-ipv4: a RoCE port's netdev has no IPv4 address.
#include "checks/check.h"
#include "checks/facts.h"

namespace fabcheck::checks {
namespace {

void Run(const Context& ctx, Reporter& out) {
  if (!out.NeedRdma(ctx)) return;
  auto ports = ctx.RocePorts();
  if (ports.empty()) {
    out.Pass("node", "no RoCE port (InfiniBand only): nothing to check");
    return;
  }
  std::vector<std::string> good;
  for (const auto& ref : ports) {
    const auto* nd = ctx.inventory->FindNetDevice(ref.port->netdev);
    if (!nd) {
      out.Unknown(ref.Label(), ref.port->netdev.empty() ? "no netdev is mapped to this RoCE port"
                                                        : "netdev " + ref.port->netdev + " is not in this network namespace");
      continue;
    }
    if (!nd->addresses_known) {
      out.Unknown(ref.Label() + " (" + nd->name + ")", "the addresses of " + nd->name + " are not known in " +
                                                            ctx.root->Describe() + " (a capture records them)");
      continue;
    }
    std::vector<std::string> v4;
    auto collect = [&](const model::NetDevice& d) {
      for (const auto& a : d.addresses) {
        if (a.family == "inet") v4.push_back(d.name + " " + a.address + "/" + std::to_string(a.prefix_len));
      }
    };
    collect(*nd);
    // A VLAN on top of the netdev also puts its addresses into the port's GID table.
    for (const auto& other : ctx.inventory->netdevs) {
      if (other.vlan_parent == nd->name) collect(other);
    }
    if (v4.empty()) {
      std::vector<std::string> all;
      for (const auto& a : nd->addresses) all.push_back(a.address);
      out.Add(model::Severity::kFail, ref.Label() + " (" + nd->name + ")",
              "RoCE netdev " + nd->name + " has no IPv4 address: the port has no RoCE v2 IPv4 GID and NCCL finds no "
              "GID to use",
              {"addresses of " + nd->name + ": " + (all.empty() ? std::string("none") : Join(all, ", "))},
              "assign the rail's IPv4 address to " + nd->name + " (ip addr add <ip>/<len> dev " + nd->name +
                  ", persistently), or in Kubernetes check the IPAM of the network attachment");
    } else {
      good.push_back(ref.Label() + ": " + v4.front());
    }
  }
  if (!good.empty()) out.Pass("node", "RoCE netdevs with IPv4: " + JoinLimited(good, 8));
}

}  // namespace

extern const Check kRoceNoIpv4 = {
    "roce.no-ipv4", Rung::kL2, "A RoCE port's netdev has no IPv4 address",
    "RoCE v2 GIDs are made from the netdev's IP addresses; without IPv4 there is no IPv4 RoCE v2 GID, which is "
    "what NCCL selects by default (NCCL_IB_ADDR_FAMILY=AF_INET).",
    "Give the netdev its rail address (persistently), or check the IPAM of the pod's network attachment.", &Run};

}  // namespace fabcheck::checks
