#include "perf/server.h"

#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>

#include "base/log.h"
#include "base/thread_group.h"
#include "base/units.h"
#include "fabcheck/model/json_fields.h"
#include "fabcheck/version.h"
#include "perf/engine.h"
#include "net/auth.h"
#include "net/hmac.h"

namespace fabcheck::perf {

namespace {

// Connections still in the handshake, beyond the running tests: enough for
// honest clients, few enough that a flood cannot exhaust threads.
int MaxPending(const ServerLimits& l) { return l.max_clients * 2 + 8; }

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

}  // namespace

Result<std::unique_ptr<Server>> Server::Start(ServeOptions options) {
  if (options.limits.max_clients < 1) return InvalidArgumentError("--max-clients must be 1 or more");
  if (!options.root) return InvalidArgumentError("perf::Server::Start: ServeOptions.root is not set (the node to read)");
  std::unique_ptr<Server> server(new Server(std::move(options)));
  ASSIGN_OR_RETURN(server->listener_, ListenTcp(server->options_.bind, server->options_.port, 64));
  server->port_ = LocalPort(server->listener_.get());
  return server;
}

Server::~Server() {
  Stop();
  Reap(true);
}

void Server::Reap(bool all) {
  std::list<Client> done;
  {
    std::lock_guard lock(mu_);
    for (auto it = clients_.begin(); it != clients_.end();) {
      if (all || it->finished.load()) {
        auto next = std::next(it);
        done.splice(done.end(), clients_, it);
        it = next;
      } else {
        ++it;
      }
    }
  }
  for (auto& c : done) {
    if (all) c.cancel = true;
    if (c.thread.joinable()) c.thread.join();
  }
}

void Server::Run() {
  LOG_INFO("perf", "serving on port {} (max {} clients, {} per client, {} total, {} s per test{})", port_,
           options_.limits.max_clients, FormatSize(options_.limits.max_mem_per_client),
           FormatSize(options_.limits.max_mem_total), options_.limits.max_duration_s,
           options_.token ? ", token required" : "");
  while (!stop_.load()) {
    auto fd = AcceptWithDeadline(listener_.get(), DeadlineAfter(std::chrono::milliseconds(200)), &stop_);
    // Watchdog and reaping run at least every 200 ms.
    {
      std::lock_guard lock(mu_);
      int64_t now = NowNs();
      for (auto& c : clients_) {
        int64_t d = c.deadline_ns.load();
        if (d != 0 && now > d && !c.cancel.load()) {
          LOG_WARN("perf", "a test exceeded --max-duration {} s; stopping it", options_.limits.max_duration_s);
          c.cancel = true;
        }
      }
    }
    Reap(false);
    if (!fd.ok()) continue;
    std::lock_guard lock(mu_);
    const int limit = options_.limits.max_clients + MaxPending(options_.limits);
    int live = 0;
    Client* oldest = nullptr;
    for (auto& c : clients_) {
      if (c.finished.load() || c.cancel.load()) continue;
      ++live;
      if (!c.admitted.load() && (oldest == nullptr || c.accepted_ns < oldest->accepted_ns)) oldest = &c;
    }
    // Threads of evicted connections end within a poll slice; this bounds
    // them against a flood faster than that.
    const bool crowded = static_cast<int>(clients_.size()) >= 2 * limit;
    if (live >= limit || crowded) {
      if (oldest != nullptr && !crowded) {
        // Idle or half-open connections must not lock out real clients: the
        // one waiting longest in its handshake makes room (a real client
        // completes its handshake in milliseconds).
        oldest->cancel = true;
        ++evicted_;
        if (auto held = crowd_log_.Admit()) {
          LOG_WARN("perf", "{} connections in progress: closed the one longest in its handshake{}", live,
                   HeldBack(*held));
        }
      } else {
        // Every connection runs a test: close this one before reading anything.
        ++refused_;
        if (auto held = crowd_log_.Admit()) {
          LOG_WARN("perf", "refused a connection from {}: too many connections in progress{}", PeerName(fd->get()),
                   HeldBack(*held));
        }
        continue;
      }
    }
    Client& c = clients_.emplace_back();
    c.accepted_ns = NowNs();
    Status started = base::StartThread("a perf client connection", c.thread,
                                       [this, sock = std::move(*fd), &c]() mutable { Handle(std::move(sock), c); });
    if (!started.ok()) {
      // Under a pod's thread limit: this connection closes, the server goes on.
      clients_.pop_back();
      ++refused_;
      if (auto held = crowd_log_.Admit()) LOG_WARN("perf", "refused a connection: {}{}", started.message(), HeldBack(*held));
    }
  }
  Reap(true);
}

void Server::Handle(UniqueFd fd, Client& me) {
  std::string peer = PeerName(fd.get());
  std::string local_addr = LocalAddress(fd.get());
  std::string peer_addr = PeerAddress(fd.get());
  FramedConnection conn(std::move(fd), "client " + peer, &me.cancel);
  Status s;
  try {
    s = Serve(conn, me, local_addr, peer_addr);
  } catch (const std::exception& e) {
    // Malformed input that slipped past a check: this client ends, the server goes on.
    s = DataLossError(fmt::format("client {}: malformed message ({})", peer, e.what()));
    conn.SendError("request", s.message());
  }
  if (!s.ok()) {
    if (me.admitted.load()) {
      LOG_WARN("perf", "{}", s.message());
    } else if (auto held = handshake_log_.Admit()) {
      // Before admission anyone can make this happen, as often as they like.
      LOG_WARN("perf", "{}{}", s.message(), HeldBack(*held));
    }
  }
  me.finished = true;
}

Status Server::AcceptTls(FramedConnection& conn, std::chrono::milliseconds timeout) {
  pollfd p{conn.fd(), POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0) {
    return DeadlineExceededError(fmt::format("{}: nothing sent within {} ms", conn.peer(), timeout.count()));
  }
  // A plain fabcheck client starts with a frame, not a ClientHello: tell it
  // what to do instead of failing a handshake it cannot explain.
  unsigned char head[1] = {};
  if (::recv(conn.fd(), head, sizeof head, MSG_PEEK | MSG_DONTWAIT) == 1 && head[0] == (kFrameMagic >> 24)) {
    ++refused_;
    conn.SendError("handshake",
                   "this perf server requires TLS: give the client --tls-ca (and --tls-cert/--tls-key when the "
                   "server asks for a client certificate)");
    return FailedPreconditionError(fmt::format("refused {}: a plain connection to a TLS perf server", conn.peer()));
  }
  return conn.StartTls(*options_.tls, /*as_server=*/true, "", timeout);
}

Status Server::Serve(FramedConnection& conn, Client& me, const std::string& local_addr,
                     const std::string& peer_addr) {
  const ServerLimits& limits = options_.limits;
  auto hs = limits.handshake_timeout;
  auto refuse = [&](std::string_view phase, const std::string& reason) {
    ++refused_;
    (void)conn.Send({{"type", "refuse"}, {"reason", reason}}, phase, hs);
    return FailedPreconditionError(fmt::format("refused {} during {}: {}", conn.peer(), phase, reason));
  };

  if (options_.tls) RETURN_IF_ERROR(AcceptTls(conn, hs));
  // Before authentication: small frames, short timeouts, nothing allocated.
  ASSIGN_OR_RETURN(nlohmann::json hello, conn.Expect("hello", "handshake", hs, kMaxPreAuthFrame));
  int cmin = model::json_fields::NumberOr(hello, "protocol_min", 0), cmax = model::json_fields::NumberOr(hello, "protocol_max", 0);
  std::string client_nonce = hello.value("nonce", "");
  auto version = NegotiateVersion(cmin, cmax, kMinProtocolVersion, kProtocolVersion);
  if (!version.ok()) return refuse("handshake", version.status().message());
  if (client_nonce.size() < 16 || client_nonce.size() > 128) return refuse("handshake", "missing or bad nonce");
  ASSIGN_OR_RETURN(std::string raw, net::RandomBytes(16));
  std::string nonce = net::ToHex(raw);
  RETURN_IF_ERROR(conn.Send({{"type", "hello"},
                             {"protocol", *version},
                             {"fabcheck_version", kVersion},
                             {"auth", options_.token ? kAuthScheme : "none"},
                             {"nonce", nonce}},
                            "handshake", hs));
  if (options_.token) {
    ASSIGN_OR_RETURN(nlohmann::json auth, conn.Expect("auth", "authentication", hs, kMaxPreAuthFrame));
    if (!net::ConstantTimeEqual(auth.value("mac", ""), net::ClientMac(*options_.token, nonce, client_nonce))) {
      return refuse("authentication", "authentication failed: wrong token (check --token-file on both sides)");
    }
  }
  ASSIGN_OR_RETURN(nlohmann::json request, conn.Expect("request", "request", hs, 64 * 1024));

  // Validate the request against this server before allocating anything.
  auto params = ParseTestParams(request.value("params", nlohmann::json()));
  if (!params.ok()) return refuse("request", params.status().message());
  if (Status v = ValidateTestParams(*params); !v.ok()) return refuse("request", v.message());
  auto transport = CreateTransport(params->transport);
  if (!transport.ok()) return refuse("request", transport.status().message());
  if (Status c = CheckCapabilities(*params, (*transport)->GetCapabilities(), Role::kServer); !c.ok()) {
    return refuse("request", c.message());
  }
  uint64_t memory = (*transport)->MemoryNeeded(*params, Role::kServer);
  {
    std::lock_guard lock(mu_);
    if (running_ >= limits.max_clients) {
      return refuse("request", fmt::format("server busy: {} tests running, its limit is {} (retry later; {})",
                                           running_, limits.max_clients, RaiseAdvice(limits, "--max-clients")));
    }
    if (Status l = CheckLimits(*params, limits, memory, mem_in_use_); !l.ok()) return refuse("request", l.message());
    ++running_;
    mem_in_use_ += memory;
    me.admitted = true;
  }
  ++active_;
  if (limits.max_duration_s > 0) {
    me.deadline_ns = NowNs() + static_cast<int64_t>(limits.max_duration_s * 1e9);
  }
  nlohmann::json accept = {{"type", "accept"},
                           {"protocol", *version},
                           {"capabilities", (*transport)->GetCapabilities()},
                           {"limits", limits}};
  if (options_.token) accept["server_mac"] = net::ServerMac(*options_.token, nonce, client_nonce);
  Status s = conn.Send(accept, "request", hs);

  if (s.ok()) {
    LocalContext local;
    local.role = Role::kServer;
    local.spec = &params->server;
    local.root = &*options_.root;
    local.control_local_addr = local_addr;
    local.control_peer_addr = peer_addr;
    local.connect_timeout = options_.connect_timeout;
    local.io_timeout = options_.io_timeout;
    local.cancel = &me.cancel;
    s = RunSide(*params, **transport, conn, local, nullptr);
    if (!s.ok() && me.cancel.load() && !stop_.load()) {
      s = s.WithContext(fmt::format("stopped by the server limit --max-duration {} s", limits.max_duration_s));
    }
  }
  transport->reset();  // buffers and connections go before the memory is released
  {
    std::lock_guard lock(mu_);
    --running_;
    mem_in_use_ -= memory;
  }
  --active_;
  if (s.ok()) {
    ++completed_;
    LOG_INFO("perf", "{}: {} {} test done", conn.peer(), TransportName(params->transport),
             model::PerfTestName(params->test));
  } else {
    ++failed_;
  }
  return s;
}

}  // namespace fabcheck::perf
