#include "net/cert_dates.h"

#include <fmt/format.h>
#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <cstdio>

namespace fabcheck::net {
namespace {

std::string Print(const ASN1_TIME* t) {
  std::string text = "?";
  if (BIO* bio = BIO_new(BIO_s_mem())) {
    if (ASN1_TIME_print(bio, t) == 1) {
      char* data = nullptr;
      long n = BIO_get_mem_data(bio, &data);
      if (n > 0) text.assign(data, static_cast<size_t>(n));
    }
    BIO_free(bio);
  }
  return text;
}

}  // namespace

std::string CertificateDateProblem(const std::string& cert_path) {
  FILE* f = std::fopen(cert_path.c_str(), "r");
  if (f == nullptr) return "";
  X509* cert = PEM_read_X509(f, nullptr, nullptr, nullptr);
  std::fclose(f);
  if (cert == nullptr) return "";
  std::string problem;
  if (X509_cmp_current_time(X509_get0_notAfter(cert)) < 0) {
    problem = fmt::format("--tls-cert {} EXPIRED on {}: every client will refuse it (\"certificate has expired\"); "
                          "renew it (cert-manager: check the Certificate's status)",
                          cert_path, Print(X509_get0_notAfter(cert)));
  } else if (X509_cmp_current_time(X509_get0_notBefore(cert)) > 0) {
    problem = fmt::format("--tls-cert {} is NOT YET VALID (from {}): clients will refuse it until then; check this "
                          "node's clock or the certificate's dates",
                          cert_path, Print(X509_get0_notBefore(cert)));
  }
  X509_free(cert);
  return problem;
}

}  // namespace fabcheck::net
