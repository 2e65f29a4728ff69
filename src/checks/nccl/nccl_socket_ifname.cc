// nccl.socket-ifname: NCCL_SOCKET_IFNAME selects no usable interface, or only
// the management (default-route) interface while RDMA netdevs exist.
#include <cstring>

#include "checks/check.h"
#include "checks/facts.h"
#include "checks/nccl_match.h"
#include "sys/procfs.h"

namespace fabcheck::checks {
namespace {

// What NCCL's findInterfaces sees: interfaces with an address of the family.
bool HasAddress(const model::NetDevice& nd, const std::string& family) {
  for (const auto& a : nd.addresses) {
    if (family.empty() || a.family == family) {
      if (a.family == "inet6" && a.address == "::1") continue;  // NCCL skips IPv6 loopback
      return true;
    }
  }
  return false;
}

std::vector<const model::NetDevice*> Select(const Context& ctx, const NcclList& list, const std::string& family) {
  std::vector<const model::NetDevice*> out;
  for (const auto& nd : ctx.inventory->netdevs) {
    if (!HasAddress(nd, family)) continue;
    if (NcclSelects(list, nd.name, -1)) out.push_back(&nd);
  }
  return out;
}

void Run(const Context& ctx, Reporter& out) {
  if (!out.NeedInventory(ctx)) return;
  std::string family;
  if (auto f = ctx.env->Get("NCCL_SOCKET_FAMILY")) {
    if (f->value == "AF_INET") family = "inet";
    if (f->value == "AF_INET6") family = "inet6";
  }
  bool addresses_known = false;
  for (const auto& nd : ctx.inventory->netdevs) addresses_known |= nd.addresses_known;
  auto v = ctx.env->Get("NCCL_SOCKET_IFNAME");
  // ncclFindInterfaces ignores values of one character or less.
  if (!v || v->value.size() <= 1) {
    if (!addresses_known) {
      out.Pass("environment", "NCCL_SOCKET_IFNAME is not set (interface addresses unknown here, so NCCL's pick "
                              "cannot be predicted)");
      return;
    }
    // NCCL's default order: ib*, then anything but docker*/lo, then docker*, then lo.
    std::vector<const model::NetDevice*> chosen;
    for (const char* pattern : {"ib", "^docker,lo", "docker", "lo"}) {
      chosen = Select(ctx, ParseNcclList(pattern, kNcclMaxSocketIfs), family);
      if (!chosen.empty()) break;
    }
    std::vector<std::string> names;
    for (const auto* nd : chosen) names.push_back(nd->name);
    out.Pass("environment", "NCCL_SOCKET_IFNAME is not set: NCCL would pick " +
                                (names.empty() ? std::string("no interface") : JoinLimited(names)) +
                                " (default order: ib*, then any but docker*/lo, then docker*, then lo)");
    return;
  }
  NcclList list = ParseNcclList(v->value, kNcclMaxSocketIfs);
  std::vector<std::string> ev = {ctx.env->Describe("NCCL_SOCKET_IFNAME")};
  std::string object = "NCCL_SOCKET_IFNAME=" + v->value;
  if (!addresses_known) {
    out.Unknown(object, "interface addresses are not known in " + ctx.root->Describe() +
                            ", so the interfaces NCCL would select cannot be predicted", ev);
    return;
  }
  auto chosen = Select(ctx, list, family);
  std::vector<std::string> names, down;
  for (const auto* nd : chosen) {
    names.push_back(nd->name);
    if (nd->operstate != "up" && !(nd->operstate == "unknown" && nd->carrier.value_or(false)) && nd->name != "lo") {
      down.push_back(nd->name);
    }
  }
  std::vector<std::string> all;
  for (const auto& nd : ctx.inventory->netdevs) {
    if (HasAddress(nd, family)) all.push_back(nd.name);
  }
  ev.push_back("interfaces with an address: " + (all.empty() ? std::string("none") : JoinLimited(all, 10)));
  if (chosen.empty()) {
    out.Add(model::Severity::kFail, object,
            "matches no interface that has an address: NCCL fails at bootstrap ('no socket interface found') or, "
            "for the IB OOB, cannot start",
            ev,
            "set it to the interface the job should use (a prefix, or =name for an exact name, ^ to exclude), e.g. "
            "NCCL_SOCKET_IFNAME=" + (all.empty() ? std::string("eth0") : all.front()));
    return;
  }
  ev.push_back("NCCL would select: " + JoinLimited(names));
  if (down.size() == chosen.size()) {
    out.Add(model::Severity::kFail, object, "selects only interfaces that are down: " + JoinLimited(down), ev,
            "bring the interface up or select another one");
    return;
  }
  auto defaults = sys::procfs::ReadDefaultRouteInterfaces(*ctx.root);
  bool rdma_netdev = false;
  for (const auto& ref : ctx.Ports()) rdma_netdev |= ctx.inventory->FindNetDevice(ref.port->netdev) != nullptr;
  bool only_default = defaults.ok() && !defaults->empty();
  if (only_default) {
    for (const auto& n : names) only_default &= defaults->count(n) > 0;
  }
  if (only_default && rdma_netdev) {
    ev.push_back(std::string(sys::procfs::kNetRoute) + ": default route via " +
                 Join(std::vector<std::string>(defaults->begin(), defaults->end()), ", "));
    out.Add(model::Severity::kWarn, object,
            "selects only the management (default-route) interface " + JoinLimited(names) +
                " although RDMA netdevs exist: NCCL's bootstrap and any socket fallback run over the management "
                "network",
            ev, "point it at the cluster network (an RDMA netdev or the data-plane interface), or confirm the "
                "management network is meant for NCCL's out-of-band traffic");
    return;
  }
  out.Pass(object, "selects " + JoinLimited(names), ev);
}

}  // namespace

extern const Check kNcclSocketIfname = {
    "nccl.socket-ifname", Rung::kNccl,
    "NCCL_SOCKET_IFNAME matches no usable interface, or only the management interface",
    "NCCL bootstraps (and falls back to TCP) over the interfaces NCCL_SOCKET_IFNAME selects, by prefix: a typo "
    "fails the job at start, and the management interface carries traffic it was not sized for.",
    "Use NCCL's syntax exactly: comma-separated prefixes, '=' for exact names, '^' to exclude (e.g. "
    "NCCL_SOCKET_IFNAME==net1 or ^docker,lo).",
    &Run};

}  // namespace fabcheck::checks
