// rdma.none: a node that should move its GPU traffic over RDMA has no usable
// RDMA port (no device, driver not loaded, no ACTIVE port, or the devices not
// passed into the container). Everything above L1 then runs over TCP sockets:
// the silent fallback fabcheck exists to catch.
#include <fmt/format.h>

#include "checks/check.h"
#include "checks/container/process.h"
#include "checks/facts.h"
#include "sys/infiniband.h"
#include "sys/procfs.h"

namespace fabcheck::checks {
namespace {

constexpr std::string_view kMellanoxVendor = "0x15b3";

struct Cause {
  std::string message;  // why there is no usable RDMA port
  std::vector<std::string> evidence;
  std::string remedy;
};

// Why the node has no RDMA device at all, from what the inventory saw.
Cause NoDeviceCause(const Context& ctx) {
  const model::Inventory& inv = *ctx.inventory;
  const std::string class_dir(sys::infiniband::kClassDir);
  Cause c;
  if (inv.verbs.probed && !inv.verbs.message.empty()) c.evidence.push_back("libibverbs: " + inv.verbs.message);
  if (inv.verbs.probed && inv.verbs.error_number == 38) {
    c.message = "the kernel has no RDMA support (ibv_get_device_list: ENOSYS)";
    c.remedy = "boot a kernel built with InfiniBand/RDMA support (CONFIG_INFINIBAND) and load the NIC's RDMA driver";
    return c;
  }
  c.evidence.push_back(class_dir + (inv.rdma_sysfs_present ? " is empty" : " does not exist"));
  std::vector<std::string> mellanox, others;
  for (const auto& nic : inv.nics) {
    std::string desc = fmt::format("{} vendor {} driver {}", nic.pci.bdf, nic.pci.vendor_id,
                                   nic.pci.driver.empty() ? "(none bound)" : nic.pci.driver);
    (nic.pci.vendor_id == kMellanoxVendor ? mellanox : others).push_back(desc);
  }
  if (!mellanox.empty()) {
    c.evidence.push_back("Mellanox/NVIDIA network functions: " + JoinLimited(mellanox, 8));
    bool core_bound = false;
    for (const auto& nic : inv.nics) core_bound |= nic.pci.vendor_id == kMellanoxVendor && nic.pci.driver == "mlx5_core";
    bool ib_loaded = ctx.root->IsDirectory(sys::procfs::ModuleDir("mlx5_ib"));
    c.evidence.push_back(sys::procfs::ModuleDir("mlx5_ib") + (ib_loaded ? " exists" : " does not exist"));
    if (core_bound && !ib_loaded) {
      c.message = "the ConnectX NICs are bound to mlx5_core but the RDMA driver mlx5_ib is not loaded";
      c.remedy = "modprobe mlx5_ib (and ib_uverbs), and make them load at boot; with MLNX_OFED/DOCA: restart openibd";
    } else if (!core_bound) {
      c.message = "ConnectX NICs are on the PCI bus but no driver is bound to them";
      c.remedy = "install the NIC driver (MLNX_OFED / DOCA or the kernel's mlx5_core) and load mlx5_core and mlx5_ib; "
                 "check dmesg for firmware or probe errors";
    } else {
      c.message = "the ConnectX NICs have drivers loaded but registered no RDMA device";
      c.remedy = "check dmesg for mlx5_ib errors and the firmware (mlxfwmanager); the port may be in a mode without RDMA";
    }
    return c;
  }
  ProcessFacts process = ReadProcessFacts(*ctx.root);
  if (process.in_container) {
    c.evidence.push_back("in a container: " + process.container_evidence);
    c.message = "this container sees no RDMA device: the host's NICs (and /dev/infiniband) are not passed in";
    c.remedy = "request the RDMA resource in the pod (rdma/hca_shared_devices_a or the SR-IOV VF resource) with a "
               "Multus network for it, or run the container with --device=/dev/infiniband and the NIC's netns";
    return c;
  }
  c.evidence.push_back(others.empty() ? std::string("no network PCI function found")
                                      : "network PCI functions (none RDMA-capable): " + JoinLimited(others, 8));
  c.message = "no RDMA-capable NIC on this node (no device under " + class_dir + ")";
  c.remedy = "run GPU jobs that span nodes on machines with InfiniBand or RoCE NICs (or an RDMA-capable VF); if the "
             "NICs are there, install and load their RDMA driver (mlx5_core, mlx5_ib, ib_uverbs)";
  return c;
}

void Run(const Context& ctx, Reporter& out) {
  if (!out.NeedInventory(ctx)) return;
  const model::Inventory& inv = *ctx.inventory;
  const bool expected = ctx.RdmaExpected();
  std::string why_expected =
      ctx.tcp_intended ? "TCP is the intended transport (--expect-transport tcp or the profile's transport: tcp)"
      : ctx.profile && ctx.RdmaExpected() && !ctx.HasGpus() ? "the profile " + ctx.profile->source + " describes compute NICs"
      : ctx.HasGpus() ? std::to_string(inv.gpus.size()) + " GPU(s) on this node: traffic between nodes needs RDMA"
                      : "no GPU and no profile: nothing here expects RDMA";
  auto report = [&](std::string message, std::vector<std::string> evidence, std::string remedy) {
    evidence.push_back(why_expected);
    auto& f = out.Add(expected ? model::Severity::kFail : model::Severity::kInfo, "node", std::move(message),
                      std::move(evidence), expected ? std::move(remedy) : std::string());
    f.subject = "node";
    if (expected) f.next = "fabcheck inventory (then fabcheck doctor again)";
  };
  if (inv.rdma_devices.empty() || ctx.Ports().empty()) {
    if (!inv.rdma_devices.empty()) {  // devices, but none the profile names
      report("no RDMA device matches the profile's compute NICs (nics.devices)",
             {"RDMA devices: " + JoinLimited([&] {
                std::vector<std::string> names;
                for (const auto& d : inv.rdma_devices) names.push_back(d.name);
                return names;
              }(), 10)},
             "fix nics.devices in the profile, or the device names on the node");
      return;
    }
    Cause c = NoDeviceCause(ctx);
    report((expected ? "no usable RDMA device: " : "no RDMA device: ") + c.message, std::move(c.evidence), c.remedy);
    return;
  }
  auto active = ctx.ActivePorts();
  if (active.empty()) {
    std::vector<std::string> ev;
    for (const auto& ref : ctx.Ports()) {
      ev.push_back(fmt::format("{}: state {}, phys_state {}", ref.Label(), ref.port->state.empty() ? "?" : ref.port->state,
                               ref.port->phys_state.empty() ? "?" : ref.port->phys_state));
    }
    report("no RDMA port is ACTIVE: no RDMA traffic can leave this node", std::move(ev),
           "bring a port up: check the cable and the switch port (phys_state LinkUp), and on InfiniBand a running "
           "subnet manager (state INIT until one assigns a LID); port.down names each port");
    return;
  }
  out.Pass("node", fmt::format("{} RDMA port(s) ACTIVE on {} device(s)", active.size(), inv.rdma_devices.size()));
}

}  // namespace

extern const Check kRdmaNone = {
    "rdma.none", Rung::kL1, "A GPU node (or one whose profile describes RDMA NICs) has no usable RDMA port",
    "Without an ACTIVE RDMA port NCCL, perftest and every inference transfer fall back to TCP sockets: the job "
    "runs, at a fraction of the speed, and nothing but NCCL's INFO log says why. The cause is an L1 fact: no "
    "device, the driver not loaded, no ACTIVE port, or the devices not passed into the container.",
    "The finding names the cause: load mlx5_core/mlx5_ib/ib_uverbs, cable the port and start the subnet manager, "
    "or pass the RDMA devices into the container (device plugin resource, /dev/infiniband). Where TCP is meant "
    "(a CPU-only test bed), say so: doctor --expect-transport tcp or `transport: tcp` in the profile.",
    &Run};

}  // namespace fabcheck::checks
