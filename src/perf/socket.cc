#include "perf/socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

namespace fabcheck::perf {

namespace {

// poll() slices so a cancel flag is seen within this time.
constexpr int kPollSliceMs = 100;

int RemainingMs(Deadline deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  if (left <= 0) return 0;
  return static_cast<int>(std::min<long long>(left, kPollSliceMs));
}

// Waits for `events` on fd; Ok when ready.
Status WaitFor(int fd, short events, Deadline deadline, const std::atomic<bool>* cancel, std::string_view what,
               std::string_view doing) {
  while (true) {
    if (cancel != nullptr && cancel->load()) return CancelledError(fmt::format("{}: cancelled while {}", what, doing));
    int ms = RemainingMs(deadline);
    if (ms == 0 && Clock::now() >= deadline) {
      return DeadlineExceededError(fmt::format("{}: timed out while {} (peer stalled or gone?)", what, doing));
    }
    pollfd p{fd, events, 0};
    int r = ::poll(&p, 1, ms);
    if (r < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(errno, fmt::format("{}: poll while {}", what, doing));
    }
    if (r > 0) return Status::Ok();  // ready, or an error/hangup the next call reports
  }
}

std::string AddressText(const sockaddr_storage& ss, bool with_port) {
  char buf[INET6_ADDRSTRLEN] = {};
  int port = 0;
  if (ss.ss_family == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&ss);
    inet_ntop(AF_INET, &a->sin_addr, buf, sizeof buf);
    port = ntohs(a->sin_port);
    return with_port ? fmt::format("{}:{}", buf, port) : std::string(buf);
  }
  if (ss.ss_family == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&ss);
    port = ntohs(a->sin6_port);
    if (IN6_IS_ADDR_V4MAPPED(&a->sin6_addr)) {
      inet_ntop(AF_INET, &a->sin6_addr.s6_addr[12], buf, sizeof buf);
      return with_port ? fmt::format("{}:{}", buf, port) : std::string(buf);
    }
    inet_ntop(AF_INET6, &a->sin6_addr, buf, sizeof buf);
    return with_port ? fmt::format("[{}]:{}", buf, port) : std::string(buf);
  }
  return "?";
}

}  // namespace

Result<UniqueFd> ConnectTcp(const std::string& host, int port, std::chrono::milliseconds timeout) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* list = nullptr;
  std::string service = std::to_string(port);
  int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &list);
  if (rc != 0) {
    return UnavailableError(fmt::format("cannot resolve '{}': {} (check the host name or give an address)", host,
                                        gai_strerror(rc)));
  }
  Deadline deadline = DeadlineAfter(timeout);
  Status last = UnavailableError(fmt::format("no address for {}", host));
  for (addrinfo* ai = list; ai != nullptr; ai = ai->ai_next) {
    UniqueFd fd(::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol));
    if (!fd.valid()) {
      last = ErrnoError(errno, "socket");
      continue;
    }
    std::string what = fmt::format("connect to {}:{}", host, port);
    if (::connect(fd.get(), ai->ai_addr, ai->ai_addrlen) != 0 && errno != EINPROGRESS) {
      last = ErrnoError(errno, what, "is `fabcheck perf serve` running there, and the port open?");
      continue;
    }
    Status ready = WaitFor(fd.get(), POLLOUT, deadline, nullptr, what, "connecting");
    if (!ready.ok()) {
      last = ready;
      continue;
    }
    int err = 0;
    socklen_t len = sizeof err;
    ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) {
      last = ErrnoError(err, what, "is `fabcheck perf serve` running there, and the port open?");
      continue;
    }
    int flags = ::fcntl(fd.get(), F_GETFL);
    ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK);
    ::freeaddrinfo(list);
    return fd;
  }
  ::freeaddrinfo(list);
  return last;
}

