// port.rate.low: an ACTIVE port runs below the profile's rate, or below what
// the same NIC model does on other ports of this node.
#include <fmt/format.h>

#include <map>

#include "checks/check.h"
#include "checks/facts.h"

namespace fabcheck::checks {
namespace {

void Run(const Context& ctx, Reporter& out) {
  if (!out.NeedRdma(ctx)) return;
  // Without a profile the node is its own reference: the fastest port of the
  // same NIC model and link layer shows what the hardware can do. sysfs has no
  // "supported speeds" for IB ports, so this catches a port trained at a lower
  // speed or width than its siblings (bad cable, wrong transceiver, split port).
  std::map<std::string, double> best;
  auto key = [](const Context::PortRef& r) { return r.device->hca_type + "/" + r.port->link_layer; };
  for (const auto& ref : ctx.Ports()) {
    if (ref.port->state == "ACTIVE" && ref.port->rate_gbps) {
      best[key(ref)] = std::max(best[key(ref)], *ref.port->rate_gbps);
    }
  }
  std::vector<std::string> good;
  for (const auto& ref : ctx.Ports()) {
    const auto& p = *ref.port;
    if (p.state != "ACTIVE") continue;  // port.down reports it
    std::string ev = Evidence(ref.Files().Attribute("rate"), p.rate_text.empty() ? "(unreadable)" : p.rate_text);
    if (!p.rate_gbps) {
      out.Unknown(ref.Label(), "port rate could not be read or parsed", {ev});
      continue;
    }
    double rate = *p.rate_gbps;
    if (ctx.profile && ctx.profile->rate_gbps && rate + 1e-9 < *ctx.profile->rate_gbps) {
      out.Add(model::Severity::kFail, ref.Label(),
              fmt::format("port runs at {:g} Gb/s, the profile expects {:g} Gb/s", rate, *ctx.profile->rate_gbps),
              {ev, fmt::format("profile {}: nics.rate_gbps = {:g}", ctx.profile->source, *ctx.profile->rate_gbps)},
              "check the cable and transceiver type and the switch port speed; on IB: ibportstate/ibdiagnet to see "
              "the enabled speeds and widths at both ends");
      continue;
    }
    double peer = best[key(ref)];
    if (rate + 1e-9 < peer) {
      out.Add(model::Severity::kWarn, ref.Label(),
              fmt::format("port runs at {:g} Gb/s while other {} ports of this node run at {:g} Gb/s", rate,
                          ref.device->hca_type.empty() ? "ports" : ref.device->hca_type, peer),
              {ev}, "a port that trained below its siblings usually has a bad cable, the wrong transceiver or a "
                    "switch port configured slower; reseat or swap the cable and compare with ibstat");
      continue;
    }
    good.push_back(ref.Label() + " " + fmt::format("{:g}", rate));
  }
  if (!good.empty()) {
    out.Pass("node", "port rates as expected (Gb/s): " + JoinLimited(good, 8),
             {ctx.profile && ctx.profile->rate_gbps ? fmt::format("profile rate {:g} Gb/s", *ctx.profile->rate_gbps)
                                                    : std::string("no profile rate: compared with the fastest port "
                                                                  "of the same NIC model on this node")});
  }
}

}  // namespace

extern const Check kPortRateLow = {
    "port.rate.low", Rung::kL1, "An ACTIVE port runs below the profile's rate or below its sibling ports",
    "A port that trained at a lower speed or width (e.g. 200 instead of 400 Gb/s, 2X instead of 4X) caps every "
    "transfer on that rail and slows the whole collective to the slowest rail.",
    "Check the cable and transceiver, the switch port's configured speed, and compare both ends (ibstat, "
    "ibdiagnet, ethtool). Give a profile (--profile) to check against the machine type's rate.",
    &Run};

}  // namespace fabcheck::checks
