// Test certificates made with the openssl command once per test process: a
// CA, a server certificate for 127.0.0.1 and localhost, a client certificate
// of that CA, and a second CA (with its own client certificate) nobody trusts.
#pragma once

#include <filesystem>
#include <string>

namespace fabcheck::net::testing {

class Certs {
 public:
  static const Certs& Get();
  ~Certs();  // removes the folder
  bool ok = false;
  std::string skip_reason;  // when !ok
  std::filesystem::path dir;
  // ca.crt, server.crt/.key, client.crt/.key, other-ca.crt, stranger.crt/.key, expired.crt (server.key's,
  // expired yesterday)
  std::string Path(const std::string& name) const { return (dir / name).string(); }

 private:
  Certs();
};

}  // namespace fabcheck::net::testing
