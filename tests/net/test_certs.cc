#include "test_certs.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>

namespace fabcheck::net::testing {

namespace fs = std::filesystem;

const Certs& Certs::Get() {
  static Certs certs;  // key generation is the slow part: once per process
  return certs;
}

Certs::~Certs() {
  std::error_code ec;
  fs::remove_all(dir, ec);
}

Certs::Certs() {
  dir = fs::temp_directory_path() / ("fabcheck-tls-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  if (std::system("command -v openssl >/dev/null 2>&1") != 0) {
    skip_reason = "the openssl command is not installed (Debian package openssl)";
    return;
  }
  const std::string d = dir.string();
  // EC keys: fast to make. Server: SAN IP 127.0.0.1 and DNS localhost.
  const std::string script =
      "set -e; cd '" + d + "'\n"
      "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.crt "
      "  -days 2 -subj /CN=fabcheck-test-ca 2>/dev/null\n"
      "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout other-ca.key -out other-ca.crt "
      "  -days 2 -subj /CN=untrusted-ca 2>/dev/null\n"
      "printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\nextendedKeyUsage=serverAuth,clientAuth\\n' > server.ext\n"
      "openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout server.key -out server.csr "
      "  -subj /CN=agent 2>/dev/null\n"
      "openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out server.crt -days 2 "
      "  -extfile server.ext 2>/dev/null\n"
      "printf 'extendedKeyUsage=clientAuth\\n' > client.ext\n"
      "openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout client.key -out client.csr "
      "  -subj /CN=coordinator 2>/dev/null\n"
      "openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out client.crt -days 2 "
      "  -extfile client.ext 2>/dev/null\n"
      "openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout stranger.key -out stranger.csr "
      "  -subj /CN=stranger 2>/dev/null\n"
      "openssl x509 -req -in stranger.csr -CA other-ca.crt -CAkey other-ca.key -CAcreateserial -out stranger.crt "
      "  -days 2 -extfile client.ext 2>/dev/null\n"
      // The server's key and names in a certificate that expired yesterday.
      "openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out expired.crt -days -1 "
      "  -extfile server.ext 2>/dev/null\n"
      "chmod 600 *.key\n";
  std::ofstream(d + "/make.sh") << script;
  if (std::system(("sh '" + d + "/make.sh'").c_str()) != 0) {
    skip_reason = "openssl could not make the test certificates";
    return;
  }
  ok = true;
}

}  // namespace fabcheck::net::testing
