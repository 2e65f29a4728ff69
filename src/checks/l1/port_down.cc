// port.down: an RDMA port that is not ACTIVE, or whose physical link is not LinkUp.
#include "checks/check.h"

namespace fabcheck::checks {
namespace {

std::string Remedy(const model::RdmaPort& port, const std::string& netdev) {
  const std::string& phys = port.phys_state;
  if (phys == "Polling") return "no link partner: check the cable, the transceiver and the switch port (is it enabled?)";
  if (phys == "Disabled") {
    return port.link_layer == "Ethernet" ? "the port is administratively down: ip link set " +
                                               (netdev.empty() ? std::string("<netdev>") : netdev) + " up"
                                         : "the port is disabled: enable it (ibportstate <lid> <port> enable) or on the switch";
  }
  if (port.link_layer == "InfiniBand" && phys == "LinkUp" && (port.state == "INIT" || port.state == "ARMED")) {
    return "the link is up but no subnet manager has configured it: check that opensm/UFM runs on the fabric (sminfo)";
  }
  if (port.link_layer == "Ethernet") {
    return "bring the netdev up and check the cable: ip link set " + (netdev.empty() ? std::string("<netdev>") : netdev) +
           " up; ethtool " + (netdev.empty() ? std::string("<netdev>") : netdev);
  }
  return "check the cable, the transceiver and the switch port; ibstat shows the same state";
}

void Run(const Context& ctx, Reporter& out) {
  if (!out.NeedRdma(ctx)) return;
  std::vector<std::string> good;
  for (const auto& ref : ctx.Ports()) {
    const auto& p = *ref.port;
    const sys::infiniband::PortFiles files = ref.Files();
    if (p.state.empty() || p.phys_state.empty()) {
      out.Unknown(ref.Label(), "port state could not be read",
                  {files.Attribute("state") + " = " + (p.state.empty() ? "(unreadable)" : p.state),
                   files.Attribute("phys_state") + " = " + (p.phys_state.empty() ? "(unreadable)" : p.phys_state)});
      continue;
    }
    bool active = p.state == "ACTIVE";
    bool link_up = p.phys_state == "LinkUp";
    if (active && link_up) {
      good.push_back(ref.Label());
      continue;
    }
    auto code = [](const std::optional<int>& c, const std::string& s) {
      return c ? std::to_string(*c) + ": " + s : s;
    };
    out.Add(model::Severity::kFail, ref.Label(),
            "port is " + p.state + " / " + p.phys_state + " (needs ACTIVE / LinkUp to carry RDMA traffic)",
            {Evidence(files.Attribute("state"), code(p.state_code, p.state)),
             Evidence(files.Attribute("phys_state"), code(p.phys_state_code, p.phys_state))},
            Remedy(p, p.netdev));
  }
  if (!good.empty()) out.Pass("node", std::to_string(good.size()) + " port(s) ACTIVE / LinkUp: " + Join(good, ", "));
}

}  // namespace

extern const Check kPortDown = {
    "port.down", Rung::kL1, "An RDMA port is not ACTIVE, or its physical state is not LinkUp",
    "A port that is not ACTIVE carries no RDMA traffic; NCCL skips it silently and the job runs on fewer rails "
    "or falls back to TCP.",
    "Polling: cable, transceiver or switch port. Disabled: enable the port. INIT/ARMED on InfiniBand: the subnet "
    "manager has not configured the port (check opensm/UFM). RoCE: the netdev has no carrier.",
    &Run};

}  // namespace fabcheck::checks
