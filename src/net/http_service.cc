#include "net/http_service.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <httplib.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

#include "base/fd.h"
#include "base/json_text.h"
#include "base/log.h"
#include "base/rate_limit.h"
#include "base/strings.h"
#include "base/thread_group.h"
#include "net/auth.h"

#include <nlohmann/json.hpp>

namespace fabcheck::net {
namespace {

using Clock = std::chrono::steady_clock;

// httplib's request handling (routing, parsing, writing) on a stream this
// service gives it. Its own accept loop is never started.
class RoutedServer : public httplib::Server {
 public:
  bool Handle(httplib::Stream& stream, bool close_connection, bool& connection_closed) {
    return process_request(stream, close_connection, connection_closed, nullptr);
  }
  // httplib writes a content-provider body only while its listening socket
  // is valid (it stops at shutdown): show it ours while serving.
  void SetServing(socket_t listen_fd) { svr_sock_ = listen_fd; }

 private:
  bool process_and_close_socket(socket_t sock) override {
    ::close(sock);
    return false;
  }
};

struct SslFree {
  void operator()(SSL* ssl) const {
    // close_notify after a finished handshake; never waits for the reply.
    if (SSL_is_init_finished(ssl)) SSL_shutdown(ssl);
    SSL_free(ssl);
  }
};

struct Conn {
  UniqueFd fd;
  std::unique_ptr<SSL, SslFree> ssl;  // HTTPS: freed before fd closes (declared after it)
  bool handshaking = false;
  std::string buf;         // received and not yet consumed
  size_t scanned = 0;      // buf[0, scanned) holds no end of headers
  size_t request_end = 0;  // > 0: buf[0, request_end) is one complete request
  bool got_bytes = false;  // of the request being waited for
  bool sent_continue = false;
  Clock::time_point since;     // waiting since (the eviction order)
  Clock::time_point deadline;  // for the request being waited for
  int served = 0;
  std::string remote_ip, local_ip;
  int remote_port = 0, local_port = 0;
};

void AddressOf(const sockaddr_storage& ss, socklen_t len, std::string* ip, int* port) {
  char host[NI_MAXHOST] = {}, serv[NI_MAXSERV] = {};
  if (::getnameinfo(reinterpret_cast<const sockaddr*>(&ss), len, host, sizeof(host), serv, sizeof(serv),
                    NI_NUMERICHOST | NI_NUMERICSERV) == 0) {
    *ip = host;
    *port = std::atoi(serv);
  }
}

// Sends all of `data` before `deadline`; false on error or timeout.
ssize_t SendUntil(int fd, const char* data, size_t size, Clock::time_point deadline) {
  size_t sent = 0;
  while (sent < size) {
    ssize_t n = ::send(fd, data + sent, size - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      sent += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return -1;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return -1;
    pollfd p{fd, POLLOUT, 0};
    if (::poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 1000))) < 0 && errno != EINTR) return -1;
  }
  return static_cast<ssize_t>(sent);
}

// SendUntil through TLS.
ssize_t SslSendUntil(SSL* ssl, int fd, const char* data, size_t size, Clock::time_point deadline) {
  size_t sent = 0;
  while (sent < size) {
    ERR_clear_error();
    size_t n = 0;
    int rc = SSL_write_ex(ssl, data + sent, size - sent, &n);
    if (rc == 1) {
      sent += n;
      continue;
    }
    int err = SSL_get_error(ssl, rc);
    if (err != SSL_ERROR_WANT_READ && err != SSL_ERROR_WANT_WRITE) return -1;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return -1;
    pollfd p{fd, static_cast<short>(err == SSL_ERROR_WANT_WRITE ? POLLOUT : POLLIN), 0};
    if (::poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 1000))) < 0 && errno != EINTR) return -1;
  }
  return static_cast<ssize_t>(sent);
}

