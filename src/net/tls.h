// TLS for fabcheck's servers and clients (OpenSSL): the agent's control API,
// the exporter's /metrics, and the perf control channel.
//
// A server gets a certificate and key (--tls-cert, --tls-key); with a CA
// (--tls-ca) it also asks every client for a certificate signed by that CA
// and refuses those without one (mutual TLS). A client verifies the server's
// certificate against its CA (--tls-ca; the system's store when none) and
// its name, and presents its own certificate when given one.
//
// TLS 1.2 or newer only. Bearer tokens and the perf HMAC stay on top: TLS
// says who the peer is and hides the traffic; the token says it may ask.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"

// OpenSSL's types, without its headers in every includer.
struct ssl_ctx_st;
struct ssl_st;

namespace fabcheck::net {

struct TlsFiles {
  std::string cert;  // PEM certificate chain (server: required; client: for mutual TLS)
  std::string key;   // PEM private key of `cert`
  std::string ca;    // PEM CA bundle: server = the clients' CA (mutual TLS); client = the server's CA
  bool enabled() const { return !cert.empty() || !key.empty() || !ca.empty(); }
};

class TlsContext {
 public:
  // Errors name the file and what is wrong with it (missing, not PEM, the key
  // not matching the certificate, a CA file with no certificate).
  static Result<std::shared_ptr<TlsContext>> ForServer(const TlsFiles& files);
  static Result<std::shared_ptr<TlsContext>> ForClient(const TlsFiles& files);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  ssl_ctx_st* get() const { return ctx_; }
  bool server() const { return server_; }
  bool mutual() const { return mutual_; }
  const TlsFiles& files() const { return files_; }

 private:
  TlsContext() = default;
  ssl_ctx_st* ctx_ = nullptr;
  bool server_ = false;
  bool mutual_ = false;
  TlsFiles files_;
};

// The name a certificate answers to, for peers that reach its holder by an
// address it does not list: the first DNS name of its subjectAltName that is
// not a wildcard, else its first IP address. InvalidArgument naming the file
// when it has neither.
Result<std::string> CertificateName(const std::string& cert_path);

// The OpenSSL error queue as one line (and cleared), e.g. "certificate
// verify failed"; `fallback` when the queue is empty.
std::string TlsErrorText(const std::string& fallback);
std::string TlsErrorQueue();  // the same without hints; "" when empty

// True when the first bytes a client sent are a plain HTTP request line
// ("GET ", "POST ", ...) rather than a TLS ClientHello (0x16 0x03 ...).
bool LooksLikePlainHttp(std::string_view first_bytes);

// One TLS connection over a connected socket (not owned), for blocking
// request/response protocols such as the perf control channel. Every call
// waits at most until its deadline.
class TlsStream {
 public:
  // Handshakes as a client (verifying `server_name` when not empty) or as a
  // server, within `timeout_ms`.
  static Result<std::unique_ptr<TlsStream>> Connect(const TlsContext& ctx, int fd, const std::string& server_name,
                                                    int timeout_ms);
  static Result<std::unique_ptr<TlsStream>> Accept(const TlsContext& ctx, int fd, int timeout_ms);
  ~TlsStream();
  TlsStream(const TlsStream&) = delete;
  TlsStream& operator=(const TlsStream&) = delete;

  // Writes all of `size` bytes; reads up to `size` (0: the peer closed).
  Result<size_t> Write(const void* data, size_t size, int timeout_ms);
  Result<size_t> Read(void* data, size_t size, int timeout_ms);
  int fd() const { return fd_; }

 private:
  TlsStream() = default;
  static Result<std::unique_ptr<TlsStream>> Handshake(const TlsContext& ctx, int fd, bool client,
                                                      const std::string& server_name, int timeout_ms);
  ssl_st* ssl_ = nullptr;
  int fd_ = -1;
};

}  // namespace fabcheck::net
