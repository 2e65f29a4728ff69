#include "net/tls.h"

#include <fmt/format.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "base/log.h"
#include "net/cert_dates.h"

namespace fabcheck::net {
namespace {

using Clock = std::chrono::steady_clock;

Status CheckReadable(const std::string& path, const char* flag) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return NotFoundError(fmt::format("{} {}: {}", flag, path, std::strerror(errno)));
  }
  if (!S_ISREG(st.st_mode)) return InvalidArgumentError(fmt::format("{} {}: not a regular file", flag, path));
  return Status::Ok();
}

// A private key is a secret like the token (auth.h): readable by its owner only.
Status CheckPrivate(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return NotFoundError(fmt::format("--tls-key {}: {}", path, std::strerror(errno)));
  if ((st.st_mode & 077) != 0) {
    return PermissionDeniedError(fmt::format(
        "--tls-key {} is readable by group or others (mode {:04o}): chmod 600 it (from a Kubernetes Secret: "
        "defaultMode: 0400 on the volume)",
        path, st.st_mode & 07777));
  }
  return Status::Ok();
}

// Waits for the socket to become readable or writable as OpenSSL asks.
bool WaitFor(int fd, int ssl_error, Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  if (left <= 0) return false;
  pollfd p{fd, static_cast<short>(ssl_error == SSL_ERROR_WANT_WRITE ? POLLOUT : POLLIN), 0};
  int n = ::poll(&p, 1, static_cast<int>(left));
  return n > 0 || (n < 0 && errno == EINTR);
}

Result<std::shared_ptr<TlsContext>> Finish(SSL_CTX* ctx, std::shared_ptr<TlsContext> out);

// The deadlines below need a socket that never blocks in OpenSSL's reads
// and writes.
Status MakeNonBlocking(int fd) {
  int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) return ErrnoError(errno, "TLS: fcntl(O_NONBLOCK)");
  return Status::Ok();
}

}  // namespace

std::string TlsErrorText(const std::string& fallback) {
  std::string text = TlsErrorQueue();
  if (text.find("unsupported certificate") != std::string::npos) {
    text += " (the peer rejects this side's certificate for its use: an agent's certificate needs both serverAuth "
            "and clientAuth in extendedKeyUsage for mutual TLS between agents)";
  }
  return text.empty() ? fallback : text;
}

std::string TlsErrorQueue() {
  std::string text;
  while (unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof(buf));
    // "error:0A000086:SSL routines::certificate verify failed" -> the reason.
    const char* reason = ERR_reason_error_string(e);
    if (!text.empty()) text += "; ";
    text += reason ? reason : buf;
  }
  return text;
}

bool LooksLikePlainHttp(std::string_view b) {
  static constexpr std::string_view kMethods[] = {"GET ",     "POST ",   "PUT ",     "HEAD ",
                                                  "DELETE ",  "PATCH ",  "OPTIONS ", "CONNECT "};
  for (std::string_view m : kMethods) {
    if (b.size() >= m.size() && b.substr(0, m.size()) == m) return true;
  }
  return false;
}

TlsContext::~TlsContext() {
  if (ctx_) SSL_CTX_free(ctx_);
}

Result<std::shared_ptr<TlsContext>> TlsContext::ForServer(const TlsFiles& files) {
  if (files.cert.empty() || files.key.empty()) {
    return InvalidArgumentError("TLS needs both --tls-cert and --tls-key (a PEM certificate and its private key)");
  }
  RETURN_IF_ERROR(CheckReadable(files.cert, "--tls-cert"));
  RETURN_IF_ERROR(CheckReadable(files.key, "--tls-key"));
  RETURN_IF_ERROR(CheckPrivate(files.key));
  if (!files.ca.empty()) RETURN_IF_ERROR(CheckReadable(files.ca, "--tls-ca"));
  ERR_clear_error();
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  if (!ctx) return InternalError("TLS: " + TlsErrorText("cannot create an OpenSSL context"));
  std::shared_ptr<TlsContext> out(new TlsContext());
  out->ctx_ = ctx;
  out->server_ = true;
  out->files_ = files;
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  if (SSL_CTX_use_certificate_chain_file(ctx, files.cert.c_str()) != 1) {
    return InvalidArgumentError(fmt::format("--tls-cert {}: {} (a PEM certificate chain is expected)", files.cert,
                                            TlsErrorText("unreadable")));
  }
  if (SSL_CTX_use_PrivateKey_file(ctx, files.key.c_str(), SSL_FILETYPE_PEM) != 1) {
    std::string why = TlsErrorText("unreadable");
    if (why.find("mismatch") != std::string::npos) {
      return InvalidArgumentError(
          fmt::format("--tls-key {} is not the key of --tls-cert {} ({})", files.key, files.cert, why));
    }
    return InvalidArgumentError(fmt::format("--tls-key {}: {} (a PEM private key is expected)", files.key, why));
  }
  if (SSL_CTX_check_private_key(ctx) != 1) {
    return InvalidArgumentError(fmt::format("--tls-key {} is not the key of --tls-cert {}: {}", files.key, files.cert,
                                            TlsErrorText("they do not match")));
  }
  // Served anyway (the operator may be renewing it), but never silently.
  if (std::string problem = CertificateDateProblem(files.cert); !problem.empty()) LOG_WARN("tls", "{}", problem);
  if (!files.ca.empty()) {
    if (SSL_CTX_load_verify_locations(ctx, files.ca.c_str(), nullptr) != 1) {
      return InvalidArgumentError(
          fmt::format("--tls-ca {}: {} (a PEM CA bundle is expected)", files.ca, TlsErrorText("unreadable")));
    }
    // Mutual TLS: a client without a certificate of this CA is refused in the handshake.
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
    STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(files.ca.c_str());
    if (names) SSL_CTX_set_client_CA_list(ctx, names);
    out->mutual_ = true;
  }
  return Finish(ctx, std::move(out));
}

