#include "perf/engine.h"
#include "base/utc_time.h"

#include <sys/resource.h>

#include <fmt/format.h>

#include <algorithm>
#include <ctime>

#include "base/log.h"
#include "fabcheck/model/json_fields.h"
#include "fabcheck/version.h"
#include "net/auth.h"
#include "net/hmac.h"

namespace fabcheck::perf {

namespace {

struct CpuClock {
  double user = 0, system = 0;
  static CpuClock Now() {
    rusage ru{};
    ::getrusage(RUSAGE_SELF, &ru);
    return {ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6, ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6};
  }
};

// How long one size may take on the control connection: the peer may still be
// running its part (duration) and then waiting on its own timeouts.
std::chrono::milliseconds SizeTimeout(const TestParams& p, const LocalContext& local) {
  return local.io_timeout * 3 + std::chrono::milliseconds(static_cast<int64_t>(p.duration_s * 2000) + 5000);
}

}  // namespace

model::PerfEndpoint DescribeSide(const Transport& transport, const LocalContext& local) {
  model::PerfEndpoint e = transport.Describe();
  e.role = std::string(RoleName(local.role));
  e.host = local.control_local_addr;
  e.fabcheck_version = kVersion;
  return e;
}

model::PerfSizeResult AssembleSize(const TestParams& p, uint64_t size, const SideMeasurement& client,
                                   const SideMeasurement& server) {
  model::PerfSizeResult r;
  r.bytes = size;
  r.iterations = client.iterations != 0 ? client.iterations : server.iterations;
  if (p.test == model::PerfTest::kLat) {
    r.lat = model::MakeLatencyFigures(client.rtt_us, p.op != model::PerfOp::kRead);
  } else if (p.bidir) {
    // The receiver's peak counts delivered bytes; a sender's may include
    // bursts into socket buffers, so it is only the fallback.
    auto tx = model::MakeBwFigures(client.tx_bytes, client.tx_messages, client.tx_elapsed_s,
                                   server.rx_peak_gbps > 0 ? server.rx_peak_gbps : client.tx_peak_gbps);
    auto rx = model::MakeBwFigures(server.tx_bytes, server.tx_messages, server.tx_elapsed_s,
                                   client.rx_peak_gbps > 0 ? client.rx_peak_gbps : server.tx_peak_gbps);
    r.bw_tx = tx;
    r.bw_rx = rx;
    r.bw = model::SumBwFigures(tx, rx);
  } else if (client.tx_elapsed_s > 0) {
    r.bw = model::MakeBwFigures(client.tx_bytes, client.tx_messages, client.tx_elapsed_s,
                                server.rx_peak_gbps > 0 ? server.rx_peak_gbps : client.tx_peak_gbps);
    for (size_t s = 0; s < client.stream_tx_bytes.size() && s < client.stream_tx_elapsed_s.size(); ++s) {
      const double t = client.stream_tx_elapsed_s[s];
      r.stream_gbps.push_back(t > 0 ? static_cast<double>(client.stream_tx_bytes[s]) * 8 / t / 1e9 : 0);
    }
  } else {
    // A transport where the server did the timed work (e.g. a passive client).
    r.bw = model::MakeBwFigures(server.tx_bytes, server.tx_messages, server.tx_elapsed_s, server.tx_peak_gbps);
  }
  r.validate_errors = client.validate_errors + server.validate_errors;
  if (r.validate_errors > 0) {
    std::string detail = !client.validate_detail.empty() ? "client: " + client.validate_detail
                                                         : "server: " + server.validate_detail;
    r.error = fmt::format("data validation failed: {} message(s) differ from the pattern (first: {})",
                          r.validate_errors, detail);
  }
  return r;
}

Status RunSide(const TestParams& p, Transport& transport, FramedConnection& conn, const LocalContext& local,
               model::PerfResult* result, std::vector<RawSize>* raw) {
  FramedControlChannel control(conn);
  bool client = local.role == Role::kClient;
  if (Status s = transport.Setup(p, local, control); !s.ok()) {
    conn.SendError("transport setup", s.message());
    return s.WithContext(fmt::format("{} transport setup on the {}", TransportName(p.transport), RoleName(local.role)));
  }
  model::PerfEndpoint me = DescribeSide(transport, local);
  ASSIGN_OR_RETURN(nlohmann::json peer_json, control.Exchange("describe", me, local.io_timeout));
  model::PerfEndpoint peer;
  try {
    peer = peer_json.get<model::PerfEndpoint>();
  } catch (const nlohmann::json::exception& e) {
    return DataLossError(fmt::format("{} during describe: malformed endpoint ({})", conn.peer(), e.what()));
  }
  if (result != nullptr) {
    result->client = me;
    result->server_side = peer;
  }

  CpuClock cpu_total;
  double wall_total = 0;
  Status failure;
  for (uint64_t size : p.sizes) {
    std::string phase = fmt::format("size {}", size);
    if (Status s = control.Barrier(phase + " start", SizeTimeout(p, local)); !s.ok()) {
      failure = s;
      break;
    }
    CpuClock c0 = CpuClock::Now();
    auto t0 = Clock::now();
    Result<SideMeasurement> m = transport.RunSize(size, control);
    wall_total += std::chrono::duration<double>(Clock::now() - t0).count();
    CpuClock c1 = CpuClock::Now();
    cpu_total.user += c1.user - c0.user;
    cpu_total.system += c1.system - c0.system;
    if (!m.ok()) {
      conn.SendError(phase, m.status().message());
      failure = m.status();
      break;
    }
    auto theirs = control.Exchange(phase + " result", *m, SizeTimeout(p, local));
    if (!theirs.ok()) {
      failure = theirs.status();
      break;
    }
    if (result != nullptr) {
      SideMeasurement server_m;
      try {
        server_m = theirs->get<SideMeasurement>();
      } catch (const nlohmann::json::exception& e) {
        failure = DataLossError(fmt::format("{} during {} result: malformed measurement ({})", conn.peer(), size,
                                            e.what()));
        break;
      }
      result->results.push_back(AssembleSize(p, size, client ? *m : server_m, client ? server_m : *m));
      if (raw != nullptr) raw->push_back({size, std::move(*m), std::move(server_m)});
    }
  }
  model::CpuUse cpu{wall_total > 0 ? (cpu_total.user + cpu_total.system) / wall_total * 100 : 0, cpu_total.user,
                    cpu_total.system};
  if (!failure.ok()) {
    if (result != nullptr) {
      result->client.cpu = cpu;
      result->error = failure.message();
    }
    return failure;
  }
  ASSIGN_OR_RETURN(nlohmann::json done, control.Exchange("done", {{"cpu", cpu}}, local.io_timeout));
  if (result != nullptr) {
    result->client.cpu = cpu;
    if (done.contains("cpu")) result->server_side.cpu = done["cpu"].get<model::CpuUse>();
  }
  return Status::Ok();
}

Result<model::PerfResult> RunClient(const ClientOptions& o, std::vector<RawSize>* raw) {
  const TestParams& p = o.params;
  if (!o.root) return InvalidArgumentError("perf::RunClient: ClientOptions.root is not set (the node to read)");
  RETURN_IF_ERROR(ValidateTestParams(p));
  ASSIGN_OR_RETURN(std::unique_ptr<Transport> transport, CreateTransport(p.transport));
  RETURN_IF_ERROR(CheckCapabilities(p, transport->GetCapabilities(), Role::kClient));
  base::Budget::Lease buffers;
  if (o.memory != nullptr) {
    ASSIGN_OR_RETURN(buffers, o.memory->Take(transport->MemoryNeeded(p, Role::kClient),
                                             fmt::format("the buffers of a {} test against {}:{}",
                                                         model::PerfTestName(p.test), o.host, o.port)));
  }

  ASSIGN_OR_RETURN(UniqueFd fd, ConnectTcp(o.host, o.port, o.connect_timeout));
  std::string server_name = fmt::format("{}:{}", o.host, o.port);
  LocalContext local;
  local.role = Role::kClient;
  local.spec = &p.client;
  local.root = &*o.root;
  local.control_local_addr = LocalAddress(fd.get());
  local.control_peer_addr = PeerAddress(fd.get());
  local.connect_timeout = o.connect_timeout;
  local.io_timeout = o.io_timeout;
  local.cancel = o.cancel;
  local.trace_hops = o.trace_hops;
  local.threads = o.threads;
  FramedConnection conn(std::move(fd), "server " + server_name, o.cancel);
  if (o.tls) RETURN_IF_ERROR(conn.StartTls(*o.tls, /*as_server=*/false, o.tls_server_name, o.connect_timeout));

  // Handshake: versions, then the token proof, then the request.
  ASSIGN_OR_RETURN(std::string nonce_raw, net::RandomBytes(16));
  std::string nonce = net::ToHex(nonce_raw);
  RETURN_IF_ERROR(conn.Send({{"type", "hello"},
                             {"protocol_min", kMinProtocolVersion},
                             {"protocol_max", kProtocolVersion},
                             {"fabcheck_version", kVersion},
                             {"nonce", nonce}},
                            "handshake", o.connect_timeout));
  ASSIGN_OR_RETURN(nlohmann::json hello, conn.Expect("hello", "handshake", o.io_timeout, kMaxFrame));
  int protocol = model::json_fields::NumberOr(hello, "protocol", 0);
  if (protocol < kMinProtocolVersion || protocol > kProtocolVersion) {
    return FailedPreconditionError(fmt::format("{} chose protocol version {}, this client speaks {}..{}",
                                               conn.peer(), protocol, kMinProtocolVersion, kProtocolVersion));
  }
  std::string auth = hello.value("auth", "none");
  std::string server_nonce = hello.value("nonce", "");
  if (auth == kAuthScheme) {
    if (!o.token) {
      return UnauthenticatedError(fmt::format("{} requires a token: pass --token-file with the server's token",
                                              conn.peer()));
    }
    RETURN_IF_ERROR(conn.Send({{"type", "auth"}, {"mac", net::ClientMac(*o.token, server_nonce, nonce)}}, "authentication",
                              o.io_timeout));
  } else if (auth != "none") {
    return FailedPreconditionError(fmt::format("{} wants authentication scheme '{}', this client knows '{}'",
                                               conn.peer(), auth, kAuthScheme));
  } else if (o.token) {
    // With a token, the server's proof of it is what says this is the server
    // meant; one that asks for none proves nothing (an impostor on its
    // address, or a server started without the token).
    return UnauthenticatedError(fmt::format(
        "{} answered auth: none, so it cannot prove it knows the token given here: refusing to test against it "
        "(start it with the same --token-file, or drop --token-file here if it is meant to be open)",
        conn.peer()));
  }
  RETURN_IF_ERROR(conn.Send({{"type", "request"}, {"params", p}}, "request", o.io_timeout));
  auto accept = conn.Expect("accept", "request", o.io_timeout, kMaxFrame);
  if (!accept.ok()) {
    if (accept.status().message().find("authentication") != std::string::npos) {
      return UnauthenticatedError(accept.status().message());
    }
    return accept.status();
  }
  if (auth == kAuthScheme) {
    std::string mac = accept->value("server_mac", "");
    if (!net::ConstantTimeEqual(mac, net::ServerMac(*o.token, server_nonce, nonce))) {
      return UnauthenticatedError(fmt::format("{} did not prove it knows the token (wrong server or token?)",
                                              conn.peer()));
    }
  }

  model::PerfResult result;
  result.protocol_version = protocol;
  result.started_at = UtcNowIso8601();
  result.server = server_name;
  result.settings = p.ToSettings();
  Status s = RunSide(p, *transport, conn, local, &result, raw);
  if (!s.ok() && result.results.empty() && result.client.role.empty()) return s;  // never got to measure
  if (!s.ok() && result.error.empty()) result.error = s.message();
  return result;
}

}  // namespace fabcheck::perf
