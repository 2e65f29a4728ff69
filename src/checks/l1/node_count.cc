// node.count: the node has a different number of GPUs or compute RDMA NICs
// than its profile says (a GPU fell off the bus, a NIC is missing or disabled).
#include "checks/check.h"
#include "checks/facts.h"

namespace fabcheck::checks {
namespace {

void Run(const Context& ctx, Reporter& out) {
  if (!out.NeedInventory(ctx)) return;
  if (!ctx.profile || (!ctx.profile->gpu_count && !ctx.profile->nic_count)) {
    out.Info("node", std::to_string(ctx.inventory->gpus.size()) + " GPU(s), " +
                         std::to_string(ctx.inventory->rdma_devices.size()) +
                         " RDMA device(s); no profile counts to compare with (--profile)");
    return;
  }
  const Profile& p = *ctx.profile;
  if (p.gpu_count) {
    int have = static_cast<int>(ctx.inventory->gpus.size());
    std::vector<std::string> ev = {"GPUs found (PCI class 0x0302/0x0300, vendor 0x10de): " + std::to_string(have),
                                   "profile " + p.source + ": gpus.count = " + std::to_string(*p.gpu_count)};
    if (have != *p.gpu_count) {
      out.Add(have < *p.gpu_count ? model::Severity::kFail : model::Severity::kWarn, "node",
              std::to_string(have) + " GPU(s) on the PCI bus, the profile expects " + std::to_string(*p.gpu_count),
              ev,
              have < *p.gpu_count ? "a GPU fell off the bus (Xid 79) or is disabled: check dmesg and nvidia-smi; "
                                    "reseat or replace it"
                                  : "check that the profile matches this machine type");
    } else {
      out.Pass("node", std::to_string(have) + " GPUs, as the profile expects", ev);
    }
  }
  if (p.nic_count) {
    std::vector<std::string> names;
    for (const auto& dev : ctx.inventory->rdma_devices) {
      if (p.IsComputeNic(dev.name)) names.push_back(dev.name);
    }
    int have = static_cast<int>(names.size());
    std::vector<std::string> ev = {"compute RDMA devices: " + (names.empty() ? std::string("none") : JoinLimited(names, 10)),
                                   "profile " + p.source + ": nics.count = " + std::to_string(*p.nic_count)};
    if (have != *p.nic_count) {
      out.Add(have < *p.nic_count ? model::Severity::kFail : model::Severity::kWarn, "node",
              std::to_string(have) + " compute RDMA device(s), the profile expects " + std::to_string(*p.nic_count), ev,
              have < *p.nic_count ? "a NIC is missing, disabled, or its driver (mlx5_core/mlx5_ib) did not bind: check "
                                    "lspci, dmesg and the firmware; in a container, the device plugin decides what is "
                                    "visible"
                                  : "check the profile (nics.count, nics.devices)");
    } else {
      out.Pass("node", std::to_string(have) + " compute RDMA devices, as the profile expects", ev);
    }
  }
}

}  // namespace

extern const Check kNodeCount = {
    "node.count", Rung::kL1, "The node has fewer (or more) GPUs or compute RDMA NICs than its profile",
    "A GPU that fell off the bus or a NIC whose driver did not bind leaves a node that still boots and runs jobs, "
    "with one rail less.",
    "Compare lspci, nvidia-smi and ibv_devices with the machine type; check dmesg for Xid/AER errors and driver "
    "binding. Only checked with a profile (gpus.count, nics.count).",
    &Run};

}  // namespace fabcheck::checks
