// k8s.nccl.gid-index-fixed: a fixed NCCL_IB_GID_INDEX over macvlan/ipvlan on a shared device.
#include "base/strings.h"
#include "k8s/rules/common.h"

namespace fabcheck::k8s::rules {
namespace {

void Check(const Context& ctx, Reporter& out) {
  for (const auto& pod : ctx.pods) {
    std::string why;
    for (const auto& ref : pod.networks) {
      const Nad* nad = ref.gke ? nullptr : ctx.index.FindNad(ref.ns.empty() ? pod.ns() : ref.ns, ref.name);
      if (nad && (nad->cni_type == "macvlan" || nad->cni_type == "ipvlan")) {
        why = "network " + nad->ns + "/" + nad->name + " is " + nad->cni_type + " on a shared HCA";
      }
    }
    for (const auto& c : pod.containers) {
      for (const auto& r : c.rdma_resources) {
        if (why.empty() && ctx.index.FindShared(r) && ctx.index.LinkTypeOf(r) != "ib") {
          why = "resource " + r + " is a shared HCA (RDMA shared device plugin) over RoCE";
        }
      }
    }
    if (why.empty()) continue;
    for (const auto& c : pod.containers) {
      const EnvVar* e = c.FindEnv("NCCL_IB_GID_INDEX");
      if (!e || !e->has_value || !ParseInt(Trim(e->value))) continue;
      out.Add(PodReport(pod, &c, e->line,
                        "fixes NCCL_IB_GID_INDEX=" + e->value + " while " + why +
                            ": every pod's address adds its own GIDs to the shared table, so the index of this "
                            "pod's RoCE v2 GID differs from pod to pod and node to node",
                        {"NCCL_IB_GID_INDEX = " + e->value, why}));
    }
  }
}

}  // namespace

const Rule& RuleNcclGidIndexFixed() {
  static const Rule kRule{
      {"k8s.nccl.gid-index-fixed", Level::kWarning, "workload", "Fixed NCCL_IB_GID_INDEX on a shared RoCE device",
       "With macvlan/ipvlan over a shared HCA, each pod's IP creates GID entries in the one GID table of the port. "
       "A fixed index (often 3, from a bare-metal howto) points at another pod's address or at a RoCE v1 or "
       "link-local GID: connections hang or cross tenants.",
       "Unset NCCL_IB_GID_INDEX (NCCL picks the RoCE v2 GID of the interface's address), or restrict the choice "
       "with NCCL_IB_ADDR_FAMILY / NCCL_IB_ADDR_RANGE (NCCL 2.21+).",
       "NVIDIA/nccl#1573, #1587; rdma-facts §4 (GID selection)", {}},
      &Check};
  return kRule;
}

}  // namespace fabcheck::k8s::rules
