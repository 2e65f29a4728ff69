// The one way fabcheck's HTTP clients (agent API, sweep and coll rendezvous)
// are made: plain HTTP, or HTTPS that verifies the server's certificate chain
// against TlsFiles::ca (the system's store without one) and its name, and
// presents TlsFiles::cert/key for mutual TLS.
#pragma once

#include <httplib.h>

#include <string>

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
std::string HttpErrorText(httplib::Error error, const std::string& where, const TlsFiles* tls,
                          const std::string& name_checked);

}  // namespace fabcheck::net
