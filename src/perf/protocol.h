// The perf control protocol: framing, handshake messages, server limits.
//
// Every message is one frame: the 4 bytes "FCP1", a 4-byte big-endian payload
// length, and a JSON object with a "type". The conversation:
//
//   client                                   server
//   hello {protocol_min, protocol_max,  -->
//          fabcheck_version, nonce}
//                                       <--  hello {protocol, fabcheck_version, auth, nonce}
//                                            | refuse {reason}       (no common version)
//   auth {mac}                          -->  (only when auth == "hmac-sha256")
//   request {params}                    -->
//                                       <--  accept {capabilities, server_mac?} | refuse {reason}
//   phase {phase, body} ... in both directions, in lock-step (ControlChannel::Exchange)
//   error {phase, message}              <->  either side, then the connection closes
//
// Authentication: with a token configured on the server, the client proves it
// knows the token with mac = HMAC-SHA256(token, "fabcheck-perf client" |
// server_nonce | client_nonce); the token never crosses the wire. The server
// proves it too in accept.server_mac (roles swapped), so a client with a
// token cannot be fooled by an impostor. Before the mac checks out the server
// reads at most kMaxPreAuthFrame bytes per frame and allocates nothing else.
#pragma once

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/fd.h"
#include "base/status.h"
#include "net/tls.h"
#include "perf/socket.h"
#include "perf/transport.h"

namespace fabcheck::perf {

inline constexpr int kProtocolVersion = 1;     // what this build speaks best
inline constexpr int kMinProtocolVersion = 1;  // the oldest it still speaks
inline constexpr int kDefaultPort = 18520;     // not perftest's 18515, so both can run side by side
inline constexpr uint32_t kFrameMagic = 0x46435031;  // "FCP1"
inline constexpr size_t kFrameHeader = 8;
inline constexpr size_t kMaxPreAuthFrame = 4096;
inline constexpr size_t kMaxFrame = 4 << 20;
inline constexpr const char* kAuthScheme = "hmac-sha256";

// Frame encode/decode (pure; tested on their own).
std::string EncodeFrame(const nlohmann::json& message);
// Decodes one whole frame. DataLoss names what is wrong (magic, length, JSON, type).
Result<nlohmann::json> DecodeFrame(std::string_view bytes, size_t max_payload);
// Checks an 8-byte header and returns the payload length.
Result<uint32_t> DecodeFrameHeader(std::string_view header, size_t max_payload);

// One framed connection. `peer_label` is "server 10.0.0.2:18520" or
// "client 10.0.0.1:41234"; every error names it and the phase.
class FramedConnection {
 public:
  FramedConnection(UniqueFd fd, std::string peer_label, const std::atomic<bool>* cancel = nullptr)
      : fd_(std::move(fd)), peer_(std::move(peer_label)), cancel_(cancel) {}
  Status Send(const nlohmann::json& message, std::string_view phase, std::chrono::milliseconds timeout);
  Result<nlohmann::json> Receive(std::string_view phase, std::chrono::milliseconds timeout, size_t max_payload);
  // Receive, then require message["type"] == type; an "error" or "refuse" from
  // the peer becomes a Status carrying the peer's reason.
  Result<nlohmann::json> Expect(std::string_view type, std::string_view phase, std::chrono::milliseconds timeout,
                                size_t max_payload);
  // Best effort: tells the peer why this side stops.
  void SendError(std::string_view phase, std::string_view message);
  const std::string& peer() const { return peer_; }
  int fd() const { return fd_.get(); }

  // From here on every message goes through TLS (net/tls.h): as the client,
  // verifying `server_name` when not empty, or as the server.
  Status StartTls(const net::TlsContext& ctx, bool as_server, const std::string& server_name,
                  std::chrono::milliseconds timeout);
  bool tls() const { return tls_ != nullptr; }

 private:
  Status SendBytes(const std::string& bytes, Deadline deadline, const std::atomic<bool>* cancel,
                   const std::string& what);
  Status RecvBytes(char* data, size_t len, Deadline deadline, const std::string& what);

  UniqueFd fd_;
  std::string peer_;
  const std::atomic<bool>* cancel_;
  std::unique_ptr<net::TlsStream> tls_;  // declared after fd_: closed before it
};

// The highest version both ranges share, or FailedPrecondition saying who must upgrade.
Result<int> NegotiateVersion(int client_min, int client_max, int server_min, int server_max);

// The token proofs (ClientMac, ServerMac) and the token file policy are
// net/auth.h's, shared with every HTTP server.

// What a server accepts. 0 means "no limit" only where documented.
struct ServerLimits {
  int max_clients = 4;                          // tests running at once
  uint64_t max_mem_per_client = 1ull << 30;     // buffer bytes one test may allocate here
  uint64_t max_mem_total = 4ull << 30;          // all running tests together
  double max_duration_s = 600;                  // wall time of one test (sizes x duration, or a watchdog)
  int max_streams = 64;
  std::chrono::milliseconds handshake_timeout{5000};
  // Whether the user can raise these limits with `perf serve --max-...`; the
  // agent's perf server has fixed ones, and its refusals must not advise
  // options the agent does not have.
  bool set_by_serve_options = true;
};
void to_json(nlohmann::json& j, const ServerLimits& l);
// The fix for hitting a limit: "raise serve --max-mem", or what the agent's user can do.
std::string RaiseAdvice(const ServerLimits& l, std::string_view option);

// Upper estimate of a test's run time when duration-driven (0 when iteration-driven).
double EstimatedDurationS(const TestParams& p);
// ResourceExhausted/FailedPrecondition with the limit, the request and the fix.
Status CheckLimits(const TestParams& p, const ServerLimits& limits, uint64_t memory_needed, uint64_t memory_in_use);

void to_json(nlohmann::json& j, const SideMeasurement& m);
void from_json(const nlohmann::json& j, SideMeasurement& m);

// ControlChannel over a FramedConnection (phase messages in lock-step).
class FramedControlChannel : public ControlChannel {
 public:
  explicit FramedControlChannel(FramedConnection& conn) : conn_(conn) {}
  Result<nlohmann::json> Exchange(std::string_view phase, const nlohmann::json& mine,
                                  std::chrono::milliseconds timeout) override;
  std::string PeerName() const override { return conn_.peer(); }
  std::optional<Status> PeerGone() override;

 private:
  FramedConnection& conn_;
};

}  // namespace fabcheck::perf
