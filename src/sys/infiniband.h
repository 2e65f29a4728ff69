// The layout of /sys/class/infiniband, in the style of prometheus/procfs'
// class_infiniband.go: where each attribute of an RDMA device and port lives,
// and how its value is written. Every module that reads an RDMA port
// (inventory, telemetry, checks, perf) takes its paths and parsing from here.
//
//   /sys/class/infiniband/<dev>/                       device (a link into /sys/devices/...)
//     device/numa_node                                 NUMA node of the PCI function ("-1": none)
//     ports/<n>/state                                  "4: ACTIVE"      (ParsePortState)
//     ports/<n>/phys_state                             "5: LinkUp"      (ParsePortState)
//     ports/<n>/rate                                   "400 Gb/sec (4X NDR)"
//     ports/<n>/link_layer                             "InfiniBand" or "Ethernet"
//     ports/<n>/counters/<name>                        IB PMA counters (unsigned decimal)
//     ports/<n>/hw_counters/<name>                     driver counters (mlx5: out_of_sequence, ...)
//     ports/<n>/gids/<i>, gid_attrs/types/<i>, gid_attrs/ndevs/<i>   the GID table
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace fabcheck::sys::infiniband {

inline constexpr std::string_view kClassDir = "/sys/class/infiniband";

std::string DeviceDir(std::string_view device);
std::string PortsDir(std::string_view device);
std::string PortDir(std::string_view device, int port);
// A port attribute: PortFile("mlx5_0", 1, "state") = .../ports/1/state.
std::string PortFile(std::string_view device, int port, std::string_view name);
std::string CountersDir(std::string_view device, int port);
std::string HwCountersDir(std::string_view device, int port);
std::string NumaNodeFile(std::string_view device);

// ports/<n>/state and phys_state: "<code>: <NAME>", code 0..255, a name.
struct PortState {
  int code = 0;
  std::string name;  // "ACTIVE", "LinkUp", ...
};
std::optional<PortState> ParsePortState(std::string_view text);

}  // namespace fabcheck::sys::infiniband
