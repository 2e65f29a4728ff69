// topo.rail.unbalanced: several GPUs must share one nearest NIC while another
// RDMA NIC is nearest to no GPU.
#include <functional>
#include <map>

#include "checks/check.h"
#include "checks/facts.h"

namespace fabcheck::checks {
namespace {

void Run(const Context& ctx, Reporter& out) {
  if (!out.NeedInventory(ctx)) return;
  if (ctx.inventory->gpus.empty() || !ctx.HasRdma()) {
    out.Info("node", "needs GPUs and RDMA NICs; this node has " + std::to_string(ctx.inventory->gpus.size()) +
                         " GPU(s) and " + std::to_string(ctx.inventory->rdma_devices.size()) + " RDMA device(s)");
    return;
  }
  auto nearest = NearestRdmaNics(ctx);
  // All RDMA NICs of the matrix, and which GPUs have each as a nearest NIC.
  std::vector<const model::Nic*> nics;
  for (const auto& label : ctx.inventory->topology.nics) {
    const auto* nic = ctx.inventory->FindNic(label);
    if (nic && IsCheckedRdmaNic(ctx, *nic)) nics.push_back(nic);
  }
  std::map<const model::Nic*, int> index;
  for (size_t i = 0; i < nics.size(); ++i) index[nics[i]] = static_cast<int>(i);
  // Maximum matching of GPUs to distinct nearest NICs (augmenting paths;
  // 8x8 at most in practice). If it is smaller than it could be while a NIC
  // is left without GPU, some GPUs are forced to share: a placement fault,
  // not a choice.
  std::vector<int> match_nic(nics.size(), -1);
  std::function<bool(size_t, std::vector<bool>&)> augment = [&](size_t g, std::vector<bool>& seen) {
    for (const auto* nic : nearest[g].nics) {
      int c = index.count(nic) ? index[nic] : -1;
      if (c < 0 || seen[c]) continue;
      seen[c] = true;
      if (match_nic[c] < 0 || augment(static_cast<size_t>(match_nic[c]), seen)) {
        match_nic[c] = static_cast<int>(g);
        return true;
      }
    }
    return false;
  };
  size_t matched = 0;
  for (size_t g = 0; g < nearest.size(); ++g) {
    std::vector<bool> seen(nics.size(), false);
    if (augment(g, seen)) ++matched;
  }
  size_t possible = std::min(nearest.size(), nics.size());
  std::map<const model::Nic*, std::vector<std::string>> users;
  for (const auto& n : nearest) {
    for (const auto* nic : n.nics) users[nic].push_back("GPU" + std::to_string(n.gpu ? n.gpu->index : 0));
  }
  std::vector<std::string> idle, crowded;
  for (const auto* nic : nics) {
    if (users[nic].empty()) idle.push_back(nic->label);
    if (users[nic].size() > 1) crowded.push_back(nic->label + " <- " + Join(users[nic], ","));
  }
  if (matched < possible && !idle.empty()) {
    out.Add(model::Severity::kWarn, "node",
            "GPUs must share a NIC while " + JoinLimited(idle) + " is nearest to no GPU: " + std::to_string(matched) +
                " of " + std::to_string(nearest.size()) + " GPUs can have their own nearest NIC",
            {"nearest NIC per GPU: " + JoinLimited(crowded, 8), "NICs nearest to no GPU: " + JoinLimited(idle)},
            "a NIC probably sits in the wrong slot (or a GPU-side NIC is missing/disabled); compare "
            "`fabcheck inventory --matrix` with the machine type's slot map");
    return;
  }
  out.Pass("node", std::to_string(matched) + " of " + std::to_string(nearest.size()) +
                       " GPUs have a nearest RDMA NIC of their own (" + std::to_string(nics.size()) + " RDMA NICs)");
}

}  // namespace

extern const Check kTopoRailUnbalanced = {
    "topo.rail.unbalanced", Rung::kL1, "Several GPUs must share one NIC while another NIC serves none",
    "In a rail-optimised node each GPU uses its own nearest NIC; if two GPUs crowd one NIC while another idles, "
    "those GPUs get half the network bandwidth and all-reduce runs at the speed of the crowded rail.",
    "Check the slot map (a NIC in the wrong slot, a missing or disabled NIC); `fabcheck inventory --matrix` shows "
    "the GPU x NIC classes and the pairing.",
    &Run};

}  // namespace fabcheck::checks
