#include "net/http_client.h"

#include <fmt/format.h>

#include <openssl/x509_vfy.h>

#include <cstdlib>

#include <condition_variable>
#include <map>
#include <mutex>
#include <new>
#include <optional>
#include <thread>

#include "base/thread_group.h"
#include "base/units.h"

namespace fabcheck::net {

httplib::Client MakeHttpClient(const std::string& host, int port, const TlsFiles* tls, const std::string& tls_name) {
  const std::string dialled = tls && !tls_name.empty() ? tls_name : host;
  // IPv6 literals go in brackets in the URL httplib parses.
  const std::string in_url = dialled.find(':') != std::string::npos ? "[" + dialled + "]" : dialled;
  httplib::Client http(fmt::format("{}://{}:{}", tls ? "https" : "http", in_url, port), tls ? tls->cert : "",
                       tls ? tls->key : "");
  if (tls) {
    if (!tls->ca.empty()) http.set_ca_cert_path(tls->ca.c_str());
    http.enable_server_certificate_verification(true);
    if (dialled != host) http.set_hostname_addr_map(std::map<std::string, std::string>{{dialled, host}});
  }
  return http;
}

std::string HttpErrorText(httplib::Error error, const std::string& where, const TlsFiles* tls,
                          const std::string& name_checked, long verify_result) {
  if (error == httplib::Error::SSLServerVerification && verify_result == X509_V_ERR_CERT_HAS_EXPIRED) {
    return fmt::format("{}: its certificate has expired (renew the server's --tls-cert)", where);
  }
  if (error == httplib::Error::SSLServerVerification && verify_result == X509_V_ERR_CERT_NOT_YET_VALID) {
    return fmt::format("{}: its certificate is not yet valid (check the clocks of both nodes, or the certificate's "
                       "dates)",
                       where);
  }
  if (error == httplib::Error::SSLServerVerification) {
    return fmt::format(
        "{}: its certificate does not verify against {} or does not name {} (check --tls-ca and the certificate's "
        "subjectAltName)",
        where, tls && !tls->ca.empty() ? "--tls-ca " + tls->ca : "the system's CAs", name_checked);
  }
  if (error == httplib::Error::SSLConnection) {
    return fmt::format(
        "{}: TLS handshake failed (does it serve HTTPS? with mutual TLS, pass --tls-cert and --tls-key)", where);
  }
  return fmt::format("{}: {}", where, httplib::to_string(error));
}

namespace {

using SteadyClock = std::chrono::steady_clock;

// Ends calls that pass their deadline while httplib is blocked inside them
// (an answer's headers or body trickling in): one thread for the process,
// started on first use, closing the socket of each call past its deadline.
class DeadlineWatch {
 public:
  static DeadlineWatch& Get() {
    static DeadlineWatch* watch = new DeadlineWatch();  // never destroyed: calls may outlive static teardown
    return *watch;
  }
  // False when no watch thread could start (the body cap still holds).
  bool Add(httplib::Client* http, SteadyClock::time_point deadline) {
    std::lock_guard lock(mu_);
    if (!thread_.joinable() && !base::StartThread("the HTTP deadline watch", thread_, [this] { Loop(); }).ok()) {
      return false;
    }
    calls_.emplace(http, deadline);
    cv_.notify_all();
    return true;
  }
  void Remove(httplib::Client* http) {
    std::lock_guard lock(mu_);
    calls_.erase(http);
  }

 private:
  void Loop() {
    std::unique_lock lock(mu_);
    while (true) {
      auto next = SteadyClock::time_point::max();
      const auto now = SteadyClock::now();
      for (auto& [http, deadline] : calls_) {
        if (deadline <= now) {
          http->stop();  // shuts the socket down: the blocked read returns
          deadline = SteadyClock::time_point::max();
        }
        next = std::min(next, deadline);
      }
      if (next == SteadyClock::time_point::max()) {
        cv_.wait(lock);
      } else {
        cv_.wait_until(lock, next);
      }
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<httplib::Client*, SteadyClock::time_point> calls_;
  std::thread thread_;
};

}  // namespace

Result<BoundedAnswer> SendBounded(httplib::Client& http, const BoundedRequest& r, httplib::Error* transport_error) {
  *transport_error = httplib::Error::Success;
  BoundedAnswer answer;
  bool too_big = false, late = false;
  httplib::Request req;
  req.method = r.method;
  req.path = r.path;
  if (r.method == "POST") {
    req.body = r.body;
    req.set_header("Content-Type", "application/json");
  }
  req.response_handler = [&](const httplib::Response& res) {
    // A declared length over the cap ends the call before any body is read.
    if (res.has_header("Content-Length")) {
      const std::string declared = res.get_header_value("Content-Length");
      if (declared.size() > 18 || std::strtoull(declared.c_str(), nullptr, 10) > r.max_body) {
        too_big = true;
        return false;
      }
    }
    return true;
  };
  req.content_receiver = [&](const char* data, size_t len, uint64_t, uint64_t) {
    if (answer.body.size() + len > r.max_body) {
      too_big = true;
      return false;
    }
    if (SteadyClock::now() > r.deadline) {
      late = true;
      return false;
    }
    answer.body.append(data, len);
    return true;
  };
  const bool watched = DeadlineWatch::Get().Add(&http, r.deadline);
  std::optional<httplib::Result> sent;
  try {
    sent.emplace(http.send(req));
  } catch (const std::bad_alloc&) {
    if (watched) DeadlineWatch::Get().Remove(&http);
    return ResourceExhaustedError(fmt::format("{}: out of memory reading the answer", r.where));
  }
  if (watched) DeadlineWatch::Get().Remove(&http);
  httplib::Result& res = *sent;
  if (too_big) {
    return ResourceExhaustedError(fmt::format(
        "{}: the answer is larger than {}, more than this route ever sends (not a fabcheck agent, or a hostile one)",
        r.where, FormatSize(r.max_body)));
  }
  // Past the deadline the watch closed the socket: an answer read "until
  // close" then looks complete, so the clock decides, not httplib.
  if (late || SteadyClock::now() >= r.deadline) {
    return DeadlineExceededError(fmt::format("{}: no complete answer before the deadline", r.where));
  }
  if (!res) {
    *transport_error = res.error();
    return UnavailableError(fmt::format("{}: {}", r.where, httplib::to_string(res.error())));
  }
  answer.status = res->status;
  return answer;
}

}  // namespace fabcheck::net
