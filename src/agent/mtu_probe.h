// The path-MTU probe: the largest don't-fragment datagram that gets from here
// to a peer's echo, found by search, so a silent MTU black hole (an endpoint
// or switch port with a smaller MTU and no ICMP "fragmentation needed" coming
// back) shows up as "the kernel believes 9000, only 1500 gets through".
//
// Wire: the probe is a UDP datagram of the size under test starting with
// "FCMTU1", an 8-byte nonce and zero padding; the echo answers with a 20-byte
// datagram "FCMTU1" + nonce + the received length, never with the payload
// (so the reply path's own MTU does not matter and the echo cannot amplify).
// Sizes are IP packet sizes (payload + 28 bytes for IPv4/UDP, 48 for IPv6),
// the figure `ip link` shows as MTU.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "base/fd.h"
#include "base/status.h"

namespace fabcheck::agent {

// The agent's side: answers probes on UDP `bind`:`port` until destroyed.
class MtuEcho {
 public:
  // port 0 picks a free port (tests); bind "" = every address.
  static Result<std::unique_ptr<MtuEcho>> Start(const std::string& bind, int port);
  ~MtuEcho();
  MtuEcho(const MtuEcho&) = delete;
  MtuEcho& operator=(const MtuEcho&) = delete;
  int port() const { return port_; }
  uint64_t answered() const { return answered_.load(); }

 private:
  MtuEcho() = default;
  void Loop();
  UniqueFd fd_;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> answered_{0};
  std::thread thread_;
};

struct MtuProbeOptions {
  std::string host;                  // the peer's data address
  int port = 0;                      // its echo port
  std::string source;                // bind to this local address first (rail selection); "" = routing
  int min_size = 576;                // smallest IP packet tried; failing it means "no path at all"
  int max_size = 0;                  // 0 = what the kernel believes for this route (IP_MTU)
  std::chrono::milliseconds reply_timeout{150};
  int attempts = 3;                  // tries per size before calling it lost
  std::chrono::milliseconds deadline{15000};
  const std::atomic<bool>* cancel = nullptr;
};

struct MtuProbeResult {
  int path_mtu = 0;   // largest IP packet that got through
  int local_mtu = 0;  // what this side's kernel believes for the route (interface or cached PMTU)
  int probes = 0;     // datagrams sent
  // Larger sizes vanished without the kernel learning about it: the black
  // hole that makes "small messages work, large ones time out".
  bool black_hole = false;
};

// Unavailable when even min_size gets no answer (echo down, no route, firewall).
Result<MtuProbeResult> ProbePathMtu(const MtuProbeOptions& options);

}  // namespace fabcheck::agent
