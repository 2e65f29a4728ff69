// The one way fabcheck's HTTP clients (agent API, sweep and coll rendezvous)
// are made: plain HTTP, or HTTPS that verifies the server's certificate chain
// against TlsFiles::ca (the system's store without one) and its name, and
// presents TlsFiles::cert/key for mutual TLS.
#pragma once

#include <httplib.h>

#include <chrono>
#include <cstddef>
#include <string>

#include "base/status.h"
#include "net/tls.h"

namespace fabcheck::net {

// A client for host:port (IPv6 literals welcome). With `tls`, HTTPS; the
// certificate must name `tls_name` when it is given (the client still
// connects to `host`: an SPMD rank is reached by the address it came from,
// its certificate names it otherwise), else `host`.
httplib::Client MakeHttpClient(const std::string& host, int port, const TlsFiles* tls,
                               const std::string& tls_name = "");

// What a failed request means, for `where` ("the rendezvous at rank0:18522"):
// TLS verification and handshake failures name the CA and the name checked.
// `verify_result` is the client's get_openssl_verify_result(): an expired or
// not yet valid certificate is named as such.
std::string HttpErrorText(httplib::Error error, const std::string& where, const TlsFiles* tls,
                          const std::string& name_checked, long verify_result = 0);

// One request whose answer is read within limits: at most `max_body` bytes of
// body and everything (connect, headers, body) before `deadline`. A server
// that streams an endless or slow answer, or one too big to hold, ends the
// call with an error instead of filling the caller's memory.
struct BoundedRequest {
  std::string method = "GET";  // GET or POST (a POST body is JSON)
  std::string path;
  std::string body;
  size_t max_body = 1 << 20;
  std::chrono::steady_clock::time_point deadline;
  std::string where;  // "agent node1:18521 GET /v1/info", for errors
};
struct BoundedAnswer {
  int status = 0;
  std::string body;
};
// Ok with the answer; ResourceExhausted (body over max_body, or out of
// memory), DeadlineExceeded (the deadline passed) or, when the server did not
// answer at all, Unavailable with *transport_error set to httplib's reason
// (for the caller's own wording: TLS, connect, read timeout).
Result<BoundedAnswer> SendBounded(httplib::Client& http, const BoundedRequest& request,
                                  httplib::Error* transport_error);

}  // namespace fabcheck::net
