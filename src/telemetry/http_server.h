// The exporter's HTTP endpoint (cpp-httplib): /metrics, /healthz and a small
// index page. Binds only where told; the DaemonSet decides the exposure.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "net/http_service.h"
#include "telemetry/exporter_service.h"

namespace fabcheck::telemetry {

struct ListenAddress {
  std::string host;  // "0.0.0.0", "127.0.0.1", "::"
  int port = 0;
};
// "ADDR:PORT", ":PORT" (all IPv4 addresses), "[::1]:PORT".
Result<ListenAddress> ParseListenAddress(const std::string& text);

class HttpServer {
 public:
  // `limits`: connections, header and body size, time per request (the
  // defaults suit one or two Prometheus servers and the odd curl).
  explicit HttpServer(ExporterService& service, net::HttpLimits limits = DefaultLimits());
  static net::HttpLimits DefaultLimits();
  ~HttpServer();
  // Binds and starts serving on a background thread. Port 0 picks a free port.
  // With `tls`, /metrics and /healthz are served over HTTPS only.
  Status Start(const ListenAddress& address, std::shared_ptr<const net::TlsContext> tls = nullptr);
  int port() const { return port_; }
  // Blocks until Stop() (from a signal handler thread or another thread).
  void Wait();
  void Stop();

 private:
  ExporterService& service_;
  net::HttpLimits limits_;
  std::unique_ptr<net::HttpService> http_;
  int port_ = 0;
};

}  // namespace fabcheck::telemetry