Result<std::shared_ptr<TlsContext>> TlsContext::ForClient(const TlsFiles& files) {
  if (files.cert.empty() != files.key.empty()) {
    return InvalidArgumentError("a client certificate needs both --tls-cert and --tls-key");
  }
  if (!files.cert.empty()) {
    RETURN_IF_ERROR(CheckReadable(files.cert, "--tls-cert"));
    RETURN_IF_ERROR(CheckReadable(files.key, "--tls-key"));
    RETURN_IF_ERROR(CheckPrivate(files.key));
  }
  if (!files.ca.empty()) RETURN_IF_ERROR(CheckReadable(files.ca, "--tls-ca"));
  ERR_clear_error();
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  if (!ctx) return InternalError("TLS: " + TlsErrorText("cannot create an OpenSSL context"));
  std::shared_ptr<TlsContext> out(new TlsContext());
  out->ctx_ = ctx;
  out->files_ = files;
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  if (!files.ca.empty()) {
    if (SSL_CTX_load_verify_locations(ctx, files.ca.c_str(), nullptr) != 1) {
      return InvalidArgumentError(
          fmt::format("--tls-ca {}: {} (a PEM CA bundle is expected)", files.ca, TlsErrorText("unreadable")));
    }
  } else {
    SSL_CTX_set_default_verify_paths(ctx);
  }
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  if (!files.cert.empty()) {
    if (SSL_CTX_use_certificate_chain_file(ctx, files.cert.c_str()) != 1) {
      return InvalidArgumentError(fmt::format("--tls-cert {}: {}", files.cert, TlsErrorText("unreadable")));
    }
    if (SSL_CTX_use_PrivateKey_file(ctx, files.key.c_str(), SSL_FILETYPE_PEM) != 1 ||
        SSL_CTX_check_private_key(ctx) != 1) {
      return InvalidArgumentError(
          fmt::format("--tls-key {}: {}", files.key, TlsErrorText("not the key of --tls-cert")));
    }
    out->mutual_ = true;
  }
  return Finish(ctx, std::move(out));
}

Result<std::string> CertificateName(const std::string& cert_path) {
  RETURN_IF_ERROR(CheckReadable(cert_path, "--tls-cert"));
  FILE* f = std::fopen(cert_path.c_str(), "r");
  if (!f) return InvalidArgumentError(fmt::format("--tls-cert {}: {}", cert_path, std::strerror(errno)));
  X509* cert = PEM_read_X509(f, nullptr, nullptr, nullptr);
  std::fclose(f);
  if (!cert) {
    return InvalidArgumentError(fmt::format("--tls-cert {}: {} (a PEM certificate is expected)", cert_path,
                                            TlsErrorText("unreadable")));
  }
  std::string dns, ip;
  auto* names = static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  for (int i = 0; names && i < sk_GENERAL_NAME_num(names); ++i) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(names, i);
    if (name->type == GEN_DNS && dns.empty()) {
      const ASN1_IA5STRING* s = name->d.dNSName;
      dns.assign(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)), ASN1_STRING_length(s));
      // A wildcard names no one host to dial.
      if (dns.find('*') != std::string::npos) dns.clear();
    } else if (name->type == GEN_IPADD && ip.empty()) {
      const ASN1_OCTET_STRING* s = name->d.iPAddress;
      char text[64] = {};
      int family = ASN1_STRING_length(s) == 4 ? AF_INET : ASN1_STRING_length(s) == 16 ? AF_INET6 : 0;
      if (family && inet_ntop(family, ASN1_STRING_get0_data(s), text, sizeof(text))) ip = text;
    }
  }
  GENERAL_NAMES_free(names);
  X509_free(cert);
  if (!dns.empty()) return dns;
  if (!ip.empty()) return ip;
  return InvalidArgumentError(fmt::format(
      "--tls-cert {} lists no DNS name or IP address in subjectAltName (the others check it; docs/tls.md)", cert_path));
}