// Writes what fits now, without waiting: for answers to clients that
// already misbehaved, and for "100 Continue".
void SendNow(Conn& conn, std::string_view data) {
  if (conn.ssl) {
    if (!conn.handshaking) {
      size_t n = 0;
      ERR_clear_error();
      (void)SSL_write_ex(conn.ssl.get(), data.data(), data.size(), &n);
    }
    return;
  }
  (void)!::send(conn.fd.get(), data.data(), data.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
}

// One request's bytes, already received whole, then the response's way out.
class ConnStream : public httplib::Stream {
 public:
  ConnStream(Conn& conn, Clock::time_point write_deadline) : conn_(conn), write_deadline_(write_deadline) {}
  size_t consumed() const { return pos_; }

  bool is_readable() const override { return pos_ < conn_.request_end; }
  bool is_writable() const override {
    pollfd p{conn_.fd.get(), POLLOUT, 0};
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(write_deadline_ - Clock::now()).count();
    return left > 0 && ::poll(&p, 1, static_cast<int>(left)) > 0 && (p.revents & POLLOUT) != 0;
  }
  ssize_t read(char* ptr, size_t size) override {
    size_t n = std::min(size, conn_.request_end - pos_);
    std::memcpy(ptr, conn_.buf.data() + pos_, n);
    pos_ += n;
    return static_cast<ssize_t>(n);
  }
  ssize_t write(const char* ptr, size_t size) override {
    if (conn_.ssl) return SslSendUntil(conn_.ssl.get(), conn_.fd.get(), ptr, size, write_deadline_);
    return SendUntil(conn_.fd.get(), ptr, size, write_deadline_);
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    ip = conn_.remote_ip;
    port = conn_.remote_port;
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    ip = conn_.local_ip;
    port = conn_.local_port;
  }
  socket_t socket() const override { return conn_.fd.get(); }

 private:
  Conn& conn_;
  Clock::time_point write_deadline_;
  size_t pos_ = 0;
};

std::string_view ReasonPhrase(int status) {
  switch (status) {
    case 401: return "Unauthorized";
    case 408: return "Request Timeout";
    case 411: return "Length Required";
    case 413: return "Payload Too Large";
    case 431: return "Request Header Fields Too Large";
    case 503: return "Service Unavailable";
    default: return "Error";
  }
}

// The value of header `name` (case-insensitive) in a request head, if any.
std::optional<std::string_view> HeaderValue(std::string_view head, std::string_view name) {
  size_t pos = head.find("\r\n");
  while (pos != std::string_view::npos && pos + 2 < head.size()) {
    size_t start = pos + 2;
    size_t end = head.find("\r\n", start);
    if (end == std::string_view::npos) end = head.size();
    std::string_view line = head.substr(start, end - start);
    size_t colon = line.find(':');
    if (colon != std::string_view::npos && colon == name.size() &&
        std::equal(name.begin(), name.end(), line.begin(), [](char a, char b) {
          return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
        })) {
      return Trim(line.substr(colon + 1));
    }
    pos = end;
  }
  return std::nullopt;
}

}  // namespace

struct HttpService::State {
  HttpServiceOptions options;
  RoutedServer server;
  UniqueFd listen_fd, epoll_fd, wake_fd;
  std::thread reactor;
  std::vector<std::thread> workers;

  mutable std::mutex mu;
  std::condition_variable work_cv, done_cv;
  std::deque<std::unique_ptr<Conn>> ready;      // complete requests for the workers
  std::vector<std::unique_ptr<Conn>> returned;  // kept-alive connections back to the reactor
  int busy = 0;                                 // connections in a worker
  int live_workers = 0;
  bool stopping = false;
  bool stopped = false;
  HttpStats stats;

  RateLimit refused_log, rejected_log;

  // Reactor-only.
  std::map<int, std::unique_ptr<Conn>> waiting;

  void Wake() {
    uint64_t one = 1;
    (void)!::write(wake_fd.get(), &one, sizeof(one));
  }
  void Count(uint64_t HttpStats::*field) {
    std::lock_guard lock(mu);
    ++(stats.*field);
  }

  void RunReactor();
  void AcceptAll();
  void ReadFrom(Conn& conn, bool* close);
  bool Handshake(Conn& conn, bool* close);  // true once the connection speaks TLS
  void Examine(Conn& conn, bool* close, bool* dispatch);
  void Reject(Conn& conn, int status, const std::string& message);
  void Watch(std::unique_ptr<Conn> conn);
  void EvictOldest();
  void RunWorker();
};

