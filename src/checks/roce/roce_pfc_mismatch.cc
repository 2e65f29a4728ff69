// roce.pfc.mismatch: the node's RoCE netdevs have PFC on different priorities.
#include <map>

#include "checks/roce/qos.h"

namespace fabcheck::checks {
namespace {

void Run(const Context& ctx, Reporter& out) {
  if (!out.NeedRdma(ctx)) return;
  auto netdevs = ReadRoceNetdevs(ctx);
  std::map<std::string, std::vector<std::string>> by_setting;
  std::vector<std::string> unknown;
  for (const auto& r : netdevs) {
    if (!r.dcb.ok() || !r.dcb->pfc_en) {
      unknown.push_back(r.netdev.empty() ? r.Object() : r.netdev);
      continue;
    }
    by_setting[r.dcb->PfcPriorities()].push_back(r.netdev);
  }
  if (netdevs.empty()) {
    out.Pass("node", "no RoCE port: nothing to compare");
    return;
  }
  if (by_setting.size() > 1) {
    std::vector<std::string> ev;
    for (const auto& [prios, names] : by_setting) ev.push_back("PFC on " + prios + ": " + JoinLimited(names));
    out.Add(model::Severity::kFail, "node", "the RoCE netdevs of this node have PFC on different priorities", ev,
            "configure the same PFC priorities on every RoCE netdev (and switch port) of the node, e.g. dcb pfc set "
            "dev <if> prio-pfc 3:on on each");
  } else if (by_setting.size() == 1 && by_setting.begin()->second.size() > 1) {
    out.Pass("node", std::to_string(by_setting.begin()->second.size()) + " RoCE netdevs agree: PFC on " +
                         by_setting.begin()->first);
  }
  if (!unknown.empty() && out.count() == 0) {
    out.Unknown("node", "PFC state unknown for " + JoinLimited(unknown) + " (see roce.pfc.off for why)");
  } else if (out.count() == 0) {
    out.Pass("node", "only one RoCE netdev with known PFC state: nothing to compare");
  }
}

}  // namespace

extern const Check kRocePfcMismatch = {
    "roce.pfc.mismatch", Rung::kRoce, "PFC priorities differ between the node's RoCE netdevs",
    "Every rail must put RoCE traffic in the same lossless class; a rail with PFC on another priority is lossy "
    "for the traffic NCCL sends (NCCL_IB_TC is one value for all NICs).",
    "Apply one QoS configuration to all RoCE netdevs (dcb pfc / mlnx_qos), the same as the switches.", &Run};

}  // namespace fabcheck::checks
