#include "perf/flow_path.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/errqueue.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

#include "perf/socket.h"

namespace fabcheck::perf {
namespace {

std::string AddressOf(const sockaddr* sa) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (sa->sa_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(sa)->sin_addr, buf, sizeof buf);
  } else if (sa->sa_family == AF_INET6) {
    const auto* a6 = reinterpret_cast<const sockaddr_in6*>(sa);
    if (IN6_IS_ADDR_V4MAPPED(&a6->sin6_addr)) {
      inet_ntop(AF_INET, &a6->sin6_addr.s6_addr[12], buf, sizeof buf);
    } else {
      inet_ntop(AF_INET6, &a6->sin6_addr, buf, sizeof buf);
    }
  }
  return buf;
}

// Any local address, port `port`, in the peer's family.
sockaddr_storage AnyAddress(int family, int port, socklen_t* len) {
  sockaddr_storage ss{};
  if (family == AF_INET6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
    a->sin6_family = AF_INET6;
    a->sin6_addr = in6addr_any;
    a->sin6_port = htons(static_cast<uint16_t>(port));
    *len = sizeof *a;
  } else {
    auto* a = reinterpret_cast<sockaddr_in*>(&ss);
    a->sin_family = AF_INET;
    a->sin_addr.s_addr = htonl(INADDR_ANY);
    a->sin_port = htons(static_cast<uint16_t>(port));
    *len = sizeof *a;
  }
  return ss;
}

Result<UniqueFd> ProbeSocket(const FlowPeer& peer, int port, int ttl) {
  const int family = peer.family();
  UniqueFd fd(::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return ErrnoError(errno, "path probe: socket");
  const int one = 1;
  const bool v6 = family == AF_INET6;
  if (::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
      ::setsockopt(fd.get(), v6 ? IPPROTO_IPV6 : IPPROTO_IP, v6 ? IPV6_RECVERR : IP_RECVERR, &one, sizeof one) != 0 ||
      ::setsockopt(fd.get(), v6 ? IPPROTO_IPV6 : IPPROTO_IP, v6 ? IPV6_UNICAST_HOPS : IP_TTL, &ttl, sizeof ttl) != 0) {
    return ErrnoError(errno, "path probe: setsockopt (SO_REUSEADDR, IP_RECVERR, IP_TTL)");
  }
  socklen_t len = 0;
  sockaddr_storage any = AnyAddress(family, port, &len);
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&any), len) != 0) {
    return ErrnoError(errno, fmt::format("path probe: bind to port {}", port));
  }
  return fd;
}

// The router that answered, from the error queue; nullopt when the queue
// holds no ICMP error (the attempt failed otherwise: the peer refused it).
std::optional<std::string> ReadOffender(int fd) {
  char control[512];
  char data[64];
  iovec iov{data, sizeof data};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  if (::recvmsg(fd, &msg, MSG_ERRQUEUE | MSG_DONTWAIT) < 0) return std::nullopt;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    const bool v4 = c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_RECVERR;
    const bool v6 = c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_RECVERR;
    if (!v4 && !v6) continue;
    const auto* ee = reinterpret_cast<const sock_extended_err*>(CMSG_DATA(c));
    if (ee->ee_origin != SO_EE_ORIGIN_ICMP && ee->ee_origin != SO_EE_ORIGIN_ICMP6) continue;
    // Time exceeded is the hop we asked for; any other ICMP error (an
    // unreachable from a router) still names a router of the path.
    return AddressOf(SO_EE_OFFENDER(ee));
  }
  return std::nullopt;
}

}  // namespace

Result<FlowPeer> ResolveFlowPeer(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
  addrinfo* list = nullptr;
  const std::string service = std::to_string(port);
  if (int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &list); rc != 0 || list == nullptr) {
    return InvalidArgumentError(fmt::format("path probe: '{}' is not a numeric address: {}", host,
                                            rc != 0 ? gai_strerror(rc) : "no address"));
  }
  FlowPeer p;
  std::memcpy(&p.addr, list->ai_addr, list->ai_addrlen);
  p.len = list->ai_addrlen;
  ::freeaddrinfo(list);
  return p;
}