Result<UniqueFd> ListenTcp(const std::string& bind_addr, int port, int backlog) {
  addrinfo hints{};
  hints.ai_family = bind_addr.empty() ? AF_INET6 : AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST;
  addrinfo* list = nullptr;
  std::string service = std::to_string(port);
  int rc = ::getaddrinfo(bind_addr.empty() ? nullptr : bind_addr.c_str(), service.c_str(), &hints, &list);
  if (rc != 0 && bind_addr.empty()) {  // no IPv6 on this node: every IPv4 address
    hints.ai_family = AF_INET;
    rc = ::getaddrinfo(nullptr, service.c_str(), &hints, &list);
  }
  if (rc != 0) {
    return InvalidArgumentError(fmt::format("bad bind address '{}': {} (give a numeric IPv4 or IPv6 address)",
                                            bind_addr, gai_strerror(rc)));
  }
  std::string where = bind_addr.empty() ? fmt::format("*:{}", port) : fmt::format("{}:{}", bind_addr, port);
  UniqueFd fd(::socket(list->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) {
    ::freeaddrinfo(list);
    return ErrnoError(errno, "socket");
  }
  int one = 1, zero = 0;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (list->ai_family == AF_INET6) ::setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
  if (::bind(fd.get(), list->ai_addr, list->ai_addrlen) != 0) {
    int err = errno;
    ::freeaddrinfo(list);
    return ErrnoError(err, "bind " + where, err == EADDRINUSE ? "another server on this port? use --port" : "");
  }
  ::freeaddrinfo(list);
  if (::listen(fd.get(), backlog) != 0) return ErrnoError(errno, "listen " + where);
  return fd;
}

Result<UniqueFd> AcceptWithDeadline(int listen_fd, Deadline deadline, const std::atomic<bool>* cancel) {
  RETURN_IF_ERROR(WaitFor(listen_fd, POLLIN, deadline, cancel, "listening socket", "waiting for a connection"));
  int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) return ErrnoError(errno, "accept");
  return UniqueFd(fd);
}

int LocalPort(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return 0;
  if (ss.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
  if (ss.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
  return 0;
}

std::string LocalAddress(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return "?";
  return AddressText(ss, false);
}

std::string PeerAddress(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return "?";
  return AddressText(ss, false);
}

std::string PeerName(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return "?";
  return AddressText(ss, true);
}

Status SendAllDeadline(int fd, const void* data, size_t len, Deadline deadline, const std::atomic<bool>* cancel,
                       std::string_view what) {
  const char* p = static_cast<const char*>(data);
  while (len > 0) {
    RETURN_IF_ERROR(WaitFor(fd, POLLOUT, deadline, cancel, what, "sending"));
    ssize_t n = ::send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return ErrnoError(errno, fmt::format("{}: send", what));
    }
    p += n;
    len -= static_cast<size_t>(n);
  }
  return Status::Ok();
}

Status RecvAllDeadline(int fd, void* data, size_t len, Deadline deadline, const std::atomic<bool>* cancel,
                       std::string_view what) {
  char* p = static_cast<char*>(data);
  size_t want = len;
  while (len > 0) {
    RETURN_IF_ERROR(WaitFor(fd, POLLIN, deadline, cancel, what, "receiving"));
    ssize_t n = ::recv(fd, p, len, MSG_DONTWAIT);
    if (n == 0) {
      return UnavailableError(want == len ? fmt::format("{}: connection closed by the peer", what)
                                          : fmt::format("{}: connection closed by the peer after {} of {} bytes "
                                                        "(truncated message)", what, want - len, want));
    }
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return ErrnoError(errno, fmt::format("{}: recv", what));
    }
    p += n;
    len -= static_cast<size_t>(n);
  }
  return Status::Ok();
}

Status SetIoTimeout(int fd, std::chrono::milliseconds timeout) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000);
  if (::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0) return ErrnoError(errno, "SO_RCVTIMEO");
  if (::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) != 0) return ErrnoError(errno, "SO_SNDTIMEO");
  return Status::Ok();
}

Status SetNoDelay(int fd, bool on) {
  int v = on ? 1 : 0;
  if (::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &v, sizeof v) != 0) return ErrnoError(errno, "TCP_NODELAY");
  return Status::Ok();
}

Status SendAll(int fd, const void* data, size_t len, std::string_view what) {
  const char* p = static_cast<const char*>(data);
  while (len > 0) {
    ssize_t n = ::send(fd, p, len, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        return DeadlineExceededError(fmt::format("{}: send timed out (peer stopped reading?)", what));
      }
      return ErrnoError(errno, fmt::format("{}: send", what));
    }
    p += n;
    len -= static_cast<size_t>(n);
  }
  return Status::Ok();
}

Status RecvAll(int fd, void* data, size_t len, std::string_view what) {
  char* p = static_cast<char*>(data);
  size_t want = len;
  while (len > 0) {
    ssize_t n = ::recv(fd, p, len, MSG_WAITALL);
    if (n == 0) {
      return UnavailableError(fmt::format("{}: connection closed by the peer after {} of {} bytes", what, want - len,
                                          want));
    }
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        return DeadlineExceededError(fmt::format("{}: receive timed out (peer stalled or gone?)", what));
      }
      return ErrnoError(errno, fmt::format("{}: recv", what));
    }
    p += n;
    len -= static_cast<size_t>(n);
  }
  return Status::Ok();
}

}  // namespace fabcheck::perf