void HttpService::State::Reject(Conn& conn, int status, const std::string& message) {
  std::string body = ToJsonText(nlohmann::json{{"error", message}});
  std::string response = fmt::format(
      "HTTP/1.1 {} {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}", status,
      ReasonPhrase(status), body.size(), body);
  // Best effort and never blocking: this client already misbehaved.
  SendNow(conn, response);
  if (conn.ssl && !conn.handshaking) SSL_shutdown(conn.ssl.get());
  ::shutdown(conn.fd.get(), SHUT_WR);
  if (auto held = rejected_log.Admit()) {
    LOG_WARN(options.name, "HTTP {} to {}: {}{}", status, conn.remote_ip, message, HeldBack(*held));
  }
}

void HttpService::State::Watch(std::unique_ptr<Conn> conn) {
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP;
  ev.data.fd = conn->fd.get();
  if (::epoll_ctl(epoll_fd.get(), EPOLL_CTL_ADD, conn->fd.get(), &ev) != 0) return;  // conn closes
  int fd = conn->fd.get();
  waiting[fd] = std::move(conn);
}

void HttpService::State::EvictOldest() {
  auto oldest = waiting.end();
  for (auto it = waiting.begin(); it != waiting.end(); ++it) {
    if (oldest == waiting.end() || it->second->since < oldest->second->since) oldest = it;
  }
  if (oldest == waiting.end()) return;
  if (auto held = refused_log.Admit()) {
    LOG_WARN(options.name, "at the limit of {} connections: closed the one idle longest, from {}{}",
             options.limits.max_connections, oldest->second->remote_ip, HeldBack(*held));
  }
  waiting.erase(oldest);
  Count(&HttpStats::evicted);
}

void HttpService::State::AcceptAll() {
  while (true) {
    sockaddr_storage ss{};
    socklen_t len = sizeof(ss);
    int fd = ::accept4(listen_fd.get(), reinterpret_cast<sockaddr*>(&ss), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EMFILE || errno == ENFILE) {
        // Out of descriptors: make room from the idle ones, else retry later.
        if (!waiting.empty()) {
          EvictOldest();
          continue;
        }
        if (auto held = refused_log.Admit()) {
          LOG_WARN(options.name, "out of file descriptors, not accepting for now{}", HeldBack(*held));
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      return;
    }
    auto conn = std::make_unique<Conn>();
    conn->fd.Reset(fd);
    AddressOf(ss, len, &conn->remote_ip, &conn->remote_port);
    sockaddr_storage local{};
    socklen_t local_len = sizeof(local);
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_len) == 0) {
      AddressOf(local, local_len, &conn->local_ip, &conn->local_port);
    }
    // httplib writes headers and body separately: without TCP_NODELAY, Nagle
    // and the client's delayed ACK add ~40 ms to every response.
    int yes = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes));
    conn->since = Clock::now();
    conn->deadline = conn->since + options.limits.request_timeout;
    int busy_now;
    {
      std::lock_guard lock(mu);
      ++stats.accepted;
      busy_now = busy + static_cast<int>(ready.size());
    }
    if (static_cast<int>(waiting.size()) + busy_now >= options.limits.max_connections) {
      if (!waiting.empty()) {
        EvictOldest();
      } else {
        Reject(*conn, 503, fmt::format("{} is busy: {} requests in progress (retry shortly)", options.name, busy_now));
        Count(&HttpStats::refused);
        continue;
      }
    }
    Watch(std::move(conn));
  }
}

