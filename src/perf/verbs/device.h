// Opening an RDMA device and describing one of its ports: state, link layer,
// active MTU, LID, the GID table with types and owning netdevs.
#pragma once

#include <infiniband/verbs.h>

#include <string>
#include <vector>

#include "base/status.h"
#include "perf/verbs/gid.h"
#include "perf/verbs/objects.h"
#include "sys/sysroot.h"

namespace fabcheck::perf::verbs {

// The RDMA devices of this node, by name. Unavailable with the reason and a
// fix when the kernel has no RDMA support (ENOSYS) or there is no device.
Result<std::vector<std::string>> ListDevices();

struct PortState {
  int port = 0;
  bool active = false;
  std::string state;         // "ACTIVE", "DOWN"...
  bool infiniband = false;   // link layer
  int active_mtu = 0;        // bytes
  uint16_t lid = 0;
  std::vector<GidEntry> gids;           // non-empty slots
  std::vector<std::string> netdevs;     // the port's netdev, then its uppers (RoCE; PortNetdevs)
};

struct Device {
  std::string name;
  ContextPtr context;
  ibv_device_attr attr{};
  PortState port;
};

// Opens `name` (empty: pick automatically) and port `port` (0: its first
// ACTIVE port). Automatic choice: the device and port whose GID table holds
// `prefer_ipv4` (the address this side uses for the control connection),
// else the first device with an ACTIVE port. Errors list the devices seen.
Result<Device> OpenDevice(const std::string& name, int port, const std::string& prefer_ipv4);

// Describes an open device's port (everything but `netdevs`).
Result<PortState> QueryPort(ibv_context* ctx, const std::string& device, int port);

// The port's netdev (owner of its link-local GID, else of the first GID),
// then its upper devices (VLANs, bonds) as `root`'s sysfs lists them.
std::vector<std::string> PortNetdevs(const sys::SysRoot& root, const std::vector<GidEntry>& gids);

std::string_view PortStateName(ibv_port_state state);

}  // namespace fabcheck::perf::verbs
