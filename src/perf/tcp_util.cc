// Helpers of the TCP transport: patterns, buffers, data-socket
// I/O with idle timeouts, and placement (netdev, NUMA node).
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "base/strings.h"
#include "base/units.h"
#include "perf/tcp_internal.h"
#include "sys/net_class.h"

namespace fabcheck::perf::tcp {

uint64_t PatternSeed(int stream, uint64_t index) {
  return (index + 1) * 0x9E3779B97F4A7C15ull ^ (static_cast<uint64_t>(stream) << 48);
}

namespace {
inline uint64_t PatternWord(uint64_t seed, uint64_t word) { return seed ^ (word * 0xBF58476D1CE4E5B9ull); }
}  // namespace

void FillPattern(char* buf, size_t len, uint64_t seed) {
  size_t words = len / 8;
  for (size_t w = 0; w < words; ++w) {
    uint64_t v = PatternWord(seed, w);
    std::memcpy(buf + 8 * w, &v, 8);
  }
  uint64_t v = PatternWord(seed, words);
  std::memcpy(buf + 8 * words, &v, len - 8 * words);
}

std::optional<size_t> CheckPattern(const char* buf, size_t len, uint64_t seed) {
  size_t words = len / 8;
  for (size_t w = 0; w < words; ++w) {
    uint64_t v = PatternWord(seed, w);
    if (std::memcmp(buf + 8 * w, &v, 8) != 0) {
      for (size_t b = 0; b < 8; ++b) {
        if (buf[8 * w + b] != reinterpret_cast<const char*>(&v)[b]) return 8 * w + b;
      }
    }
  }
  uint64_t v = PatternWord(seed, words);
  for (size_t b = 0; b < len - 8 * words; ++b) {
    if (buf[8 * words + b] != reinterpret_cast<const char*>(&v)[b]) return 8 * words + b;
  }
  return std::nullopt;
}

AlignedBuffer::AlignedBuffer(size_t len) {
  size = len;
  size_t rounded = (len + 4095) / 4096 * 4096;
  data = static_cast<char*>(std::aligned_alloc(4096, rounded == 0 ? 4096 : rounded));
  if (data != nullptr) std::memset(data, 0, rounded);
}

AlignedBuffer::~AlignedBuffer() { std::free(data); }

namespace {

Status IdleCheck(Clock::time_point last_progress, const WaitContext& wait, const char* phase, const char* doing) {
  if (wait.stopped()) return CancelledError(fmt::format("{} during {}: test stopped while {} (another stream failed, the server is "
                                     "shutting down, or the test ran past the server's --max-duration)",
                                     wait.peer, phase, doing));
  if (Clock::now() - last_progress > wait.idle_timeout) {
    return DeadlineExceededError(fmt::format("{} during {}: no progress for {} while {} (peer stalled or gone?)",
                                             wait.peer, phase, FormatDuration(wait.idle_timeout.count() / 1000.0),
                                             doing));
  }
  return Status::Ok();
}

}  // namespace

Status SendFull(int fd, const char* data, size_t len, const WaitContext& wait, const char* phase) {
  IdleSince idle;
  while (len > 0) {
    ssize_t n = ::send(fd, data, len, MSG_NOSIGNAL);
    if (n > 0) {
      data += n;
      len -= static_cast<size_t>(n);
      idle.Progress();
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
      RETURN_IF_ERROR(IdleCheck(idle.Since(), wait, phase, "sending"));
      continue;
    }
    return ErrnoError(errno, fmt::format("{} during {}: send on a data connection", wait.peer, phase));
  }
  return Status::Ok();
}

Status RecvFull(int fd, char* data, size_t len, const WaitContext& wait, const char* phase) {
  IdleSince idle;
  while (len > 0) {
    ssize_t n = ::recv(fd, data, len, MSG_WAITALL);
    if (n > 0) {
      data += n;
      len -= static_cast<size_t>(n);
      idle.Progress();
      continue;
    }
    if (n == 0) {
      return UnavailableError(fmt::format("{} during {}: data connection closed by the peer", wait.peer, phase));
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
      RETURN_IF_ERROR(IdleCheck(idle.Since(), wait, phase, "receiving"));
      continue;
    }
    return ErrnoError(errno, fmt::format("{} during {}: recv on a data connection", wait.peer, phase));
  }
  return Status::Ok();
}

NetPlacement FindNetPlacement(const sys::SysRoot& root, const std::string& local_addr) {
  NetPlacement out;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return out;
  for (ifaddrs* ifa = list; ifa != nullptr; ifa = ifa->ifa_next) {
    if (ifa->ifa_addr == nullptr) continue;
    char buf[INET6_ADDRSTRLEN] = {};
    if (ifa->ifa_addr->sa_family == AF_INET) {
      inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(ifa->ifa_addr)->sin_addr, buf, sizeof buf);
    } else if (ifa->ifa_addr->sa_family == AF_INET6) {
      inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(ifa->ifa_addr)->sin6_addr, buf, sizeof buf);
    } else {
      continue;
    }
    if (local_addr == buf) {
      out.netdev = ifa->ifa_name;
      break;
    }
  }
  ::freeifaddrs(list);
  if (out.netdev.empty()) return out;
  if (auto mtu = sys::net_class::ReadMtu(root, out.netdev); mtu.ok()) out.mtu = *mtu;
  out.numa_node = sys::net_class::ReadNumaNode(root, out.netdev);
  return out;
}

}  // namespace fabcheck::perf::tcp
