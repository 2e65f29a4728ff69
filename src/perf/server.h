// `fabcheck perf serve`: a long-lived server running clients' tests
// concurrently, within limits, surviving bad clients.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "base/fd.h"
#include "base/rate_limit.h"
#include "base/status.h"
#include "perf/protocol.h"
#include "sys/sysroot.h"

namespace fabcheck::perf {

struct ServeOptions {
  std::string bind;                  // "" = every address
  int port = kDefaultPort;           // 0 = any free port (tests)
  std::optional<std::string> token;  // require HMAC proof of this token
  // The node the server runs on, as the command opened it; required (see ClientOptions::root).
  std::optional<sys::SysRoot> root;
  ServerLimits limits;
  std::chrono::milliseconds connect_timeout{10000};
  std::chrono::milliseconds io_timeout{30000};
  // The control channel over TLS (net/tls.h); a plain client is refused with
  // a message saying so. Data streams stay plain (they carry test patterns).
  std::shared_ptr<const net::TlsContext> tls;
};

class Server {
 public:
  // Binds the listening socket (errors name the address and the fix).
  static Result<std::unique_ptr<Server>> Start(ServeOptions options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  int port() const { return port_; }
  // Accepts and serves until Stop(); returns when every client thread is done.
  void Run();
  // Safe from any thread; async-signal-safe (only stores a flag).
  void Stop() { stop_.store(true); }

  // For tests and logs.
  int active_tests() const { return active_.load(); }
  uint64_t tests_completed() const { return completed_.load(); }
  uint64_t tests_failed() const { return failed_.load(); }
  uint64_t connections_refused() const { return refused_.load(); }
  // Connections closed while still in the handshake to make room for new ones.
  uint64_t connections_evicted() const { return evicted_.load(); }

 private:
  struct Client {
    std::thread thread;
    std::atomic<bool> cancel{false};
    std::atomic<bool> finished{false};
    // Watchdog: --max-duration ends a test that overruns.
    std::atomic<int64_t> deadline_ns{0};
    // Past the handshake: admitted to run a test, never evicted.
    std::atomic<bool> admitted{false};
    int64_t accepted_ns = 0;
  };
  explicit Server(ServeOptions options) : options_(std::move(options)) {}
  void Handle(UniqueFd fd, Client& me);
  Status Serve(FramedConnection& conn, Client& me, const std::string& local_addr, const std::string& peer_addr);
  Status AcceptTls(FramedConnection& conn, std::chrono::milliseconds timeout);
  void Reap(bool all);

  ServeOptions options_;
  UniqueFd listener_;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::list<Client> clients_;
  uint64_t mem_in_use_ = 0;  // guarded by mu_
  int running_ = 0;          // tests admitted, guarded by mu_
  std::atomic<int> active_{0};
  std::atomic<uint64_t> completed_{0}, failed_{0}, refused_{0}, evicted_{0};
  // A flood of connections must not become a flood of log lines.
  RateLimit crowd_log_, handshake_log_;
};

}  // namespace fabcheck::perf
