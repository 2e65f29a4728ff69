#include "perf/protocol.h"

#include <poll.h>
#include <sys/stat.h>

#include <fmt/format.h>

#include <algorithm>
#include <fstream>

#include "base/json_text.h"
#include "base/strings.h"
#include "base/units.h"
#include "fabcheck/model/json_fields.h"

namespace fabcheck::perf {

namespace {

std::string ShowBytes(std::string_view bytes) {
  std::string hex;
  for (size_t i = 0; i < std::min<size_t>(bytes.size(), 8); ++i) {
    hex += fmt::format("{}{:02x}", i ? " " : "", static_cast<unsigned char>(bytes[i]));
  }
  return hex;
}

// A hint when the bytes look like another protocol hit our port.
std::string GuessProtocol(std::string_view head) {
  if (StartsWith(head, "GET ") || StartsWith(head, "POST") || StartsWith(head, "HTTP")) return " (looks like HTTP)";
  if (StartsWith(head, "SSH-")) return " (looks like SSH)";
  if (head.size() >= 3 && (head[0] == 0x16 || head[0] == 0x15) && head[1] == 0x03) {
    return " (looks like TLS: the peer serves TLS, pass --tls-ca; or it expects TLS from this side)";
  }
  return "";
}

int MsLeft(Deadline deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<int64_t>(left, 0, 1 << 30));
}

}  // namespace

std::string EncodeFrame(const nlohmann::json& message) {
  std::string payload = ToJsonText(message);
  uint32_t len = static_cast<uint32_t>(payload.size());
  std::string out(kFrameHeader, '\0');
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>(kFrameMagic >> (24 - 8 * i));
  for (int i = 0; i < 4; ++i) out[4 + i] = static_cast<char>(len >> (24 - 8 * i));
  return out + payload;
}

Result<uint32_t> DecodeFrameHeader(std::string_view header, size_t max_payload) {
  if (header.size() < kFrameHeader) return DataLossError("truncated frame header");
  uint32_t magic = 0, len = 0;
  for (int i = 0; i < 4; ++i) magic = (magic << 8) | static_cast<unsigned char>(header[i]);
  for (int i = 0; i < 4; ++i) len = (len << 8) | static_cast<unsigned char>(header[4 + i]);
  if (magic != kFrameMagic) {
    return DataLossError(fmt::format("not a fabcheck perf frame (first bytes {}){}; is the peer a fabcheck perf "
                                     "server/client of a compatible version?",
                                     ShowBytes(header), GuessProtocol(header)));
  }
  if (len > max_payload) {
    return DataLossError(fmt::format("frame of {} bytes above the limit of {} bytes", len, max_payload));
  }
  return len;
}