Result<UniqueFd> BindFlowSocket(const FlowPeer& peer) {
  UniqueFd fd(::socket(peer.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return ErrnoError(errno, "data connection: socket");
  const int one = 1;
  if (::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0) {
    return ErrnoError(errno, "data connection: setsockopt SO_REUSEADDR");
  }
  socklen_t len = 0;
  sockaddr_storage any = AnyAddress(peer.family(), 0, &len);
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&any), len) != 0) {
    return ErrnoError(errno, "data connection: bind to an ephemeral port");
  }
  return fd;
}

Result<UniqueFd> ConnectFlowSocket(UniqueFd fd, const FlowPeer& peer, std::chrono::milliseconds timeout,
                                   std::string_view what) {
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&peer.addr), peer.len) != 0 && errno != EINPROGRESS) {
    return ErrnoError(errno, what, "is `fabcheck perf serve` running there, and the port open?");
  }
  const Deadline deadline = DeadlineAfter(timeout);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return DeadlineExceededError(fmt::format("{}: timed out while connecting", what));
    pollfd p{fd.get(), POLLOUT, 0};
    const int r = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 100)));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return ErrnoError(errno, fmt::format("{}: poll", what));
    if (r > 0) break;
  }
  int err = 0;
  socklen_t len = sizeof err;
  ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len);
  if (err != 0) return ErrnoError(err, what, "is `fabcheck perf serve` running there, and the port open?");
  ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK);
  return fd;
}

Result<std::vector<std::vector<std::string>>> TraceFlowPaths(const FlowPeer& peer, const std::vector<int>& ports,
                                                             const PathProbeOptions& o) {
  std::vector<std::vector<std::string>> hops(ports.size());
  std::vector<char> ended(ports.size(), 0);  // reached the peer
  for (int ttl = 1; ttl <= o.max_ttl; ++ttl) {
    struct Probe {
      UniqueFd fd;
      size_t flow = 0;
    };
    std::vector<Probe> probes;
    Status first_error;
    for (size_t f = 0; f < ports.size(); ++f) {
      if (ended[f]) continue;
      hops[f].emplace_back();
      auto fd = ProbeSocket(peer, ports[f], ttl);
      if (!fd.ok()) {
        if (first_error.ok()) first_error = fd.status();
        continue;
      }
      if (::connect(fd->get(), reinterpret_cast<const sockaddr*>(&peer.addr), peer.len) != 0 &&
          errno != EINPROGRESS) {
        continue;  // refused at once (no route): nothing to learn at this TTL
      }
      probes.push_back({std::move(*fd), f});
    }
    if (probes.empty() && !first_error.ok() && ttl == 1) return first_error;
    const Deadline deadline = DeadlineAfter(o.hop_timeout);
    size_t open = probes.size();
    while (open > 0) {
      if (o.cancel && o.cancel->load()) return CancelledError("path probe: cancelled");
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) break;
      std::vector<pollfd> fds;
      std::vector<size_t> index;
      for (size_t i = 0; i < probes.size(); ++i) {
        if (!probes[i].fd.valid()) continue;
        fds.push_back({probes[i].fd.get(), POLLOUT, 0});
        index.push_back(i);
      }
      const int r = ::poll(fds.data(), fds.size(), static_cast<int>(std::min<long long>(left, 50)));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) return ErrnoError(errno, "path probe: poll");
      for (size_t k = 0; k < fds.size(); ++k) {
        if (fds[k].revents == 0) continue;
        Probe& p = probes[index[k]];
        if (auto router = ReadOffender(p.fd.get())) {
          hops[p.flow].back() = *router;
        } else {
          int err = 0;
          socklen_t len = sizeof err;
          ::getsockopt(p.fd.get(), SOL_SOCKET, SO_ERROR, &err, &len);
          if (err == 0 || err == ECONNREFUSED) {
            // The SYN reached the peer: the path has fewer routers than this
            // TTL. Reset rather than close, so the peer keeps no connection.
            const linger reset{1, 0};
            ::setsockopt(p.fd.get(), SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
            hops[p.flow].pop_back();
            ended[p.flow] = 1;
          }
        }
        p.fd.Reset();
        --open;
      }
    }
    // Probes still open had no answer: their hop stays "" and closing them
    // before they reach anyone sends nothing.
  }
  return hops;
}

}  // namespace fabcheck::perf
