// nccl.net-gdr-level: NCCL_NET_GDR_LEVEL disables GPUDirect RDMA for the
// node's GPU-NIC distances.
#include <map>

#include "checks/check.h"
#include "checks/facts.h"

namespace fabcheck::checks {
namespace {

// ncclGetLevel (src/graph/paths.cc): exact path-type names up to SYS, else a
// leading digit means the old numbering 0..5 -> LOC, PIX, PXB, PHB, SYS, SYS.
std::optional<int> ParseLevel(const std::string& s) {
  for (int i = 0; i <= kPathSys; ++i) {
    if (s == NcclPathName(i)) return i;
  }
  if (!s.empty() && s[0] >= '0' && s[0] <= '9') {
    static const int kOldToNew[] = {kPathLoc, kPathPix, kPathPxb, kPathPhb, kPathSys, kPathSys};
    long old = std::strtol(s.c_str(), nullptr, 0);
    if (old > 5) old = 5;
    if (old < 0) old = 0;
    return kOldToNew[old];
  }
  return std::nullopt;
}

void Run(const Context& ctx, Reporter& out) {
  if (!out.NeedInventory(ctx)) return;
  auto v = ctx.env->Get("NCCL_NET_GDR_LEVEL");
  if (!v) {
    if (auto legacy = ctx.env->Get("NCCL_IB_GDR_LEVEL")) {
      out.Add(model::Severity::kInfo, "NCCL_IB_GDR_LEVEL", "NCCL_IB_GDR_LEVEL is the old name; current NCCL reads NCCL_NET_GDR_LEVEL and "
                                    "ignores it", {ctx.env->Describe("NCCL_IB_GDR_LEVEL")},
               "rename it to NCCL_NET_GDR_LEVEL");
      return;
    }
    out.Pass("environment", "NCCL_NET_GDR_LEVEL is not set: NCCL's default (PXB in 2.23) applies");
    return;
  }
  std::string object = "NCCL_NET_GDR_LEVEL=" + v->value;
  std::vector<std::string> ev = {ctx.env->Describe("NCCL_NET_GDR_LEVEL")};
  auto level = ParseLevel(v->value);
  if (!level) {
    out.Add(model::Severity::kWarn, object,
            "not a level NCCL knows (LOC, NVL, NVB, PIX, PXB, PXN, PHB, SYS, case-sensitive, or 0-5): NCCL ignores it",
            ev, "use one of PIX, PXB, PHB, SYS");
    return;
  }
  ev.push_back(std::string("NCCL reads it as ") + NcclPathName(*level) + " (" + std::to_string(*level) + ")");
  if (!ctx.HasGpus() || !ctx.HasRdma()) {
    out.Info(object, "no GPU-NIC pair on this node to judge it against", ev);
    return;
  }
  std::vector<std::string> disabled, enabled;
  for (const auto& n : NearestRdmaNics(ctx)) {
    if (!n.gpu || n.nics.empty()) continue;
    auto path = NcclPathFor(n.distance);
    if (!path) continue;
    std::string pair = "GPU" + std::to_string(n.gpu->index) + "->" + n.nics.front()->label + " " +
                       std::string(model::PathTypeName(n.distance)) + "=" + NcclPathName(*path);
    (*path > *level ? disabled : enabled).push_back(pair);
  }
  if (!disabled.empty()) {
    ev.push_back("GPU -> nearest NIC (nvidia-smi class = NCCL path): " + JoinLimited(disabled, 8));
    out.Add(model::Severity::kWarn, object,
            "disables GPUDirect RDMA for " + std::to_string(disabled.size()) + " GPU(s): their nearest NIC is farther "
            "than " + NcclPathName(*level) + ", so NCCL stages their traffic through host memory",
            ev,
            "unset it (default PXB) or raise it to the GPUs' distance; NCCL's log shows 'GPU Direct RDMA Disabled for "
            "GPU ... (distance d > l)'");
  } else if (!enabled.empty()) {
    out.Pass(object, "allows GPUDirect RDMA for every GPU's nearest NIC: " + JoinLimited(enabled, 8), ev);
  } else {
    out.Unknown(object, "GPU-NIC distances are unknown", ev);
  }
}

}  // namespace

extern const Check kNcclNetGdrLevel = {
    "nccl.net-gdr-level", Rung::kNccl, "NCCL_NET_GDR_LEVEL disables GPUDirect RDMA for this node's GPU-NIC distances",
    "NCCL uses GPUDirect RDMA only when the GPU-NIC path is at most NCCL_NET_GDR_LEVEL; a level below the node's "
    "topology (e.g. PIX where NICs are PXB) silently stages every transfer through host memory.",
    "Unset it, or set it to at least the GPU-NIC class shown by `fabcheck inventory --matrix` (NODE counts as PHB).",
    &Run};

}  // namespace fabcheck::checks
