// roce.gid.no-v2: a RoCE port has no RoCE v2 IPv4 GID.
#include "checks/check.h"
#include "checks/facts.h"

namespace fabcheck::checks {
namespace {

void Run(const Context& ctx, Reporter& out) {
  if (!out.NeedRdma(ctx)) return;
  auto ports = ctx.RocePorts();
  if (ports.empty()) {
    out.Pass("node", "no RoCE port (InfiniBand only): nothing to check");
    return;
  }
  std::vector<std::string> good;
  for (const auto& ref : ports) {
    const auto& gids = ref.port->gids;
    std::vector<std::string> table;
    bool types_known = false;
    const model::GidEntry* v2 = nullptr;
    for (const auto& g : gids) {
      table.push_back(std::to_string(g.index) + " " + (g.ip.empty() ? g.gid : g.ip) + " " +
                      (g.type.empty() ? "?" : g.type) + (g.netdev.empty() ? "" : " " + g.netdev));
      if (!g.type.empty()) types_known = true;
      if (!v2 && g.type == "RoCE v2" && g.ipv4 && !g.link_local) v2 = &g;
    }
    const sys::infiniband::PortFiles files = ref.Files();
    if (v2) {
      good.push_back(ref.Label() + " index " + std::to_string(v2->index) + " (" + v2->ip + ")");
      continue;
    }
    if (!gids.empty() && !types_known) {
      out.Unknown(ref.Label(), "GID types could not be read (" + files.GidType("*") + ")",
                  {"GIDs: " + JoinLimited(table, 8)});
      continue;
    }
    out.Add(model::Severity::kFail, ref.Label(),
            gids.empty() ? "the port's GID table is empty: no RoCE traffic is possible"
                         : "no RoCE v2 GID with an IPv4 address: routable RoCE (and NCCL's default GID choice) "
                           "has nothing to use",
            {"GID table (" + files.Gids() + ", " + std::string(sys::infiniband::kGidTypesRel) + ", " +
                 std::string(sys::infiniband::kGidNdevsRel) + "): " +
             (table.empty() ? std::string("empty") : JoinLimited(table, 8))},
            "give the port's netdev an IPv4 address (the kernel then adds RoCE v1 and v2 GIDs for it); if only "
            "v1 entries appear, the RoCE mode is restricted: check `cma_roce_mode` / the driver's RoCE v2 support");
  }
  if (!good.empty()) out.Pass("node", "RoCE v2 IPv4 GIDs: " + JoinLimited(good, 8));
}

}  // namespace

extern const Check kRoceGidNoV2 = {
    "roce.gid.no-v2", Rung::kL2, "A RoCE port has no RoCE v2 IPv4 GID",
    "RoCE v2 (UDP/IP) is the routable RoCE a data-centre fabric needs, and the only version that carries "
    "DSCP/ECN end to end; NCCL picks a RoCE v2 IPv4 GID by default and fails over to nothing when there is none.",
    "Give the netdev an IPv4 address; the kernel creates both RoCE v1 and v2 GIDs for each address. "
    "`show_gids` lists the table.",
    &Run};

}  // namespace fabcheck::checks