Result<nlohmann::json> DecodeFrame(std::string_view bytes, size_t max_payload) {
  ASSIGN_OR_RETURN(uint32_t len, DecodeFrameHeader(bytes, max_payload));
  if (bytes.size() - kFrameHeader != len) {
    return DataLossError(fmt::format("frame says {} payload bytes, {} present", len, bytes.size() - kFrameHeader));
  }
  auto j = nlohmann::json::parse(bytes.substr(kFrameHeader), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return DataLossError("frame payload is not valid JSON");
  if (!j.is_object() || !j.contains("type") || !j.at("type").is_string()) {
    return DataLossError("frame payload is not a JSON object with a \"type\" string");
  }
  return j;
}

Status FramedConnection::StartTls(const net::TlsContext& ctx, bool as_server, const std::string& server_name,
                                  std::chrono::milliseconds timeout) {
  const int ms = static_cast<int>(std::max<int64_t>(1, timeout.count()));
  auto stream = as_server ? net::TlsStream::Accept(ctx, fd_.get(), ms)
                          : net::TlsStream::Connect(ctx, fd_.get(), server_name, ms);
  if (!stream.ok()) return stream.status().WithContext(peer_);
  tls_ = std::move(stream).value();
  return Status::Ok();
}

Status FramedConnection::SendBytes(const std::string& bytes, Deadline deadline, const std::atomic<bool>* cancel,
                                   const std::string& what) {
  if (!tls_) return SendAllDeadline(fd_.get(), bytes.data(), bytes.size(), deadline, cancel, what);
  if (cancel != nullptr && cancel->load()) return CancelledError(what + ": cancelled while sending");
  int ms = MsLeft(deadline);
  if (ms <= 0) return DeadlineExceededError(what + ": timed out while sending (peer stalled or gone?)");
  auto sent = tls_->Write(bytes.data(), bytes.size(), ms);
  return sent.ok() ? Status::Ok() : sent.status().WithContext(what);
}

Status FramedConnection::RecvBytes(char* data, size_t len, Deadline deadline, const std::string& what) {
  if (!tls_) return RecvAllDeadline(fd_.get(), data, len, deadline, cancel_, what);
  const size_t want = len;
  while (len > 0) {
    if (cancel_ != nullptr && cancel_->load()) return CancelledError(what + ": cancelled while receiving");
    int ms = MsLeft(deadline);
    if (ms <= 0) return DeadlineExceededError(what + ": timed out while receiving (peer stalled or gone?)");
    // Short slices, so a cancel is seen while the peer is quiet.
    auto got = tls_->Read(data, len, std::min(ms, 200));
    if (!got.ok()) {
      if (got.status().code() == StatusCode::kDeadlineExceeded) continue;
      return got.status().WithContext(what);
    }
    if (*got == 0) {
      return UnavailableError(want == len ? fmt::format("{}: connection closed by the peer", what)
                                          : fmt::format("{}: connection closed by the peer after {} of {} bytes "
                                                        "(truncated message)", what, want - len, want));
    }
    data += *got;
    len -= *got;
  }
  return Status::Ok();
}

Status FramedConnection::Send(const nlohmann::json& message, std::string_view phase,
                              std::chrono::milliseconds timeout) {
  return SendBytes(EncodeFrame(message), DeadlineAfter(timeout), cancel_, fmt::format("{} during {}", peer_, phase));
}

Result<nlohmann::json> FramedConnection::Receive(std::string_view phase, std::chrono::milliseconds timeout,
                                                 size_t max_payload) {
  std::string what = fmt::format("{} during {}", peer_, phase);
  Deadline deadline = DeadlineAfter(timeout);
  char header[kFrameHeader];
  RETURN_IF_ERROR(RecvBytes(header, sizeof header, deadline, what));
  auto len = DecodeFrameHeader(std::string_view(header, sizeof header), max_payload);
  if (!len.ok()) return len.status().WithContext(what);
  std::string frame(header, sizeof header);
  frame.resize(kFrameHeader + *len);
  RETURN_IF_ERROR(RecvBytes(frame.data() + kFrameHeader, *len, deadline, what));
  auto j = DecodeFrame(frame, max_payload);
  if (!j.ok()) return j.status().WithContext(what);
  return j;
}

Result<nlohmann::json> FramedConnection::Expect(std::string_view type, std::string_view phase,
                                                std::chrono::milliseconds timeout, size_t max_payload) {
  ASSIGN_OR_RETURN(nlohmann::json j, Receive(phase, timeout, max_payload));
  std::string got = j.at("type").get<std::string>();
  if (got == type) return j;
  std::string reason = j.contains("reason") && j["reason"].is_string()   ? j["reason"].get<std::string>()
                       : j.contains("message") && j["message"].is_string() ? j["message"].get<std::string>()
                                                                           : "";
  if (got == "refuse") return FailedPreconditionError(fmt::format("{} refused during {}: {}", peer_, phase, reason));
  if (got == "error") {
    std::string where = j.contains("phase") && j["phase"].is_string() ? j["phase"].get<std::string>() : std::string(phase);
    return AbortedError(fmt::format("{} failed during {}: {}", peer_, where, reason));
  }
  return DataLossError(fmt::format("{} during {}: expected a '{}' message, got '{}' (protocol mismatch)", peer_,
                                   phase, type, got));
}

void FramedConnection::SendError(std::string_view phase, std::string_view message) {
  nlohmann::json j = {{"type", "error"}, {"phase", phase}, {"message", message}};
  // Not cancellable: a test stopped by the server (shutdown, --max-duration)
  // still tells the client why.
  (void)SendBytes(EncodeFrame(j), DeadlineAfter(std::chrono::milliseconds(1000)), nullptr, peer_);
}

Result<int> NegotiateVersion(int client_min, int client_max, int server_min, int server_max) {
  int best = std::min(client_max, server_max);
  if (best >= std::max(client_min, server_min) && best >= 1) return best;
  if (client_max < server_min) {
    return FailedPreconditionError(fmt::format(
        "protocol version mismatch: client speaks {}..{}, server needs {}..{}; upgrade fabcheck on the client",
        client_min, client_max, server_min, server_max));
  }
  return FailedPreconditionError(fmt::format(
      "protocol version mismatch: client needs {}..{}, server speaks {}..{}; upgrade fabcheck on the server",
      client_min, client_max, server_min, server_max));
}

std::string RaiseAdvice(const ServerLimits& l, std::string_view option) {
  if (l.set_by_serve_options) return fmt::format("raise serve {}", option);
  return "the agent's perf server has fixed limits";
}

void to_json(nlohmann::json& j, const ServerLimits& l) {
  j = {{"max_clients", l.max_clients},
       {"max_mem_per_client", l.max_mem_per_client},
       {"max_mem_total", l.max_mem_total},
       {"max_duration_s", l.max_duration_s},
       {"max_streams", l.max_streams}};
}

double EstimatedDurationS(const TestParams& p) {
  if (p.iters != 0) return 0;
  return p.duration_s * static_cast<double>(p.sizes.size());
}

Status CheckLimits(const TestParams& p, const ServerLimits& limits, uint64_t memory_needed, uint64_t memory_in_use) {
  if (p.streams > limits.max_streams) {
    return ResourceExhaustedError(fmt::format("{} streams/QPs asked, this server allows {} (use fewer --streams, or {})",
                                              p.streams, limits.max_streams, RaiseAdvice(limits, "--max-streams")));
  }
  if (memory_needed > limits.max_mem_per_client) {
    return ResourceExhaustedError(fmt::format(
        "the test needs {} of buffers on the server, above its per-client limit {} (use fewer --streams or smaller "
        "--sizes; {})",
        FormatSize(memory_needed), FormatSize(limits.max_mem_per_client), RaiseAdvice(limits, "--max-mem")));
  }
  if (memory_in_use + memory_needed > limits.max_mem_total) {
    return ResourceExhaustedError(fmt::format(
        "the server has {} of buffers in use by other tests; {} more would exceed its total limit {} (retry later)",
        FormatSize(memory_in_use), FormatSize(memory_needed), FormatSize(limits.max_mem_total)));
  }
  double estimate = EstimatedDurationS(p);
  if (limits.max_duration_s > 0 && estimate > limits.max_duration_s) {
    return ResourceExhaustedError(fmt::format(
        "the test would run {:.0f} s ({} sizes x {} s), above the server's limit of {:.0f} s (shorten --duration or "
        "give fewer --sizes; {})",
        estimate, p.sizes.size(), p.duration_s, limits.max_duration_s, RaiseAdvice(limits, "--max-duration")));
  }
  return Status::Ok();
}

void to_json(nlohmann::json& j, const SideMeasurement& m) {
  j = {{"iterations", m.iterations},   {"tx_bytes", m.tx_bytes},         {"tx_messages", m.tx_messages},
       {"tx_elapsed_s", m.tx_elapsed_s}, {"tx_peak_gbps", m.tx_peak_gbps}, {"rx_bytes", m.rx_bytes},
       {"rx_messages", m.rx_messages}, {"rx_elapsed_s", m.rx_elapsed_s}, {"rx_peak_gbps", m.rx_peak_gbps},
       {"validate_errors", m.validate_errors}, {"validate_detail", m.validate_detail},
       {"kv_requests", m.kv_requests}, {"kv_notifications", m.kv_notifications}};
  // rtt (and kv request/layer) samples stay on the side that timed them; only their count travels.
  j["rtt_samples"] = m.rtt_us.size();
  if (!m.stream_tx_bytes.empty()) {
    j["stream_tx_bytes"] = m.stream_tx_bytes;
    j["stream_tx_elapsed_s"] = m.stream_tx_elapsed_s;
  }
}

void from_json(const nlohmann::json& j, SideMeasurement& m) {
  m.iterations = model::json_fields::NumberOr(j, "iterations", uint64_t{0});
  m.tx_bytes = model::json_fields::NumberOr(j, "tx_bytes", uint64_t{0});
  m.tx_messages = model::json_fields::NumberOr(j, "tx_messages", uint64_t{0});
  m.tx_elapsed_s = model::json_fields::NumberOr(j, "tx_elapsed_s", 0.0);
  m.tx_peak_gbps = model::json_fields::NumberOr(j, "tx_peak_gbps", 0.0);
  m.rx_bytes = model::json_fields::NumberOr(j, "rx_bytes", uint64_t{0});
  m.rx_messages = model::json_fields::NumberOr(j, "rx_messages", uint64_t{0});
  m.rx_elapsed_s = model::json_fields::NumberOr(j, "rx_elapsed_s", 0.0);
  m.rx_peak_gbps = model::json_fields::NumberOr(j, "rx_peak_gbps", 0.0);
  m.validate_errors = model::json_fields::NumberOr(j, "validate_errors", uint64_t{0});
  m.validate_detail = j.value("validate_detail", "");
  m.stream_tx_bytes = model::json_fields::NumbersOr<uint64_t>(j, "stream_tx_bytes");
  m.stream_tx_elapsed_s = model::json_fields::NumbersOr<double>(j, "stream_tx_elapsed_s");
  if (m.stream_tx_elapsed_s.size() != m.stream_tx_bytes.size()) m.stream_tx_bytes.clear(), m.stream_tx_elapsed_s.clear();
  m.kv_requests = model::json_fields::NumberOr(j, "kv_requests", uint64_t{0});
  m.kv_notifications = model::json_fields::NumberOr(j, "kv_notifications", uint64_t{0});
}

std::optional<Status> FramedControlChannel::PeerGone() {
  // POLLRDHUP: the peer's FIN (or RST) arrived, even with unread messages
  // still queued; plain POLLIN would also fire for a message sent early.
  pollfd p{conn_.fd(), POLLRDHUP, 0};
  if (::poll(&p, 1, 0) <= 0 || (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) == 0) return std::nullopt;
  // A peer that failed sent its reason before closing: find it among what is
  // still queued (its own phase messages may come first).
  constexpr int kQueuedMessages = 8;
  for (int i = 0; i < kQueuedMessages; ++i) {
    auto message = conn_.Expect("phase", "mid-test", std::chrono::milliseconds(200), kMaxFrame);
    if (!message.ok()) {
      if (message.status().code() == StatusCode::kAborted) return message.status();
      break;
    }
  }
  return UnavailableError(
      fmt::format("peer {} closed its control connection mid-test (it exited or was killed)", conn_.peer()));
}

Result<nlohmann::json> FramedControlChannel::Exchange(std::string_view phase, const nlohmann::json& mine,
                                                      std::chrono::milliseconds timeout) {
  nlohmann::json out = {{"type", "phase"}, {"phase", phase}, {"body", mine}};
  RETURN_IF_ERROR(conn_.Send(out, phase, timeout));
  ASSIGN_OR_RETURN(nlohmann::json in, conn_.Expect("phase", phase, timeout, kMaxFrame));
  std::string got = in.value("phase", "");
  if (got != phase) {
    return DataLossError(fmt::format("{}: out of step, expected phase '{}' but the peer is in '{}'", conn_.peer(),
                                     phase, got));
  }
  return in.contains("body") ? in["body"] : nlohmann::json::object();
}

}  // namespace fabcheck::perf