namespace {
Result<std::shared_ptr<TlsContext>> Finish(SSL_CTX* ctx, std::shared_ptr<TlsContext> out) {
  // No renegotiation, no compression (CRIME); session tickets are fine.
  SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  return out;
}
}  // namespace

Result<std::unique_ptr<TlsStream>> TlsStream::Connect(const TlsContext& ctx, int fd, const std::string& server_name,
                                                      int timeout_ms) {
  return Handshake(ctx, fd, /*client=*/true, server_name, timeout_ms);
}

Result<std::unique_ptr<TlsStream>> TlsStream::Accept(const TlsContext& ctx, int fd, int timeout_ms) {
  return Handshake(ctx, fd, /*client=*/false, "", timeout_ms);
}

Result<std::unique_ptr<TlsStream>> TlsStream::Handshake(const TlsContext& ctx, int fd, bool client,
                                                        const std::string& server_name, int timeout_ms) {
  std::unique_ptr<TlsStream> s(new TlsStream());
  ERR_clear_error();
  s->ssl_ = SSL_new(ctx.get());
  s->fd_ = fd;
  RETURN_IF_ERROR(MakeNonBlocking(fd));
  if (!s->ssl_ || SSL_set_fd(s->ssl_, fd) != 1) return InternalError("TLS: " + TlsErrorText("SSL_new failed"));
  if (client && !server_name.empty()) {
    SSL_set_tlsext_host_name(s->ssl_, server_name.c_str());
    // The certificate must name the host (DNS name or IP address) we dialled.
    X509_VERIFY_PARAM* param = SSL_get0_param(s->ssl_);
    X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    if (X509_VERIFY_PARAM_set1_ip_asc(param, server_name.c_str()) != 1) {
      X509_VERIFY_PARAM_set1_host(param, server_name.c_str(), 0);
    }
  }
  const std::string peer = client ? " with " + server_name : "";
  auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (true) {
    int rc = client ? SSL_connect(s->ssl_) : SSL_accept(s->ssl_);
    if (rc == 1) return s;
    int err = SSL_get_error(s->ssl_, rc);
    if ((err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) && WaitFor(fd, err, deadline)) continue;
    if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
      return DeadlineExceededError(fmt::format("TLS handshake{} did not finish within {} ms", peer, timeout_ms));
    }
    long verify = client ? SSL_get_verify_result(s->ssl_) : X509_V_OK;
    std::string why = verify != X509_V_OK ? X509_verify_cert_error_string(verify)
                      : client ? TlsErrorText("the server closed the connection (does it speak TLS?)")
                               : TlsErrorText("the client closed the connection (does it speak TLS?)");
    return UnavailableError(fmt::format("TLS handshake{} failed: {}", peer, why));
  }
}

TlsStream::~TlsStream() {
  if (ssl_) {
    // close_notify, so the peer reads an orderly end; never waits for its reply.
    if (SSL_is_init_finished(ssl_)) SSL_shutdown(ssl_);
    SSL_free(ssl_);
  }
}

Result<size_t> TlsStream::Write(const void* data, size_t size, int timeout_ms) {
  auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  size_t done = 0;
  while (done < size) {
    ERR_clear_error();
    size_t wrote = 0;
    int rc = SSL_write_ex(ssl_, static_cast<const char*>(data) + done, size - done, &wrote);
    if (rc == 1) {
      done += wrote;
      continue;
    }
    int err = SSL_get_error(ssl_, rc);
    if ((err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) && WaitFor(fd_, err, deadline)) continue;
    if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
      return DeadlineExceededError(fmt::format("TLS write did not finish within {} ms", timeout_ms));
    }
    return UnavailableError("TLS write failed: " + TlsErrorText("the peer closed the connection"));
  }
  return done;
}

Result<size_t> TlsStream::Read(void* data, size_t size, int timeout_ms) {
  auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (true) {
    ERR_clear_error();
    size_t got = 0;
    int rc = SSL_read_ex(ssl_, data, size, &got);
    if (rc == 1) return got;
    int err = SSL_get_error(ssl_, rc);
    if (err == SSL_ERROR_ZERO_RETURN) return size_t{0};
    if ((err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) && WaitFor(fd_, err, deadline)) continue;
    if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
      return DeadlineExceededError(fmt::format("TLS read did not finish within {} ms", timeout_ms));
    }
    if (err == SSL_ERROR_SYSCALL && ERR_peek_error() == 0) return size_t{0};  // closed without close_notify
    return UnavailableError("TLS read failed: " + TlsErrorText("the peer closed the connection"));
  }
}

}  // namespace fabcheck::net
