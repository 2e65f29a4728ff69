// A certificate outside its validity dates, said where the operator looks:
// a server loading one logs it (and still serves it: it may be being
// renewed); clients meeting one say "expired" (net/http_client.h).
#pragma once

#include <string>

namespace fabcheck::net {

// "" when the first certificate of the PEM file `cert_path` is valid now (or
// cannot be read: loading it reports that); otherwise "--tls-cert PATH
// EXPIRED on DATE ..." or "... is NOT YET VALID (from DATE) ...", with the fix.
std::string CertificateDateProblem(const std::string& cert_path);

}  // namespace fabcheck::net
