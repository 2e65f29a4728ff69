// nccl.bootstrap.interface: the interface each host's NCCL used for its
// bootstrap and socket traffic (from "Bootstrap : Using", "NET/Socket :
// Using", the NET/IB line's "OOB" and NCCL_SOCKET_IFNAME), and what kind it
// is: a container bridge, a veth, loopback, IPoIB, or an interface that does
// not exist (NCCL_SOCKET_IFNAME names nothing: "no socket interface found",
// an address of a garbage family).
#include <fmt/format.h>

#include <map>
#include <set>

#include "base/strings.h"
#include "diagnose/nccl_util.h"
#include "diagnose/rule.h"
#include "logs/nccl_catalog.h"

namespace fabcheck::diagnose {
namespace {
void Run(const Evidence& ev, std::vector<model::Diagnosis>* out);
}  // namespace

extern const Rule kNcclBootstrapInterface = {
    "nccl.bootstrap.interface", "NCCL",
    "NCCL's bootstrap or socket interface is one peers on other hosts cannot use (a container bridge, veth, "
    "loopback), IPoIB, or NCCL_SOCKET_IFNAME names an interface the host does not have",
    "Ranks exchange their addresses over the bootstrap interface: an address private to one host (docker0's "
    "172.17.0.1, a veth) makes every connection from other hosts fail or hang.",
    "Set NCCL_SOCKET_IFNAME to the interface whose addresses reach the other hosts (the same name, or a prefix, on "
    "every host), e.g. NCCL_SOCKET_IFNAME=ens or =^docker,lo,veth.",
    &Run};

namespace {

enum class Kind { kBridge, kVeth, kLoopback, kIpoib, kEthernet, kOther };

Kind KindOf(std::string_view name) {
  auto starts = [&](std::string_view p) { return StartsWith(name, p); };
  if (starts("docker") || starts("br-") || starts("cni") || starts("flannel") || starts("cali") || starts("virbr") ||
      starts("weave") || starts("kube-") || starts("cilium") || starts("podman") || starts("lxcbr") ||
      starts("vxlan") || starts("tunl") || starts("genev")) {
    return Kind::kBridge;
  }
  if (starts("veth") || starts("lxc")) return Kind::kVeth;
  if (name == "lo") return Kind::kLoopback;
  if (starts("ib") && name.size() > 2) return Kind::kIpoib;
  if (starts("eth") || starts("en") || starts("bond") || starts("team") || starts("net") || starts("mlx") ||
      starts("hsn")) {
    return Kind::kEthernet;
  }
  return Kind::kOther;
}

const char* KindText(Kind k) {
  switch (k) {
    case Kind::kBridge: return "a container or overlay bridge";
    case Kind::kVeth: return "a veth (one end of a container's pair)";
    case Kind::kLoopback: return "loopback";
    case Kind::kIpoib: return "IPoIB";
    case Kind::kEthernet: return "Ethernet";
    default: return "an interface of unknown kind";
  }
}

// "eth0:10.0.0.5<0>" -> "eth0"; "[0]eth0:..." -> "eth0".
std::string IfaceOf(std::string_view spec) {
  if (StartsWith(spec, "[")) {
    size_t close = spec.find(']');
    if (close != std::string_view::npos) spec = spec.substr(close + 1);
  }
  return std::string(spec.substr(0, spec.find(':')));
}

// NCCL_SOCKET_IFNAME's rule: "^a,b" excludes, "=a" exact, else prefixes.
bool IfnameSelects(std::string_view spec, std::string_view iface) {
  bool exclude = StartsWith(spec, "^");
  if (exclude) spec.remove_prefix(1);
  bool exact = StartsWith(spec, "=");
  if (exact) spec.remove_prefix(1);
  bool any = false;
  for (const auto& item : Split(spec, ',')) {
    std::string_view p = Trim(item);
    if (p.empty()) continue;
    if (exact ? iface == p : StartsWith(iface, p)) any = true;
  }
  return exclude ? !any : any;
}

void Run(const Evidence& ev, std::vector<model::Diagnosis>* out) {
  if (!ev.nccl) return;
  const auto& s = *ev.nccl;
  std::string ifname;
  if (auto it = s.env.find("NCCL_SOCKET_IFNAME"); it != s.env.end()) ifname = it->second;
  // host -> interface -> what used it ("bootstrap", "NET/Socket", "IB OOB").
  std::map<std::string, std::map<std::string, std::set<std::string>>> used;
  for (const auto& [host, spec] : s.bootstrap) used[host][IfaceOf(spec)].insert("bootstrap");
  for (const auto& d : s.net_devices) {
    if (d.kind == "Socket") used[d.host][d.name].insert("NET/Socket");
    if (d.kind == "IB" && StartsWith(d.address, "OOB ")) used[d.host][IfaceOf(d.address.substr(4))].insert("IB OOB");
  }
  // "no socket interface found" and kin: the catalogue's interface family.
  std::vector<const model::NcclEvent*> missing;
  const auto& catalog = logs::NcclMessageCatalog::Get();
  for (const auto* e : EventsOf(s, "warn")) {
    auto m = catalog.Classify(Field(*e, "text"), Field(*e, "source"));
    if (m.family != nullptr && m.family->id == "socket.interface") missing.push_back(e);
  }
  NetworkNeed need = NetworkNeedOf(s);
  if (!missing.empty()) {
    auto d = Make(kNcclBootstrapInterface, model::Severity::kFail, model::Confidence::kHigh,
                  ifname.empty() ? "NCCL_SOCKET_IFNAME" : "NCCL_SOCKET_IFNAME=" + ifname,
                  ifname.empty() ? "NCCL found no usable socket interface"
                                 : fmt::format("NCCL_SOCKET_IFNAME={} selects no interface NCCL could use on {}", ifname,
                                               missing.front()->host.empty() ? "this host" : missing.front()->host));
    for (const auto* e : missing) {
      if (d.evidence.size() < 3) d.evidence.push_back(Cite(*e));
    }
    if (!ifname.empty()) d.evidence.push_back("NCCL_SOCKET_IFNAME set by environment to " + ifname);
    d.causes = {"NCCL_SOCKET_IFNAME names an interface this host does not have (names differ between hosts or "
                "between the host and the container: eth0 inside a pod, ens1f0 on the host)",
                "the interface exists but has no address of the family NCCL wants (NCCL_SOCKET_FAMILY)"};
    if (ifname.empty()) d.causes.insert(d.causes.begin(), "only loopback or excluded interfaces are up in the container");
    d.fix = kNcclBootstrapInterface.fix;
    d.next = "fabcheck inventory on " + (missing.front()->host.empty() ? std::string("the host") : missing.front()->host) +
             " (its netdevs and addresses), inside the job's container";
    out->push_back(std::move(d));
  }
  for (const auto& [host, ifaces] : used) {
    for (const auto& [iface, uses] : ifaces) {
      if (iface.empty()) continue;
      Kind k = KindOf(iface);
      std::string what = Join(std::vector<std::string>(uses.begin(), uses.end()), ", ");
      bool set_by_user = !ifname.empty() && IfnameSelects(ifname, iface);
      if (!ifname.empty() && !IfnameSelects(ifname, iface) && uses.count("bootstrap")) {
        // NCCL fell back past the setting (2.5-era behaviour) or the echo belongs to another process.
        auto d = Make(kNcclBootstrapInterface, model::Severity::kWarn, model::Confidence::kMedium,
                      host + " " + iface,
                      fmt::format("{} used {} ({}) although NCCL_SOCKET_IFNAME={} does not select it", host, iface,
                                  what, ifname));
        d.evidence = {fmt::format("{}: {} {}", host, what, iface), "NCCL_SOCKET_IFNAME set by environment to " + ifname};
        d.causes = {"the variable was not set in every process (the echo came from another rank)",
                    "no interface matched it and this NCCL release picked one itself"};
        d.fix = kNcclBootstrapInterface.fix;
        d.next = "fabcheck inventory on " + host;
        out->push_back(std::move(d));
        continue;
      }
      if (k != Kind::kBridge && k != Kind::kVeth && k != Kind::kLoopback && k != Kind::kIpoib) continue;
      bool private_kind = k != Kind::kIpoib;
      model::Severity sev = model::Severity::kInfo;
      if (private_kind) sev = need == NetworkNeed::kNotNeeded ? model::Severity::kInfo : model::Severity::kWarn;
      if (private_kind && (!EventsOf(s, "socket").empty() || !EventsOf(s, "socket-retry").empty())) {
        sev = model::Severity::kFail;
      }
      auto d = Make(kNcclBootstrapInterface, sev,
                    private_kind && need != NetworkNeed::kUnknown ? model::Confidence::kHigh : model::Confidence::kMedium,
                    host + " " + iface, fmt::format("{} used {} for {}: {}", host, iface, what, KindText(k)));
      d.evidence.push_back(fmt::format("{}: {} on {}", host, what, iface));
      if (!ifname.empty()) d.evidence.push_back("NCCL_SOCKET_IFNAME set by environment to " + ifname);
      for (const auto* e : EventsOf(s, "socket")) {
        if (d.evidence.size() < 4) d.evidence.push_back(Cite(*e));
      }
      if (private_kind) {
        d.causes = {fmt::format("{}'s addresses are private to {}: ranks on other hosts cannot connect to them", iface,
                                host),
                    set_by_user ? "NCCL_SOCKET_IFNAME selects it" : "NCCL_SOCKET_IFNAME is unset and NCCL took it"};
        if (need == NetworkNeed::kNotNeeded) d.causes.insert(d.causes.begin(), "one node: harmless here");
        d.fix = kNcclBootstrapInterface.fix;
      } else {
        d.causes = {"IPoIB carries the bootstrap: it works when IPoIB is up and routed on every host, and fails "
                    "when the intended (Ethernet) network was meant; it also ties bootstrap to the IB fabric's health"};
        d.fix = "if Ethernet was meant, set NCCL_SOCKET_IFNAME to its interface on every host";
      }
      d.next = "fabcheck inventory on " + host + " (the host's netdevs and addresses); fabcheck sweep --transport tcp";
      out->push_back(std::move(d));
    }
  }
}

}  // namespace
}  // namespace fabcheck::diagnose
