// The agent's data-plane rails: from --data-iface NAME or --data-addr ADDR to
// the interface, its address and its MTU, through getifaddrs and SIOCGIFMTU
// (no /sys reads here; sys/ owns those).
#pragma once

#include <string>

#include "base/status.h"
#include "control/api.h"

namespace fabcheck::control {

// NotFound naming the interface or address and listing what exists.
Result<RailInfo> RailFromInterface(const std::string& interface);
Result<RailInfo> RailFromAddress(const std::string& address);
// The node's name for reports: $NODE_NAME (Kubernetes downward API), else the hostname.
std::string NodeName();

}  // namespace fabcheck::control
