// port.link-layer: a port's link layer is not the profile's (InfiniBand or Ethernet).
#include <map>

#include "checks/check.h"
#include "checks/facts.h"

namespace fabcheck::checks {
namespace {

void Run(const Context& ctx, Reporter& out) {
  if (!out.NeedRdma(ctx)) return;
  std::map<std::string, std::vector<std::string>> by_layer;
  for (const auto& ref : ctx.Ports()) {
    const auto& p = *ref.port;
    std::string ev = Evidence(ref.Files().Attribute("link_layer"), p.link_layer.empty() ? "(unreadable)" : p.link_layer);
    if (p.link_layer.empty() || p.link_layer == "Unknown") {
      out.Unknown(ref.Label(), "link layer could not be read", {ev});
      continue;
    }
    if (ctx.profile && ctx.profile->link_layer && p.link_layer != *ctx.profile->link_layer) {
      bool want_ib = *ctx.profile->link_layer == "InfiniBand";
      out.Add(model::Severity::kFail, ref.Label(),
              "port runs " + p.link_layer + ", the profile expects " + *ctx.profile->link_layer,
              {ev, "profile " + ctx.profile->source + ": nics.link_layer = " + *ctx.profile->link_layer},
              "set the port type in firmware: mlxconfig -d " +
                  (ref.device->pci_bdf.empty() ? ref.device->name : ref.device->pci_bdf) + " set LINK_TYPE_P" +
                  std::to_string(p.port) + "=" + (want_ib ? "1" : "2") +
                  " (1 = InfiniBand, 2 = Ethernet), then mlxfwreset or reboot; or fix the profile's nics.devices");
      continue;
    }
    by_layer[p.link_layer].push_back(ref.Label());
  }
  for (const auto& [layer, ports] : by_layer) {
    out.Pass("node", layer + " on " + std::to_string(ports.size()) + " port(s): " + JoinLimited(ports, 8),
             {ctx.profile && ctx.profile->link_layer ? "profile expects " + *ctx.profile->link_layer
                                                     : std::string("no profile link layer: reported only")});
  }
}

}  // namespace

extern const Check kPortLinkLayer = {
    "port.link-layer", Rung::kL1, "A port's link layer is not the one the profile expects",
    "ConnectX ports can run InfiniBand or Ethernet; a port in the wrong mode never joins its fabric.",
    "Set LINK_TYPE_P<n> with mlxconfig (1 = IB, 2 = ETH) and reset the NIC; or correct the profile.", &Run};

}  // namespace fabcheck::checks
