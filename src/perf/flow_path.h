// Which routers each TCP data connection crosses, learnt the way Paris
// traceroute does it: probes that carry the flow's own 5-tuple (same source
// and destination address and port, same protocol), so every ECMP hash on the
// way sends them where the flow's data goes.
//
// A probe is a TCP connect() from the flow's source port with IP_TTL (IPv6:
// hop limit) t: its SYN expires at the t-th router, which answers ICMP time
// exceeded; with IP_RECVERR set the kernel queues that error on the probe
// socket with the router's address (SO_EE_OFFENDER) and ends the attempt. No
// raw socket and no privilege is needed. The flow's own socket is bound to the
// port first (SO_REUSEADDR, as are the probes), holding it, and connects only
// after the last probe, so probe and data never exist at once with one 4-tuple.
//
// Routers rate-limit ICMP (Linux: net.ipv4.icmp_ratelimit, switches: control
// plane policing): a hop that does not answer within hop_timeout is "", which
// says nothing about the path. A probe that reaches the peer (fewer routers
// than max_ttl) is reset at once and ends that flow's trace.
#pragma once

#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <string>
#include <vector>

#include "base/fd.h"
#include "base/status.h"

namespace fabcheck::perf {

struct FlowPeer {
  sockaddr_storage addr{};
  socklen_t len = 0;
  int family() const { return addr.ss_family; }
};

// The numeric address `host` (as the control connection reports it) with `port`.
Result<FlowPeer> ResolveFlowPeer(const std::string& host, int port);

// A TCP socket of the peer's family bound to an ephemeral port of any local
// address, with SO_REUSEADDR so the probes may share the port.
Result<UniqueFd> BindFlowSocket(const FlowPeer& peer);

// Connects a socket from BindFlowSocket within `timeout`; returns it blocking.
Result<UniqueFd> ConnectFlowSocket(UniqueFd fd, const FlowPeer& peer, std::chrono::milliseconds timeout,
                                   std::string_view what);

struct PathProbeOptions {
  int max_ttl = 2;                             // probe TTLs 1..max_ttl
  std::chrono::milliseconds hop_timeout{300};  // per TTL, for all flows at once
  const std::atomic<bool>* cancel = nullptr;
};

// For each local port (of sockets from BindFlowSocket): the address of the
// router that answered each TTL, hops[t-1], "" when none did in time; shorter
// than max_ttl when a probe reached the peer. Fails only when no probe socket
// can be made at all (the reason names the call).
Result<std::vector<std::vector<std::string>>> TraceFlowPaths(const FlowPeer& peer, const std::vector<int>& local_ports,
                                                             const PathProbeOptions& options);

}  // namespace fabcheck::perf
