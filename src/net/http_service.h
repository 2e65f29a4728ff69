// The one HTTP server of fabcheck: the agent's control API, the sweep and
// coll rendezvous, and the exporter's /metrics all run on it.
//
// cpp-httplib routes and writes the responses; this service owns the sockets
// around it, so that a hostile or broken client cannot take a server down:
//  * one event thread accepts and reads every connection until its request
//    is complete (request line, headers and the Content-Length body), with a
//    cap on the header and body size (431, 413) and a deadline for the whole
//    request, not per read (408): a slowloris or half-open client costs a
//    descriptor and a few bytes, never a worker;
//  * only complete requests reach the worker threads, which run the handler
//    and write the response within a write deadline;
//  * at the connection limit, the connection idle the longest is closed to
//    make room, so a few hundred idle sockets cannot lock out a real client;
//  * what it refuses is logged at most once per interval, with a count.
// Start() returns once the socket listens and the event thread runs; Stop()
// is safe at any time after it and waits a bounded time for the requests in
// progress.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "net/tls.h"

namespace httplib {
class Server;
}

namespace fabcheck::net {

struct HttpLimits {
  int workers = 8;                      // requests handled at the same time
  int max_connections = 256;            // open connections (idle, reading or handled)
  size_t max_header_bytes = 16 * 1024;  // request line and headers
  size_t max_body_bytes = 1 << 20;
  // To receive one whole request, from the connection's accept (or the first
  // byte of a follow-up request on a kept-alive connection).
  std::chrono::milliseconds request_timeout{10'000};
  // A kept-alive connection waits this long for its next request.
  std::chrono::milliseconds idle_timeout{5'000};
  // To send one whole response.
  std::chrono::milliseconds write_timeout{10'000};
  int keep_alive_requests = 10;  // requests per connection; 1 closes after each
};

struct HttpServiceOptions {
  std::string name = "http";  // in log lines and errors: "agent", "exporter", ...
  std::string bind = "0.0.0.0";
  int port = 0;  // 0: any free port
  // What to do when the port cannot be bound, e.g. "choose another --listen port".
  std::string bind_hint = "is the port in use?";
  // With a token, every path but `public_paths` needs "Authorization: Bearer
  // <token>" (compared in constant time); others get 401 and this message.
  std::optional<std::string> token;
  std::vector<std::string> public_paths;
  std::string unauthorized_message = "missing or wrong token";
  // Called (from a worker) with the client's address for each 401.
  std::function<void(const std::string& remote_addr)> on_unauthorized;
  HttpLimits limits;
  // HTTPS (TlsContext::ForServer): every connection must handshake within
  // the request timeout; a plain HTTP request gets a plain 400 saying so.
  std::shared_ptr<const TlsContext> tls;
};

struct HttpStats {
  uint64_t accepted = 0;
  uint64_t served = 0;        // requests handed to a handler
  uint64_t evicted = 0;       // idle connections closed to make room
  uint64_t refused = 0;       // connections closed at once: every connection busy
  uint64_t timed_out = 0;     // requests not complete within request_timeout
  uint64_t too_large = 0;     // 431 and 413
  uint64_t unauthorized = 0;  // 401
  uint64_t tls_failed = 0;    // TLS handshakes that failed (plain HTTP, no or a wrong client certificate)
  int open_connections = 0;
};

class HttpService {
 public:
  using Routes = std::function<void(httplib::Server&)>;
  // Binds (errors name the address and options.bind_hint), installs the routes
  // and serves. The routes must not call listen/bind/stop on the server.
  static Result<std::unique_ptr<HttpService>> Start(HttpServiceOptions options, const Routes& routes);
  ~HttpService();
  HttpService(const HttpService&) = delete;
  HttpService& operator=(const HttpService&) = delete;

  int port() const { return port_; }
  // Stops accepting, closes idle connections and waits up to `grace` for the
  // requests in progress. DeadlineExceeded when some are still running then
  // (their threads finish on their own). Idempotent.
  Status Stop(std::chrono::milliseconds grace = std::chrono::seconds(10));
  // Blocks until Stop() is called (from another thread).
  void Wait();
  HttpStats stats() const;

 private:
  HttpService() = default;
  struct State;
  std::shared_ptr<State> state_;
  int port_ = 0;
};

}  // namespace fabcheck::net
