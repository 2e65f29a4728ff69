// nccl.ib-hca: NCCL_IB_HCA names devices that do not exist, selects nothing,
// or uses a prefix that also selects other devices (mlx5_1 -> mlx5_10..19).
#include "checks/check.h"
#include "checks/facts.h"
#include "checks/nccl_match.h"

namespace fabcheck::checks {
namespace {

struct PortName {
  std::string device;
  int port;
  bool usable;  // ACTIVE, IB or Ethernet: what NCCL keeps
};

void Run(const Context& ctx, Reporter& out) {
  auto v = ctx.env->Get("NCCL_IB_HCA");
  if (!out.NeedInventory(ctx)) return;
  std::vector<PortName> ports;
  for (const auto& dev : ctx.inventory->rdma_devices) {
    for (const auto& p : dev.ports) {
      ports.push_back({dev.name, p.port,
                       p.state == "ACTIVE" && (p.link_layer == "InfiniBand" || p.link_layer == "Ethernet")});
    }
  }
  auto selected = [&](const NcclList& list) {
    std::vector<std::string> out_names;
    for (const auto& p : ports) {
      if (p.usable && NcclSelects(list, p.device, p.port)) out_names.push_back(p.device + ":" + std::to_string(p.port));
    }
    return out_names;
  };
  if (!v) {
    if (!ctx.HasRdma()) {
      out.Info("environment", "NCCL_IB_HCA is not set and the node has no RDMA device");
      return;
    }
    auto all = selected(NcclList{});
    out.Pass("environment", "NCCL_IB_HCA is not set: NCCL uses every ACTIVE port: " +
                                (all.empty() ? std::string("none") : JoinLimited(all, 8)));
    return;
  }
  std::string object = "NCCL_IB_HCA=" + v->value;
  std::vector<std::string> ev = {ctx.env->Describe("NCCL_IB_HCA")};
  std::vector<std::string> names;
  for (const auto& dev : ctx.inventory->rdma_devices) names.push_back(dev.name);
  ev.push_back("RDMA devices: " + (names.empty() ? std::string("none") : JoinLimited(names, 10)));
  NcclList list = ParseNcclList(v->value, kNcclMaxIbDevs);
  if (list.dropped > 0) {
    out.Add(model::Severity::kWarn, object,
            std::to_string(list.dropped) + " entries beyond NCCL's limit of " + std::to_string(kNcclMaxIbDevs) +
                " are ignored by NCCL",
            ev, "shorten the list (use prefixes or ^ exclusions)");
  }
  bool problems = false;
  for (const auto& entry : list.entries) {
    std::vector<std::string> hits;
    for (const auto& p : ports) {
      if (NcclEntryMatches(entry, list.exact, p.device, p.port)) hits.push_back(p.device + ":" + std::to_string(p.port));
    }
    std::string shown = entry.name + (entry.port >= 0 ? ":" + std::to_string(entry.port) : "");
    if (hits.empty()) {
      // Excluding something absent is harmless; selecting it is a typo or a missing NIC.
      out.Add(list.exclude ? model::Severity::kInfo : model::Severity::kWarn, object,
              "entry '" + shown + "' matches no RDMA device/port on this node" +
                  (list.exclude ? " (nothing to exclude)" : ": a typo, or that NIC is missing"),
              ev, list.exclude ? "" : "check the device names with `ibv_devices` / `fabcheck inventory`");
      problems |= !list.exclude;
      continue;
    }
    if (!list.exact) {
      // A prefix that also matches longer names: mlx5_1 selects mlx5_10..mlx5_19 too.
      std::vector<std::string> extra;
      for (const auto& dev : names) {
        if (dev != entry.name && StartsWith(dev, entry.name)) extra.push_back(dev);
      }
      if (!extra.empty()) {
        bool exact_exists = std::find(names.begin(), names.end(), entry.name) != names.end();
        out.Add(model::Severity::kWarn, object,
                "entry '" + shown + "' is a prefix: NCCL also " + (list.exclude ? "excludes " : "selects ") +
                    JoinLimited(extra) + (exact_exists ? "" : " (no device is named exactly " + entry.name + ")"),
                ev, "write the list with a leading '=' for exact names (e.g. NCCL_IB_HCA==" +
                        FormatNcclList(NcclList{false, false, list.entries, 0}) +
                        (list.exclude ? ", or ^=... to exclude" : "") + ")");
        problems = true;
      }
    }
  }
  auto chosen = selected(list);
  ev.push_back("NCCL would use: " + (chosen.empty() ? std::string("nothing") : JoinLimited(chosen, 10)));
  if (chosen.empty()) {
    out.Add(ctx.HasRdma() ? model::Severity::kFail : model::Severity::kWarn, object,
            "selects no ACTIVE RDMA port: NCCL finds no IB device and falls back to TCP sockets", ev,
            "name existing devices (ibv_devices), with ports that are ACTIVE");
    return;
  }
  if (!problems) out.Pass(object, "selects " + JoinLimited(chosen, 8), ev);
}

}  // namespace

extern const Check kNcclIbHca = {
    "nccl.ib-hca", Rung::kNccl,
    "NCCL_IB_HCA names devices that do not exist, selects none, or is a prefix that matches others",
    "NCCL matches NCCL_IB_HCA entries as prefixes unless the list starts with '=': mlx5_1 also selects "
    "mlx5_10..mlx5_19, and a misspelt name silently selects nothing (then NCCL uses TCP).",
    "Use '=' for exact names (NCCL_IB_HCA==mlx5_0,mlx5_1), '^' to exclude, ':<port>' for a port; check the names "
    "with ibv_devices.",
    &Run};

}  // namespace fabcheck::checks
