// What the RoCE QoS checks share: the node's RoCE netdevs (one per PCI
// function port) with their DCB state.
#pragma once

#include <string>
#include <vector>

#include "checks/check.h"
#include "checks/dcb.h"
#include "checks/facts.h"

namespace fabcheck::checks {

struct RoceNetdev {
  std::string netdev;              // the physical netdev holding the DCB settings
  std::vector<std::string> ports;  // "mlx5_0 port 1"
  Result<DcbInfo> dcb = UnavailableError("not read");
  std::string Object() const;      // "ens1f0np0 (mlx5_0 port 1)"
};

// Every RoCE port's physical netdev, once each, with DCB read through dcbnl
// (live) or the capture. Ports without a netdev are listed with an empty name.
std::vector<RoceNetdev> ReadRoceNetdevs(const Context& ctx);

// A QoS finding is "fail" when the profile states the expectation, else "warn":
// lossy RoCE designs exist, and without a profile fabcheck cannot tell.
model::Severity QosSeverity(const Context& ctx);

}  // namespace fabcheck::checks
