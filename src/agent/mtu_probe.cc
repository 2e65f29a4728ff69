#include "agent/mtu_probe.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>
#include <vector>

#include "base/thread_group.h"

namespace fabcheck::agent {
namespace {

constexpr char kMagic[6] = {'F', 'C', 'M', 'T', 'U', '1'};
constexpr size_t kHeader = sizeof(kMagic) + 8;  // magic + nonce
constexpr size_t kReply = kHeader + 4;          // + received length
constexpr int kMaxIpPacket = 65535;

Result<addrinfo*> Resolve(const std::string& host, int port, bool passive) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  hints.ai_flags = passive ? AI_PASSIVE : 0;
  addrinfo* res = nullptr;
  std::string p = std::to_string(port);
  int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(), p.c_str(), &hints, &res);
  if (rc != 0) {
    return UnavailableError(fmt::format("cannot resolve '{}': {} (check the address or DNS)", host, gai_strerror(rc)));
  }
  return res;
}

}  // namespace

Result<std::unique_ptr<MtuEcho>> MtuEcho::Start(const std::string& bind, int port) {
  ASSIGN_OR_RETURN(addrinfo * res, Resolve(bind, port, true));
  std::unique_ptr<MtuEcho> echo(new MtuEcho());
  Status last = UnavailableError("no address");
  // Prefer IPv6 with dual-stack when binding to every address.
  for (addrinfo* ai = res; ai; ai = ai->ai_next) {
    UniqueFd fd(::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, 0));
    if (!fd.valid()) {
      last = ErrnoError(errno, "mtu echo: socket");
      continue;
    }
    int on = 1;
    ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (ai->ai_family == AF_INET6) {
      int off = 0;
      ::setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
    }
    if (::bind(fd.get(), ai->ai_addr, ai->ai_addrlen) != 0) {
      last = ErrnoError(errno, fmt::format("mtu echo: bind UDP {}:{}", bind.empty() ? "*" : bind, port),
                        " (is another agent running? choose another --listen port)");
      continue;
    }
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&ss), &len);
    echo->port_ = ntohs(ss.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port
                                                 : reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
    echo->fd_ = std::move(fd);
    break;
  }
  freeaddrinfo(res);
  if (!echo->fd_.valid()) return last;
  RETURN_IF_ERROR(base::StartThread("the path-MTU echo", echo->thread_, [e = echo.get()] { e->Loop(); }));
  return echo;
}

MtuEcho::~MtuEcho() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
}

void MtuEcho::Loop() {
  std::vector<char> buf(kMaxIpPacket);
  while (!stop_.load()) {
    pollfd p{fd_.get(), POLLIN, 0};
    // A short poll so destruction is prompt; the echo itself never blocks.
    if (::poll(&p, 1, 100) <= 0) continue;
    sockaddr_storage from{};
    socklen_t from_len = sizeof from;
    ssize_t n = ::recvfrom(fd_.get(), buf.data(), buf.size(), MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&from),
                           &from_len);
    if (n < static_cast<ssize_t>(kHeader) || std::memcmp(buf.data(), kMagic, sizeof kMagic) != 0) continue;
    char reply[kReply];
    std::memcpy(reply, buf.data(), kHeader);
    uint32_t len = htonl(static_cast<uint32_t>(n));
    std::memcpy(reply + kHeader, &len, 4);
    // Counted before the reply leaves, so a prober that has its answer also
    // sees the count (it may return before this thread runs again).
    answered_.fetch_add(1);
    ::sendto(fd_.get(), reply, sizeof reply, MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&from), from_len);
  }
}

