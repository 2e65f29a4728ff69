// nccl.gid-index: NCCL_IB_GID_INDEX points at an empty, link-local or RoCE v1 GID.
#include "checks/check.h"
#include "checks/facts.h"
#include "checks/nccl_match.h"

namespace fabcheck::checks {
namespace {

void Run(const Context& ctx, Reporter& out) {
  auto v = ctx.env->Get("NCCL_IB_GID_INDEX");
  if (!out.NeedInventory(ctx)) return;
  // The ports NCCL would use (NCCL_IB_HCA applies first).
  NcclList hca;
  if (auto h = ctx.env->Get("NCCL_IB_HCA")) hca = ParseNcclList(h->value, kNcclMaxIbDevs);
  std::vector<Context::PortRef> roce;
  for (const auto& ref : ctx.RocePorts()) {
    if (ref.port->state == "ACTIVE" && NcclSelects(hca, ref.device->name, ref.port->port)) roce.push_back(ref);
  }
  if (!v) {
    std::vector<std::string> picks;
    for (const auto& ref : roce) {
      picks.push_back(ref.Label() + ": " + (ref.port->nccl_gid_index ? std::to_string(*ref.port->nccl_gid_index)
                                                                     : std::string("none (see roce.gid.no-v2)")));
    }
    out.Pass("environment", "NCCL_IB_GID_INDEX is not set: NCCL picks the RoCE v2 IPv4 GID per port" +
                                (picks.empty() ? std::string() : ": " + JoinLimited(picks, 8)));
    return;
  }
  std::string object = "NCCL_IB_GID_INDEX=" + v->value;
  std::vector<std::string> ev = {ctx.env->Describe("NCCL_IB_GID_INDEX")};
  // NCCL_PARAM parses with strtoll(..., 0) and rejects trailing garbage (keeping the default, -1).
  char* end = nullptr;
  long long index = std::strtoll(v->value.c_str(), &end, 0);
  if (v->value.empty() || (end && *end != '\0')) {
    out.Add(model::Severity::kWarn, object, "not an integer: NCCL ignores it and picks the GID itself", ev,
            "remove it, or set a number");
    return;
  }
  if (index < 0) {
    out.Pass(object, "negative: NCCL picks the GID itself", ev);
    return;
  }
  if (roce.empty()) {
    out.Info(object, "no ACTIVE RoCE port selected on this node: NCCL_IB_GID_INDEX only applies to RoCE "
                     "(InfiniBand ports use GID 0)", ev);
    return;
  }
  std::vector<std::string> good;
  for (const auto& ref : roce) {
    const model::GidEntry* entry = nullptr;
    for (const auto& g : ref.port->gids) {
      if (g.index == index) entry = &g;
    }
    std::string path = ref.Files().Gid(std::to_string(index));
    std::string best = ref.port->nccl_gid_index ? std::to_string(*ref.port->nccl_gid_index) : "none";
    std::string remedy = "unset NCCL_IB_GID_INDEX and let NCCL pick the RoCE v2 IPv4 GID (here: index " + best +
                         "); GID order differs between nodes, so a fixed index is fragile";
    if (!entry) {
      out.Add(model::Severity::kFail, ref.Label(),
              "GID index " + std::to_string(index) + " is empty on this port: connections fail", {path + " = (empty)", ev[0]},
              remedy);
    } else if (entry->link_local) {
      out.Add(model::Severity::kFail, ref.Label(),
              "GID index " + std::to_string(index) + " is the link-local " + entry->gid +
                  ": not routable, and NCCL's own selection would never use it",
              {Evidence(path, entry->gid), ev[0]}, remedy);
    } else if (entry->type == "IB/RoCE v1") {
      out.Add(model::Severity::kWarn, ref.Label(),
              "GID index " + std::to_string(index) + " is a RoCE v1 entry (" + entry->ip +
                  "): works only within one L2 segment and carries no DSCP/ECN",
              {Evidence(path, entry->gid), Evidence(ref.Files().GidType(std::to_string(index)), entry->type),
               ev[0]},
              remedy);
    } else {
      good.push_back(ref.Label() + ": " + (entry->ip.empty() ? entry->gid : entry->ip) + " " + entry->type);
    }
  }
  if (!good.empty()) out.Pass(object, "points at a usable GID on " + JoinLimited(good, 8), ev);
}

}  // namespace

extern const Check kNcclGidIndex = {
    "nccl.gid-index", Rung::kNccl, "NCCL_IB_GID_INDEX points at an empty, link-local or RoCE v1 GID",
    "NCCL uses a set NCCL_IB_GID_INDEX as-is on RoCE ports; the GID table order depends on when addresses were "
    "added, so a hard-coded 3 can name an empty, link-local or RoCE v1 entry on some nodes.",
    "Leave NCCL_IB_GID_INDEX unset (NCCL >= 2.21 picks the RoCE v2 IPv4 GID), or verify the index on every node.",
    &Run};

}  // namespace fabcheck::checks
