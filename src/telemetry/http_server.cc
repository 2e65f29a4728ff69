#include "telemetry/http_server.h"

#include <httplib.h>

#include <chrono>

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
    if (out.host.find(':') != std::string::npos) {
      return InvalidArgumentError("--listen '" + text + "': an IPv6 address goes in brackets ([::1]:9877); a host " +
                                  "name or IPv4 address has no ':'");
    }
  }
  auto port = ParseInt(port_text);
  if (!port || *port < 0 || *port > 65535) {
    return InvalidArgumentError("--listen '" + text + "': port must be 0..65535");
  }
  out.port = static_cast<int>(*port);
  return out;
}

net::HttpLimits HttpServer::DefaultLimits() {
  net::HttpLimits limits;
  // Every request holds a worker only while it is handled (reading happens
  // before, on the service's event thread). A node has one or two Prometheus
  // servers scraping it and they share one collection, so a small pool: each
  // worker costs a stack and (without M_ARENA_MAX) a malloc arena.
  limits.workers = 16;
  limits.max_connections = 256;
  limits.max_header_bytes = 16 * 1024;
  limits.max_body_bytes = 64 * 1024;
  // Few requests per connection: a scraper reconnects now and then, which
  // spreads many scrapers over the workers (Prometheus reconnects for each
  // scrape anyway, its interval being longer than the idle timeout).
  limits.keep_alive_requests = 10;
  limits.idle_timeout = std::chrono::seconds(5);
  limits.request_timeout = std::chrono::seconds(10);
  limits.write_timeout = std::chrono::seconds(10);
  return limits;
}

HttpServer::HttpServer(ExporterService& service, net::HttpLimits limits) : service_(service), limits_(limits) {}

HttpServer::~HttpServer() { Stop(); }

Status HttpServer::Start(const ListenAddress& address, std::shared_ptr<const net::TlsContext> tls) {
  net::HttpServiceOptions options;
  options.tls = std::move(tls);
  options.name = "exporter";
  options.bind = address.host;
  options.port = address.port;
  options.bind_hint = "address in use or not local? pick another with --listen ADDR:PORT";
  options.limits = limits_;
  ExporterService& service = service_;
  auto routes = [&service](httplib::Server& server) {
    server.Get("/metrics", [&service](const httplib::Request& req, httplib::Response& res) {
      std::string error;
      std::shared_ptr<const ScrapeOutput> output = service.Scrape(&error);
      if (!output) {
        res.status = 503;
        res.set_content("fabcheck exporter cannot collect now: " + error + "\n", "text/plain");
        return;
      }
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
      res.set_content_provider(body->size(), std::string(kPrometheusContentType),
                               [output, body](size_t offset, size_t length, httplib::DataSink& sink) {
                                 return sink.write(body->data() + offset, length);
                               });
    });
    server.Get("/healthz",
               [](const httplib::Request&, httplib::Response& res) { res.set_content("ok\n", "text/plain"); });
    server.Get("/", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(
          "<html><head><title>fabcheck exporter</title></head><body><h1>fabcheck exporter</h1>"
          "<p><a href=\"/metrics\">/metrics</a> (Prometheus text format) &middot; <a href=\"/healthz\">/healthz</a></p>"
          "</body></html>\n",
          "text/html");
    });
  };
  ASSIGN_OR_RETURN(http_, net::HttpService::Start(std::move(options), routes));
  port_ = http_->port();
  LOG_INFO("exporter", "serving /metrics on {}:{}", address.host, port_);
  return Status::Ok();
}

void HttpServer::Wait() {
  if (http_) http_->Wait();
}

void HttpServer::Stop() {
  if (!http_) return;
  Status s = http_->Stop();
  if (!s.ok()) LOG_WARN("exporter", "{}", s.message());
}

}  // namespace fabcheck::telemetry
