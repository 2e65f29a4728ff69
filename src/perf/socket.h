// Socket helpers for the perf engine: every wait has a deadline.
//
// The control connection uses poll() before each read/write so a deadline
// and a cancel flag are honoured; the data connections of the TCP transport
// stay blocking with SO_RCVTIMEO/SO_SNDTIMEO so the hot loop costs no extra
// system call (SetIoTimeout).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/fd.h"
#include "base/status.h"

namespace fabcheck::perf {

using Clock = std::chrono::steady_clock;
using Deadline = Clock::time_point;
inline Deadline DeadlineAfter(std::chrono::milliseconds ms) { return Clock::now() + ms; }

// A TCP connection to host:port (names resolved, IPv4 and IPv6), within `timeout`.
Result<UniqueFd> ConnectTcp(const std::string& host, int port, std::chrono::milliseconds timeout);
// A listening socket on bind_addr:port ("" = every address, IPv6 dual-stack when possible; port 0 = any).
Result<UniqueFd> ListenTcp(const std::string& bind_addr, int port, int backlog);
// The next connection, or DeadlineExceeded/Cancelled.
Result<UniqueFd> AcceptWithDeadline(int listen_fd, Deadline deadline, const std::atomic<bool>* cancel);

int LocalPort(int fd);
std::string LocalAddress(int fd);  // "10.0.0.2" (IPv4-mapped IPv6 shown as IPv4)
std::string PeerAddress(int fd);
std::string PeerName(int fd);      // "10.0.0.2:41234", "[fe80::1]:41234"

// Blocks until all bytes are written/read, the deadline passes or cancel is
// set. `what` names the peer and phase for the error ("server 10.0.0.2:18515 during handshake").
Status SendAllDeadline(int fd, const void* data, size_t len, Deadline deadline, const std::atomic<bool>* cancel,
                       std::string_view what);
Status RecvAllDeadline(int fd, void* data, size_t len, Deadline deadline, const std::atomic<bool>* cancel,
                       std::string_view what);

// SO_RCVTIMEO and SO_SNDTIMEO on a blocking socket.
Status SetIoTimeout(int fd, std::chrono::milliseconds timeout);
Status SetNoDelay(int fd, bool on);

// Blocking full send/receive on a socket with SetIoTimeout; EAGAIN after the
// timeout becomes DeadlineExceeded, EOF becomes Unavailable ("closed by peer").
Status SendAll(int fd, const void* data, size_t len, std::string_view what);
Status RecvAll(int fd, void* data, size_t len, std::string_view what);

}  // namespace fabcheck::perf
