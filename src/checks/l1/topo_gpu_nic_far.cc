// topo.gpu-nic.far: a GPU whose nearest RDMA NIC is reachable only through the
// CPU interconnect (nvidia-smi class NODE or SYS).
#include "checks/check.h"
#include "checks/facts.h"

namespace fabcheck::checks {
namespace {

void Run(const Context& ctx, Reporter& out) {
  if (!out.NeedInventory(ctx)) return;
  if (ctx.inventory->gpus.empty() || !ctx.HasRdma()) {
    out.Info("node", ctx.inventory->gpus.empty() ? "no GPU on this node, no GPU-NIC distance to check"
                                                 : "no RDMA NIC on this node, no GPU-NIC distance to check");
    return;
  }
  std::vector<std::string> good;
  for (const auto& n : NearestRdmaNics(ctx)) {
    std::string gpu = n.gpu ? "GPU" + std::to_string(n.gpu->index) + " (" + n.gpu->pci.bdf + ")" : "GPU";
    if (n.nics.empty()) {
      out.Unknown(gpu, "no GPU-NIC distance is known for this GPU (its PCIe path could not be read)");
      continue;
    }
    std::vector<std::string> names;
    for (const auto* nic : n.nics) names.push_back(nic->label);
    std::string dist(model::PathTypeName(n.distance));
    std::vector<std::string> ev = {"nearest RDMA NIC(s): " + JoinLimited(names) + " at " + dist,
                                   n.gpu ? "GPU PCIe root: " + n.gpu->pci.root_complex + ", NUMA " +
                                               (n.gpu->pci.numa_node ? std::to_string(*n.gpu->pci.numa_node) : "?")
                                         : std::string()};
    if (n.distance == model::PathType::kSys) {
      out.Add(model::Severity::kFail, gpu,
              "nearest RDMA NIC is on the other CPU socket (SYS): every transfer crosses the inter-socket link and "
              "NCCL disables GPUDirect RDMA for it by default",
              ev,
              "move a NIC (or the GPU) so each GPU has a NIC below the same PCIe switch or at least the same socket; "
              "check the slot map of the machine type");
    } else if (n.distance == model::PathType::kNode) {
      out.Add(model::Severity::kWarn, gpu,
              "nearest RDMA NIC hangs off another host bridge of the same CPU (NODE): traffic crosses the CPU and "
              "NCCL's default NCCL_NET_GDR_LEVEL (PXB) disables GPUDirect RDMA for it",
              ev,
              "on machines built this way (one root port per slot) this is the best possible placement and "
              "NCCL_NET_GDR_LEVEL=PHB enables GPUDirect; otherwise move the NIC next to the GPU");
    } else {
      good.push_back("GPU" + std::to_string(n.gpu ? n.gpu->index : 0) + "->" + names.front() + " " + dist);
    }
  }
  if (!good.empty()) out.Pass("node", "GPUs with a near RDMA NIC: " + JoinLimited(good, 8));
}

}  // namespace

extern const Check kTopoGpuNicFar = {
    "topo.gpu-nic.far", Rung::kL1, "A GPU's nearest RDMA NIC is only reachable through the CPU (NODE or SYS)",
    "GPUDirect RDMA moves data between the GPU and the NIC over PCIe; through the CPU (and across sockets) it is "
    "slow or disabled by NCCL, so that GPU's traffic is staged in host memory.",
    "Place each GPU's NIC below the same PCIe switch (PIX/PXB), as the machine type's slot map intends; "
    "`fabcheck inventory --matrix` shows the GPU x NIC classes.",
    &Run};

}  // namespace fabcheck::checks
