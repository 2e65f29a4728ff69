// The /proc files fabcheck reads (proc(5)), with their parsers, and the
// kernel's module state under /sys/module. Files of one
// family with a reader of their own live beside it: /proc/interrupts and
// /proc/irq in sys/irq.h, Cpus_allowed_list in sys/cpu.h, numa_balancing in
// sys/memory.h.
//
//   /proc/sys/kernel/hostname, osrelease   one line: "node-07", "6.8.0-45-generic"
//   /proc/cmdline                          the kernel command line ("... iommu=pt ...")
//   /proc/modules                          "nvidia_peermem 16384 0 - Live 0x0000000000000000 (OE)"
//   /proc/driver/nvidia/version            "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.15 ..."
//   /proc/net/route                        IPv4 routes: "Iface Destination Gateway Flags ... Mask ..." (hex)
//   /proc/net/vlan/config                  "eth0.100       | 100  | eth0" after two header lines (8021q loaded)
//   /proc/self/limits                      "Max locked memory  65536  65536  bytes"
//   /proc/self/status                      "CapEff:\t000001ffffffffff", "Cpus_allowed_list:\t0-15"
//   /proc/self/cgroup                      "0::/kubepods.slice/..." (v2) or "3:cpuset:/..." (v1)
//   /sys/module/<name>/                    a loaded module (version: its version, when it has one)
//   /sys/kernel/mm/memory_peers/<m>/version  MLNX_OFED's peer-memory clients (nv_mem, nv_mem_nc)
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>

#include "base/status.h"
#include "sys/sysroot.h"

namespace fabcheck::sys::procfs {

inline constexpr std::string_view kHostname = "/proc/sys/kernel/hostname";
inline constexpr std::string_view kOsRelease = "/proc/sys/kernel/osrelease";
inline constexpr std::string_view kCmdline = "/proc/cmdline";
inline constexpr std::string_view kModules = "/proc/modules";
inline constexpr std::string_view kNvidiaDriverVersion = "/proc/driver/nvidia/version";
inline constexpr std::string_view kNetRoute = "/proc/net/route";
inline constexpr std::string_view kVlanConfig = "/proc/net/vlan/config";
inline constexpr std::string_view kSelfLimits = "/proc/self/limits";
inline constexpr std::string_view kSelfStatus = "/proc/self/status";
inline constexpr std::string_view kSelfCgroup = "/proc/self/cgroup";
// Where a loaded module shows itself even when /proc/modules is not captured.
inline constexpr std::string_view kModuleDir = "/sys/module";
std::string ModuleDir(std::string_view module);
// The files NCCL probes for GPUDirect RDMA peer memory (net_ib.cc ibGdrSupportInitOnce), in its order.
inline constexpr std::string_view kPeerMemoryVersionFiles[] = {
    "/sys/module/nvidia_peermem/version", "/sys/kernel/mm/memory_peers/nv_mem/version",
    "/sys/kernel/mm/memory_peers/nv_mem_nc/version"};

// The interfaces of the IPv4 default routes (Destination and Mask 00000000) in /proc/net/route text.
std::set<std::string> ParseDefaultRouteInterfaces(std::string_view route_text);
Result<std::set<std::string>> ReadDefaultRouteInterfaces(const SysRoot& root);

// A VLAN interface's parent and id, from /proc/net/vlan/config text.
struct Vlan {
  std::string parent;
  int id = 0;
};
std::map<std::string, Vlan> ParseVlanConfig(std::string_view text);
// Empty when the file is absent (8021q not loaded) or unreadable.
std::map<std::string, Vlan> ReadVlanConfig(const SysRoot& root);

}  // namespace fabcheck::sys::procfs
