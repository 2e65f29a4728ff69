#include "telemetry/http_server.h"

#include <httplib.h>

#include <chrono>
#include <thread>

#include "base/log.h"
#include "base/strings.h"
#include "telemetry/compression.h"
#include "telemetry/prometheus_text.h"

namespace fabcheck::telemetry {

Result<ListenAddress> ParseListenAddress(const std::string& text) {
  ListenAddress out;
  std::string port_text;
  if (StartsWith(text, "[")) {
    size_t close = text.find("]:");
    if (close == std::string::npos) {
      return InvalidArgumentError("--listen '" + text + "': expected [IPV6]:PORT, e.g. [::1]:9877");
    }
    out.host = text.substr(1, close - 1);
    port_text = text.substr(close + 2);
  } else {
    size_t colon = text.rfind(':');
    if (colon == std::string::npos) {
      return InvalidArgumentError("--listen '" + text + "': expected ADDR:PORT or :PORT, e.g. 0.0.0.0:9877");
    }
    out.host = colon == 0 ? "0.0.0.0" : text.substr(0, colon);
    port_text = text.substr(colon + 1);
  }
  auto port = ParseInt(port_text);
  if (!port || *port < 0 || *port > 65535) {
    return InvalidArgumentError("--listen '" + text + "': port must be 0..65535");
  }
  out.port = static_cast<int>(*port);
  return out;
}

namespace {
constexpr size_t kWorkerThreads = 16;
// Few requests per connection, so that when more scrapers than workers
// connect, a waiting connection gets a worker within a few scrapes' time
// (with 100, 50 scrapers saw a p99 of ~1 s; Prometheus reconnects for each
// scrape anyway, its interval being longer than the idle timeout).
constexpr size_t kKeepAliveRequests = 10;
}  // namespace

struct HttpServer::Impl {
  httplib::Server server;
  std::thread thread;
};

HttpServer::HttpServer(ExporterService& service) : impl_(std::make_unique<Impl>()) {
  auto& server = impl_->server;
  // Every keep-alive connection holds a worker while it is open. A node has
  // one or two Prometheus servers scraping it, so a small bounded pool: each
  // worker costs a stack and (without M_ARENA_MAX) a malloc arena, and
  // more workers than cores buy nothing since scrapers share one collection.
  // Connections beyond the pool wait in the accept queue for a free worker
  // (a worker is freed after kKeepAliveRequests requests or an idle period).
  server.new_task_queue = [] { return new httplib::ThreadPool(kWorkerThreads); };
  server.set_keep_alive_max_count(kKeepAliveRequests);
  server.set_keep_alive_timeout(5);
  server.set_read_timeout(10, 0);
  server.set_write_timeout(10, 0);
  server.set_payload_max_length(64 * 1024);
  // httplib writes headers and body separately: without TCP_NODELAY, Nagle
  // and the client's delayed ACK add ~40 ms to every scrape (measured).
  server.set_tcp_nodelay(true);
  // httplib's default also sets SO_REUSEPORT, which lets a second exporter
  // bind the same port silently and steal half the scrapes: address reuse only.
  server.set_socket_options([](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, reinterpret_cast<const void*>(&yes), sizeof(yes));
    // Inherited by accepted connections on Linux (set_tcp_nodelay applies only where httplib sets it).
    ::setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, reinterpret_cast<const void*>(&yes), sizeof(yes));
  });
  server.Get("/metrics", [&service](const httplib::Request& req, httplib::Response& res) {
    std::shared_ptr<const ScrapeOutput> output = service.Scrape();
    const std::string* body = &output->text();
    if (AcceptsGzip(req.get_header_value("Accept-Encoding"))) {
      if (const std::string* gzip = output->Gzip()) {
        body = gzip;
        res.set_header("Content-Encoding", "gzip");
      }
    }
    res.set_header("Vary", "Accept-Encoding");
    // A provider with a known length is sent as is: httplib neither copies the
    // body into the response nor compresses it again (it would, at zlib's
    // default level, for every scraper, for a text/* body set with set_content).
    // The provider holds the shared output until the response is written.
    res.set_content_provider(
        body->size(), std::string(kPrometheusContentType),
        [output, body](size_t offset, size_t length, httplib::DataSink& sink) {
          return sink.write(body->data() + offset, length);
        });
  });
  server.Get("/healthz", [](const httplib::Request&, httplib::Response& res) { res.set_content("ok\n", "text/plain"); });
  server.Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(
        "<html><head><title>fabcheck exporter</title></head><body><h1>fabcheck exporter</h1>"
        "<p><a href=\"/metrics\">/metrics</a> (Prometheus text format) &middot; <a href=\"/healthz\">/healthz</a></p>"
        "</body></html>\n",
        "text/html");
  });
}

HttpServer::~HttpServer() { Stop(); }

Status HttpServer::Start(const ListenAddress& address) {
  auto& server = impl_->server;
  if (address.port == 0) {
    port_ = server.bind_to_any_port(address.host.c_str());
    if (port_ < 0) return UnavailableError("cannot listen on " + address.host + ": no free port");
  } else {
    if (!server.bind_to_port(address.host.c_str(), address.port)) {
      return UnavailableError("cannot listen on " + address.host + ":" + std::to_string(address.port) +
                              " (address in use or not local? pick another with --listen ADDR:PORT)");
    }
    port_ = address.port;
  }
  impl_->thread = std::thread([this] { impl_->server.listen_after_bind(); });
  // httplib's stop() does nothing before the accept loop runs: wait for it, so
  // a Stop() right after Start() cannot be lost (and leave Stop() joining forever).
  for (int i = 0; i < 500 && !server.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (!server.is_running()) return UnavailableError("the HTTP server did not start on port " + std::to_string(port_));
  LOG_INFO("exporter", "serving /metrics on {}:{}", address.host, port_);
  return Status::Ok();
}

void HttpServer::Wait() {
  if (impl_->thread.joinable()) impl_->thread.join();
}

void HttpServer::Stop() {
  impl_->server.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

}  // namespace fabcheck::telemetry
