// nccl.bootstrap.connect: socket connections between ranks failed (bootstrap, OOB, NET/Socket),
// or NCCL said "remote process exited or there was a network error".
#include <fmt/format.h>

#include <map>

#include "diagnose/nccl_util.h"
#include "diagnose/rule.h"

namespace fabcheck::diagnose {
namespace {
void Run(const Evidence& ev, std::vector<model::Diagnosis>* out);
}  // namespace

extern const Rule kNcclBootstrapConnect = {
    "nccl.bootstrap.connect", "NCCL",
    "A rank could not connect to (or lost) another rank's socket: connection refused / timed out / closed, or "
    "\"remote process exited or there was a network error\"",
    "NCCL's bootstrap and its IB out-of-band exchange run over TCP on the interface NCCL_SOCKET_IFNAME selects. "
    "Refused means nothing listens at that address (the rank died or never started); timed out means a firewall "
    "or an unreachable address (wrong interface: docker0, a management network, a pod IP without a route).",
    "Name the interface: NCCL_SOCKET_IFNAME=<the data or management interface every node can reach>; open the "
    "ports between nodes; make sure every rank started (the launcher's and the peer's own log).",
    &Run};

namespace {

void Run(const Evidence& ev, std::vector<model::Diagnosis>* out) {
  if (!ev.nccl) return;
  const auto& s = *ev.nccl;
  std::map<std::string, std::vector<const model::NcclEvent*>> by_error;
  std::vector<std::string> order;
  for (const auto* e : EventsOf(s, "socket")) {
    std::string key = Field(*e, "op") + "|" + Field(*e, "errno") + Field(*e, "error") + "|" + Field(*e, "peer_ip");
    if (!by_error.count(key)) order.push_back(key);
    by_error[key].push_back(e);
  }
  for (const auto& key : order) {
    if (out->size() > 200) break;
    const auto& events = by_error[key];
    const auto& e = *events.front();
    std::string err = Field(e, "errno"), text = Field(e, "error"), addr = Field(e, "addr");
    std::string member = ev.MemberOf(Field(e, "peer_ip"));
    std::string peer = member.empty() || member == Field(e, "peer_ip") ? addr : member + " (" + addr + ")";
    std::string iface = BootstrapInterface(s, e.host);
    std::string host = e.host.empty() ? "a rank" : e.host;
    auto d = Make(kNcclBootstrapConnect, model::Severity::kFail, model::Confidence::kHigh,
                  fmt::format("{} -> {}", host, addr.empty() ? "peer" : addr),
                  fmt::format("{} {} {}: {}{}", host, Field(e, "op") == "closed" ? "lost its connection to" :
                                                     Field(e, "op") == "connect" ? "could not connect to" : "failed on",
                              peer.empty() ? addr : peer, text,
                              iface.empty() ? "" : fmt::format(" (NCCL bootstrapped on {})", iface)));
    for (const auto* x : events) {
      if (d.evidence.size() >= 4) break;
      d.evidence.push_back(Cite(*x));
    }
    if (auto b = s.bootstrap.find(e.host); b != s.bootstrap.end()) {
      d.evidence.push_back(fmt::format("{}: Bootstrap : Using {}", e.host, b->second));
    }
    if (auto i = s.env.find("NCCL_SOCKET_IFNAME"); i != s.env.end()) {
      d.evidence.push_back("NCCL_SOCKET_IFNAME set by environment to " + i->second);
    }
    if (err == "ECONNREFUSED") {
      d.causes = {fmt::format("nothing listens at {}: that rank died or never started (look at its own log first)",
                              addr),
                  "the peer listens on another address: NCCL_SOCKET_IFNAME picks different interfaces on the two "
                  "nodes",
                  "a firewall that rejects (REJECT) the port range"};
    } else if (err == "ETIMEDOUT" || err == "EHOSTUNREACH" || err == "ENETUNREACH") {
      d.causes = {fmt::format("{} is not reachable from {}: NCCL bootstrapped on the wrong interface{} (docker0, "
                              "a management or link-local network, a pod IP without a route)",
                              addr, host, iface.empty() ? "" : " (" + iface + ")"),
                  "a firewall or security group that drops the TCP ports between nodes",
                  "the peer node is down or partitioned"};
    } else if (Field(e, "op") == "closed" || err == "ECONNRESET" || err == "ECONNABORTED") {
      d.causes = {"the peer process exited (crash, OOM kill, watchdog abort): its own log has the first error",
                  "a network problem cut the TCP connection (link flap on the bootstrap interface)"};
    } else {
      d.causes = {"the peer rank is not reachable on the bootstrap interface", "a firewall between the nodes"};
    }
    d.fix = kNcclBootstrapConnect.fix;
    std::string peer_member = ev.MemberOf(Field(e, "peer_ip"));
    d.next = fmt::format("rung L2 between {} and {}: ping / nc to {} from {}; fabcheck doctor --only L2 on both; "
                         "set NCCL_SOCKET_IFNAME to an interface both can reach",
                         host, peer_member.empty() ? Field(e, "peer_ip") : peer_member, Field(e, "peer_ip"), host);
    out->push_back(std::move(d));
  }
  auto gone = EventsOf(s, "peer-gone");
  auto store = EventsOf(s, "store-timeout");
  if (!gone.empty()) {
    auto d = Make(kNcclBootstrapConnect, model::Severity::kFail, model::Confidence::kMedium, "NCCL",
                  "NCCL reported \"remote process exited or there was a network error\" (ncclRemoteError)");
    for (const auto* e : gone) {
      if (d.evidence.size() >= 4) break;
      d.evidence.push_back(Cite(*e));
    }
    d.causes = {"another rank died first: its log has the first error (crash, OOM, Xid)",
                "an RDMA completion error on the path (see nccl.ib.wc-error if present)",
                "a socket connection lost between ranks"};
    d.fix = "find the first error across every rank's log: pass all of them to fabcheck diagnose";
    d.next = "fabcheck diagnose <every rank's log>";
    out->push_back(std::move(d));
  }
  for (const auto* e : store) {
    auto d = Make(kNcclBootstrapConnect, model::Severity::kFail, model::Confidence::kHigh, "rendezvous store",
                  fmt::format("only {} of {} ranks joined the rendezvous store in {} s", Field(*e, "joined"),
                              Field(*e, "world"), Field(*e, "seconds")));
    d.evidence.push_back(Cite(*e));
    d.causes = {"the missing ranks never started (scheduling, image pull, crash at start)",
                "they cannot reach MASTER_ADDR:MASTER_PORT (firewall, wrong address)"};
    d.fix = "check that every rank started and can reach MASTER_ADDR:MASTER_PORT";
    out->push_back(std::move(d));
  }
}

}  // namespace
}  // namespace fabcheck::diagnose