Result<MtuProbeResult> ProbePathMtu(const MtuProbeOptions& o) {
  ASSIGN_OR_RETURN(addrinfo * res, Resolve(o.host, o.port, false));
  const int family = res->ai_family;
  UniqueFd fd(::socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) {
    freeaddrinfo(res);
    return ErrnoError(errno, "mtu probe: socket");
  }
  const std::string peer = fmt::format("{}:{}", o.host, o.port);
  if (!o.source.empty()) {
    addrinfo hints{};
    hints.ai_family = family;
    hints.ai_socktype = SOCK_DGRAM;
    addrinfo* src = nullptr;
    if (getaddrinfo(o.source.c_str(), "0", &hints, &src) != 0 || ::bind(fd.get(), src->ai_addr, src->ai_addrlen) != 0) {
      int err = errno;
      if (src) freeaddrinfo(src);
      freeaddrinfo(res);
      return ErrnoError(err, fmt::format("mtu probe: bind source {}", o.source), " (is it this node's address?)");
    }
    freeaddrinfo(src);
  }
  // Don't fragment, and refuse sizes above what the kernel knows (EMSGSIZE).
  int pmtu_do = IP_PMTUDISC_DO;
  if (family == AF_INET6) {
    pmtu_do = IPV6_PMTUDISC_DO;
    ::setsockopt(fd.get(), IPPROTO_IPV6, IPV6_MTU_DISCOVER, &pmtu_do, sizeof pmtu_do);
  } else {
    ::setsockopt(fd.get(), IPPROTO_IP, IP_MTU_DISCOVER, &pmtu_do, sizeof pmtu_do);
  }
  int rc = ::connect(fd.get(), res->ai_addr, res->ai_addrlen);
  int err = errno;
  freeaddrinfo(res);
  if (rc != 0) return ErrnoError(err, fmt::format("mtu probe: connect {}", peer), " (no route to the peer?)");

  const int overhead = family == AF_INET6 ? 48 : 28;
  auto kernel_mtu = [&]() {
    int mtu = 0;
    socklen_t len = sizeof mtu;
    if (family == AF_INET6) {
      ::getsockopt(fd.get(), IPPROTO_IPV6, IPV6_MTU, &mtu, &len);
    } else {
      ::getsockopt(fd.get(), IPPROTO_IP, IP_MTU, &mtu, &len);
    }
    return mtu;
  };
  MtuProbeResult result;
  result.local_mtu = kernel_mtu();
  const int max = std::min(o.max_size > 0 ? o.max_size : result.local_mtu, kMaxIpPacket);
  if (max < o.min_size) {
    return InvalidArgumentError(fmt::format("mtu probe {}: largest size {} is below the smallest {}", peer, max,
                                            o.min_size));
  }
  const auto deadline = std::chrono::steady_clock::now() + o.deadline;
  std::mt19937_64 rng(std::random_device{}());
  std::vector<char> buf(static_cast<size_t>(max), 0);
  std::memcpy(buf.data(), kMagic, sizeof kMagic);
  bool kernel_refused = false;

  // Some bytes of size `ip_size` reached the echo and its answer came back.
  auto passes = [&](int ip_size) -> Result<bool> {
    const size_t payload = static_cast<size_t>(std::max(ip_size - overhead, static_cast<int>(kHeader)));
    for (int attempt = 0; attempt < o.attempts; ++attempt) {
      if (o.cancel && o.cancel->load()) return CancelledError(fmt::format("mtu probe {}: cancelled", peer));
      if (std::chrono::steady_clock::now() > deadline) {
        return DeadlineExceededError(fmt::format("mtu probe {}: no answer within {} ms overall", peer,
                                                 o.deadline.count()));
      }
      uint64_t nonce = rng();
      std::memcpy(buf.data() + sizeof kMagic, &nonce, 8);
      ++result.probes;
      if (::send(fd.get(), buf.data(), payload, 0) < 0) {
        if (errno == EMSGSIZE) {
          kernel_refused = true;  // the kernel knows this path is smaller (ICMP came back)
          return false;
        }
        if (errno == ECONNREFUSED) continue;  // an ICMP port unreachable from an earlier probe
        return ErrnoError(errno, fmt::format("mtu probe: send {} bytes to {}", ip_size, peer));
      }
      auto until = std::chrono::steady_clock::now() + o.reply_timeout;
      while (true) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
        if (left.count() <= 0) break;
        pollfd p{fd.get(), POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
        char reply[kReply];
        ssize_t n = ::recv(fd.get(), reply, sizeof reply, MSG_DONTWAIT);
        if (n != static_cast<ssize_t>(kReply)) continue;  // ICMP error (ECONNREFUSED) or junk: keep waiting
        if (std::memcmp(reply, buf.data(), kHeader) != 0) continue;  // a late answer to an earlier probe
        uint32_t got = 0;
        std::memcpy(&got, reply + kHeader, 4);
        if (ntohl(got) == payload) return true;
      }
    }
    return false;
  };

  // The common answers first (the whole route MTU, 1500, one byte above the
  // largest that passed), then a binary search between the last good and the
  // first bad size.
  ASSIGN_OR_RETURN(bool top, passes(max));
  if (top) {
    result.path_mtu = max;
    return result;
  }
  int good = 0, bad = max;
  for (int candidate : {1500, 1280, o.min_size}) {
    if (candidate >= bad || candidate <= good || candidate < o.min_size) continue;
    ASSIGN_OR_RETURN(bool ok, passes(candidate));
    if (ok) {
      good = candidate;
      break;
    }
    bad = candidate;
  }
  if (good == 0) {
    return UnavailableError(fmt::format("mtu probe {}: no answer even to {}-byte datagrams (is the agent's UDP "
                                        "echo reachable? check firewalls and the address)",
                                        peer, o.min_size));
  }
  if (good + 1 < bad) {
    ASSIGN_OR_RETURN(bool next, passes(good + 1));
    if (next) {
      good = good + 1;
    } else {
      bad = good + 1;
    }
  }
  while (bad - good > 1) {
    int mid = good + (bad - good) / 2;
    ASSIGN_OR_RETURN(bool ok, passes(mid));
    (ok ? good : bad) = mid;
  }
  result.path_mtu = good;
  int now_known = kernel_mtu();
  result.black_hole = !kernel_refused && result.path_mtu < result.local_mtu && now_known >= result.local_mtu;
  return result;
}

}  // namespace fabcheck::agent
