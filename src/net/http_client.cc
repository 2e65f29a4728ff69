#include "net/http_client.h"

#include <fmt/format.h>

#include <map>

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
                          const std::string& name_checked) {
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

}  // namespace fabcheck::net
