// cluster.rdma-shared.hca-max: rdmaHcaMax above 63 on RoCE.
#include "k8s/rules/common.h"

namespace fabcheck::k8s::rules {
namespace {

constexpr const char* kId = "cluster.rdma-shared.hca-max";

void Check(const Context& ctx, Reporter& out) {
  long long max_roce = ctx.ParamInt(kId, "maxRoce", 63);
  for (const auto& s : ctx.index.shared()) {
    const auto& e = s.entry;
    if (!e.contains("rdmaHcaMax") || !e["rdmaHcaMax"].is_number_integer()) continue;
    long long hca_max = e["rdmaHcaMax"].get<long long>();
    std::string link = ctx.index.LinkTypeOf(s.resource_name);
    if (hca_max <= max_roce || link == "ib") continue;
    out.Add(ObjectReport(*s.source, s.line,
                         "resource " + s.resource_name + " allows rdmaHcaMax " + std::to_string(hca_max) +
                             " pods per HCA" + (link.empty() ? " and its selectors do not say InfiniBand" : " on RoCE") +
                             ": each RoCE pod's macvlan/ipvlan address takes GID entries, and past about " +
                             std::to_string(max_roce) + " pods the port's GID table is full and new pods get no GID",
                         {"rdmaHcaMax: " + std::to_string(hca_max), "linkTypes: " + (link.empty() ? "(not set)" : link)}));
  }
}

}  // namespace

const Rule& RuleRdmaSharedHcaMax() {
  static const Rule kRule{
      {kId, Level::kWarning, "cluster", "Shared RDMA device oversubscribed on RoCE (rdmaHcaMax > 63)",
       "The RDMA shared device plugin advertises rdmaHcaMax units per HCA. On RoCE each pod's address adds GIDs "
       "(RoCE v1 and v2, IPv4 and IPv6 link-local) to the port's GID table, which holds a limited number; the "
       "Network Operator lowered its default to 63 for this reason. Beyond it, pods start but RDMA connections "
       "fail.",
       "Set rdmaHcaMax to 63 or less for RoCE resources; keep large values for InfiniBand only (and say so with "
       "selectors.linkTypes: [\"infiniband\"]).",
       "Mellanox/network-operator PR #580, #425",
       {{"maxRoce", "int", "63", "largest rdmaHcaMax accepted for RoCE"}}},
      &Check};
  return kRule;
}

}  // namespace fabcheck::k8s::rules