bool HttpService::State::Handshake(Conn& conn, bool* close) {
  if (!conn.ssl) {
    // Before any TLS: a plain HTTP request gets a plain answer saying what
    // to use instead of a handshake error it cannot show.
    char head[8];
    ssize_t n = ::recv(conn.fd.get(), head, sizeof(head), MSG_PEEK | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return false;
    if (n <= 0) {
      *close = true;
      return false;
    }
    if (head[0] != 0x16) {  // not a TLS handshake record
      Count(&HttpStats::tls_failed);
      if (LooksLikePlainHttp(std::string_view(head, static_cast<size_t>(n)))) {
        std::string body = ToJsonText(nlohmann::json{
            {"error", fmt::format("{} speaks HTTPS only: use https://{}:{} (and the CA of its certificate)",
                                  options.name, conn.local_ip, conn.local_port)}});
        std::string response = fmt::format(
            "HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: {}\r\n"
            "Connection: close\r\n\r\n{}",
            body.size(), body);
        (void)!::send(conn.fd.get(), response.data(), response.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        ::shutdown(conn.fd.get(), SHUT_WR);
      }
      if (auto held = rejected_log.Admit()) {
        LOG_WARN(options.name, "{} from {} is not TLS: closed{}",
                 LooksLikePlainHttp(std::string_view(head, static_cast<size_t>(n))) ? "a plain HTTP request"
                                                                                    : "a connection",
                 conn.remote_ip, HeldBack(*held));
      }
      *close = true;
      return false;
    }
    conn.ssl.reset(SSL_new(options.tls->get()));
    if (!conn.ssl || SSL_set_fd(conn.ssl.get(), conn.fd.get()) != 1) {
      *close = true;
      return false;
    }
    SSL_set_accept_state(conn.ssl.get());
    conn.handshaking = true;
    conn.got_bytes = true;
  }
  if (!conn.handshaking) return true;
  ERR_clear_error();
  int rc = SSL_do_handshake(conn.ssl.get());
  if (rc == 1) {
    conn.handshaking = false;
    return true;
  }
  int err = SSL_get_error(conn.ssl.get(), rc);
  if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) return false;
  std::string why = TlsErrorText("the client closed the connection");
  if (auto held = rejected_log.Admit()) {
    LOG_WARN(options.name, "TLS handshake with {} failed: {}{}", conn.remote_ip, why, HeldBack(*held));
  }
  Count(&HttpStats::tls_failed);
  conn.ssl.reset();  // no close_notify on a failed handshake
  *close = true;
  return false;
}

void HttpService::State::ReadFrom(Conn& conn, bool* close) {
  if (options.tls && !Handshake(conn, close)) return;
  const size_t cap = options.limits.max_header_bytes + options.limits.max_body_bytes + 1;
  char chunk[16 * 1024];
  while (conn.buf.size() < cap) {
    ssize_t n;
    if (conn.ssl) {
      ERR_clear_error();
      size_t got = 0;
      int rc = SSL_read_ex(conn.ssl.get(), chunk, std::min(sizeof(chunk), cap - conn.buf.size()), &got);
      if (rc == 1) {
        n = static_cast<ssize_t>(got);
      } else {
        int err = SSL_get_error(conn.ssl.get(), rc);
        if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) return;
        *close = true;  // close_notify, a broken connection or garbage records
        return;
      }
    } else {
      n = ::recv(conn.fd.get(), chunk, std::min(sizeof(chunk), cap - conn.buf.size()), MSG_DONTWAIT);
    }
    if (n > 0) {
      if (!conn.got_bytes) {
        conn.got_bytes = true;
        // A kept-alive connection's next request gets the full request time.
        if (conn.served > 0) conn.deadline = Clock::now() + options.limits.request_timeout;
      }
      conn.buf.append(chunk, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    *close = true;  // the client closed or the connection broke
    return;
  }
}

void HttpService::State::Examine(Conn& conn, bool* close, bool* dispatch) {
  const HttpLimits& limits = options.limits;
  // Leading empty lines before a request are allowed (RFC 9112 2.2).
  size_t skip = 0;
  while (skip + 1 < conn.buf.size() && conn.buf[skip] == '\r' && conn.buf[skip + 1] == '\n') skip += 2;
  if (skip > 0) {
    conn.buf.erase(0, skip);
    conn.scanned = 0;
  }
  size_t end = conn.buf.find("\r\n\r\n", conn.scanned > 3 ? conn.scanned - 3 : 0);
  if (end == std::string::npos) {
    conn.scanned = conn.buf.size();
    if (conn.buf.size() > limits.max_header_bytes) {
      Reject(conn, 431, fmt::format("request headers larger than {} bytes", limits.max_header_bytes));
      Count(&HttpStats::too_large);
      *close = true;
    }
    return;
  }
  size_t head_size = end + 4;
  if (head_size > limits.max_header_bytes) {
    Reject(conn, 431, fmt::format("request headers larger than {} bytes", limits.max_header_bytes));
    Count(&HttpStats::too_large);
    *close = true;
    return;
  }
  std::string_view head(conn.buf.data(), head_size - 2);
  if (auto te = HeaderValue(head, "Transfer-Encoding"); te && ToLower(*te) != "identity") {
    Reject(conn, 411, "send the body with a Content-Length (chunked requests are not accepted)");
    *close = true;
    return;
  }
  size_t body = 0;
  if (auto cl = HeaderValue(head, "Content-Length")) {
    auto n = ParseUint(*cl);
    if (!n) {
      Reject(conn, 413, "malformed Content-Length");
      Count(&HttpStats::too_large);
      *close = true;
      return;
    }
    if (*n > limits.max_body_bytes) {
      Reject(conn, 413, fmt::format("request body of {} bytes, above the limit of {}", *n, limits.max_body_bytes));
      Count(&HttpStats::too_large);
      *close = true;
      return;
    }
    body = static_cast<size_t>(*n);
  }
  if (conn.buf.size() < head_size + body) {
    // curl and others wait for "100 Continue" before a larger body.
    if (!conn.sent_continue && HeaderValue(head, "Expect").has_value()) {
      SendNow(conn, "HTTP/1.1 100 Continue\r\n\r\n");
      conn.sent_continue = true;
    }
    return;
  }
  conn.request_end = head_size + body;
  *dispatch = true;
}

void HttpService::State::RunReactor() {
  std::vector<epoll_event> events(64);
  while (true) {
    {
      std::lock_guard lock(mu);
      if (stopping) break;
      for (auto& conn : returned) {
        conn->since = Clock::now();
        conn->deadline = conn->since + options.limits.idle_timeout;
        conn->got_bytes = false;
        conn->sent_continue = false;
        conn->scanned = 0;
        conn->request_end = 0;
        Watch(std::move(conn));
      }
      returned.clear();
    }
    // A pipelined request may already sit in the buffer of a returned connection.
    std::vector<int> to_examine;
    int n = ::epoll_wait(epoll_fd.get(), events.data(), static_cast<int>(events.size()), 100);
    for (int i = 0; i < n; ++i) {
      int fd = events[i].data.fd;
      if (fd == listen_fd.get()) {
        AcceptAll();
      } else if (fd == wake_fd.get()) {
        uint64_t value;
        (void)!::read(wake_fd.get(), &value, sizeof(value));
      } else {
        to_examine.push_back(fd);
      }
    }
    // With TLS, the rest of a pipelined request may wait decrypted inside
    // OpenSSL, with nothing left on the socket to wake epoll.
    for (auto& [fd, conn] : waiting) {
      bool pending = !conn->buf.empty() || (conn->ssl && !conn->handshaking && SSL_pending(conn->ssl.get()) > 0);
      if (pending && std::find(to_examine.begin(), to_examine.end(), fd) == to_examine.end()) {
        to_examine.push_back(fd);
      }
    }
    for (int fd : to_examine) {
      auto it = waiting.find(fd);
      if (it == waiting.end()) continue;
      Conn& conn = *it->second;
      bool close = false, dispatch = false;
      ReadFrom(conn, &close);
      if (!conn.buf.empty()) Examine(conn, &close, &dispatch);
      if (dispatch) {
        ::epoll_ctl(epoll_fd.get(), EPOLL_CTL_DEL, fd, nullptr);
        std::unique_ptr<Conn> owned = std::move(it->second);
        waiting.erase(it);
        {
          std::lock_guard lock(mu);
          ready.push_back(std::move(owned));
        }
        work_cv.notify_one();
      } else if (close) {
        waiting.erase(it);  // closes the descriptor (and leaves the epoll set)
      }
    }
    // Deadlines: a request not complete in time is answered 408; an idle
    // kept-alive connection is closed quietly.
    auto now = Clock::now();
    for (auto it = waiting.begin(); it != waiting.end();) {
      Conn& conn = *it->second;
      if (now < conn.deadline) {
        ++it;
        continue;
      }
      if (conn.got_bytes || conn.served == 0) {
        Reject(conn, 408,
               fmt::format("the request did not arrive within {} ms", options.limits.request_timeout.count()));
        Count(&HttpStats::timed_out);
      }
      it = waiting.erase(it);
    }
    std::lock_guard lock(mu);
    stats.open_connections = static_cast<int>(waiting.size()) + busy + static_cast<int>(ready.size());
  }
  waiting.clear();
  server.SetServing(INVALID_SOCKET);
  listen_fd.Reset();
}

void HttpService::State::RunWorker() {
  while (true) {
    std::unique_ptr<Conn> conn;
    {
      std::unique_lock lock(mu);
      work_cv.wait(lock, [&] { return stopping || !ready.empty(); });
      if (stopping) break;
      conn = std::move(ready.front());
      ready.pop_front();
      ++busy;
      ++stats.served;
    }
    bool close_after = conn->served + 1 >= options.limits.keep_alive_requests;
    bool connection_closed = false;
    ConnStream stream(*conn, Clock::now() + options.limits.write_timeout);
    bool ok = server.Handle(stream, close_after, connection_closed);
    ++conn->served;
    conn->buf.erase(0, conn->request_end);
    bool keep = ok && !connection_closed && !close_after;
    std::lock_guard lock(mu);
    --busy;
    if (keep && !stopping) {
      returned.push_back(std::move(conn));
      Wake();
    }
  }
  std::lock_guard lock(mu);
  --live_workers;
  done_cv.notify_all();
}

Result<std::unique_ptr<HttpService>> HttpService::Start(HttpServiceOptions options, const Routes& routes) {
  HttpLimits& limits = options.limits;
  if (limits.workers < 1 || limits.max_connections < limits.workers || limits.max_header_bytes < 256 ||
      limits.keep_alive_requests < 1 || limits.request_timeout.count() <= 0 || limits.write_timeout.count() <= 0 ||
      limits.idle_timeout.count() <= 0) {
    return InvalidArgumentError(fmt::format("{}: impossible HTTP limits (workers {}, max connections {})", options.name,
                                            limits.workers, limits.max_connections));
  }
  auto state = std::make_shared<State>();
  state->options = std::move(options);
  State& s = *state;
  const HttpServiceOptions& o = s.options;

  // Bind.
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  std::string port_text = std::to_string(o.port);
  const std::string where = fmt::format("{}:{}", o.bind, o.port == 0 ? std::string("<any>") : port_text);
  if (int rc = ::getaddrinfo(o.bind.empty() ? nullptr : o.bind.c_str(), port_text.c_str(), &hints, &found); rc != 0) {
    return InvalidArgumentError(
        fmt::format("{}: cannot listen on {}: {} (give a local address)", o.name, where, ::gai_strerror(rc)));
  }
  int bind_errno = 0;
  for (addrinfo* ai = found; ai != nullptr && !s.listen_fd.valid(); ai = ai->ai_next) {
    UniqueFd fd(::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol));
    if (!fd.valid()) {
      bind_errno = errno;
      continue;
    }
    // Address reuse only: SO_REUSEPORT would let a second server bind the
    // same port silently and take half of the requests.
    int yes = 1, no = 0;
    ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes));
    if (ai->ai_family == AF_INET6) ::setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &no, sizeof(no));
    if (::bind(fd.get(), ai->ai_addr, ai->ai_addrlen) != 0 || ::listen(fd.get(), 512) != 0) {
      bind_errno = errno;
      continue;
    }
    s.listen_fd = std::move(fd);
  }
  ::freeaddrinfo(found);
  if (!s.listen_fd.valid()) {
    return UnavailableError(
        fmt::format("{}: cannot listen on {}: {} ({})", o.name, where, std::strerror(bind_errno), o.bind_hint));
  }
  sockaddr_storage bound{};
  socklen_t bound_len = sizeof(bound);
  std::string ip;
  int port = 0;
  if (::getsockname(s.listen_fd.get(), reinterpret_cast<sockaddr*>(&bound), &bound_len) == 0) {
    AddressOf(bound, bound_len, &ip, &port);
  }

  // Routes and httplib's own limits (the ones it applies while handling).
  s.server.set_payload_max_length(o.limits.max_body_bytes);
  s.server.set_keep_alive_max_count(static_cast<size_t>(o.limits.keep_alive_requests));
  s.server.set_keep_alive_timeout(std::max<time_t>(1, o.limits.idle_timeout.count() / 1000));
  if (o.token) {
    s.server.set_pre_routing_handler([&s](const httplib::Request& req, httplib::Response& res) {
      const auto& open = s.options.public_paths;
      if (std::find(open.begin(), open.end(), req.path) != open.end())
        return httplib::Server::HandlerResponse::Unhandled;
      if (BearerMatches(req.get_header_value("Authorization"), *s.options.token)) {
        return httplib::Server::HandlerResponse::Unhandled;
      }
      s.Count(&HttpStats::unauthorized);
      if (s.options.on_unauthorized) s.options.on_unauthorized(req.remote_addr);
      res.status = 401;
      res.set_content(ToJsonText(nlohmann::json{{"error", s.options.unauthorized_message}}), "application/json");
      return httplib::Server::HandlerResponse::Handled;
    });
  }
  if (routes) routes(s.server);

  s.epoll_fd.Reset(::epoll_create1(EPOLL_CLOEXEC));
  s.wake_fd.Reset(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!s.epoll_fd.valid() || !s.wake_fd.valid()) return ErrnoError(errno, o.name + ": epoll/eventfd");
  for (int fd : {s.listen_fd.get(), s.wake_fd.get()}) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    if (::epoll_ctl(s.epoll_fd.get(), EPOLL_CTL_ADD, fd, &ev) != 0) return ErrnoError(errno, o.name + ": epoll_ctl");
  }
  s.server.SetServing(s.listen_fd.get());
  std::unique_ptr<HttpService> service(new HttpService());
  service->state_ = state;
  service->port_ = port;
  // Under a thread limit the service does not start, and says why; the
  // threads that did start are stopped and joined by Stop().
  for (int i = 0; i < o.limits.workers; ++i) {
    std::thread worker;
    {
      std::lock_guard lock(s.mu);
      ++s.live_workers;
    }
    Status started = base::StartThread(o.name + " worker", worker, [state] { state->RunWorker(); });
    if (!started.ok()) {
      {
        std::lock_guard lock(s.mu);
        --s.live_workers;
      }
      (void)service->Stop();
      return started;
    }
    s.workers.push_back(std::move(worker));
  }
  if (Status started = base::StartThread(o.name + " event thread", s.reactor, [state] { state->RunReactor(); });
      !started.ok()) {
    (void)service->Stop();
    return started;
  }
  return service;
}

HttpService::~HttpService() {
  if (state_) (void)Stop();
}

Status HttpService::Stop(std::chrono::milliseconds grace) {
  State& s = *state_;
  {
    std::lock_guard lock(s.mu);
    if (s.stopped) return Status::Ok();
    s.stopping = true;
    s.ready.clear();
    s.returned.clear();
  }
  s.Wake();
  s.work_cv.notify_all();
  if (s.reactor.joinable()) s.reactor.join();
  bool all_done;
  {
    std::unique_lock lock(s.mu);
    all_done = s.done_cv.wait_for(lock, grace, [&] { return s.live_workers == 0; });
  }
  for (auto& t : s.workers) {
    if (all_done) {
      t.join();
    } else {
      t.detach();  // they hold the state; a handler still running finishes on its own
    }
  }
  s.workers.clear();
  int still_busy;
  {
    std::lock_guard lock(s.mu);
    s.stopped = true;
    still_busy = s.busy;
  }
  s.done_cv.notify_all();
  if (!all_done) {
    return DeadlineExceededError(
        fmt::format("{}: {} request(s) still running {} ms after stop", s.options.name, still_busy, grace.count()));
  }
  return Status::Ok();
}

void HttpService::Wait() {
  State& s = *state_;
  std::unique_lock lock(s.mu);
  s.done_cv.wait(lock, [&] { return s.stopped; });
}

HttpStats HttpService::stats() const {
  std::lock_guard lock(state_->mu);
  return state_->stats;
}

}  // namespace fabcheck::net
