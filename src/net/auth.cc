#include "net/auth.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "base/fd.h"
#include "base/strings.h"
#include "net/hmac.h"

namespace fabcheck::net {

Result<std::string> ReadTokenFile(const std::string& path) {
  if (path.empty()) return InvalidArgumentError("the token file name is empty (give --token-file PATH)");
  // O_NONBLOCK: a FIFO given by mistake must not block the open.
  int raw = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (raw < 0) return ErrnoError(errno, fmt::format("cannot open token file {}", path), " (check the path)");
  UniqueFd fd(raw);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return ErrnoError(errno, fmt::format("cannot stat token file {}", path));
  if (!S_ISREG(st.st_mode)) {
    return InvalidArgumentError(fmt::format("token file {} is not a regular file (write the token into a file)", path));
  }
  if ((st.st_mode & 077) != 0) {
    return PermissionDeniedError(
        fmt::format("token file {} is readable or writable by group/others (mode {:o}); run: chmod 600 {}", path,
                    st.st_mode & 0777, path));
  }
  std::string text(kMaxTokenLength + 2, '\0');
  size_t got = 0;
  while (got < text.size()) {
    ssize_t n = ::read(fd.get(), text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError(errno, fmt::format("cannot read token file {}", path));
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  text.resize(got);
  std::string_view first(text);
  size_t newline = first.find('\n');
  if (newline == std::string_view::npos && got > kMaxTokenLength) {
    return InvalidArgumentError(
        fmt::format("token file {}: the first line is longer than {} characters (is it the "
                    "token file?)",
                    path, kMaxTokenLength));
  }
  std::string token(Trim(first.substr(0, newline)));
  if (token.empty()) {
    return InvalidArgumentError(fmt::format("token file {} is empty (put the shared token on its first line)", path));
  }
  if (token.size() < kMinTokenLength) {
    return InvalidArgumentError(
        fmt::format("token in {} is shorter than {} characters; make one with: head -c 32 /dev/urandom | base64 > {}",
                    path, kMinTokenLength, path));
  }
  return token;
}

Result<std::string> RandomToken() {
  ASSIGN_OR_RETURN(std::string raw, RandomBytes(16));
  return ToHex(raw);
}

bool ConstantTimeEqual(std::string_view a, std::string_view b) {
  // The length is not secret (every token file policy allows any length above
  // the minimum); the bytes are compared without an early exit.
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

Status CheckTokenlessListen(std::string_view what, std::string_view host_port, bool loopback, bool mutual_tls,
                            bool insecure_no_token) {
  if (loopback || mutual_tls || insecure_no_token) return Status::Ok();
  return InvalidArgumentError(fmt::format(
      "refusing to serve {} without a token on {}: anyone who reaches it could read the node's processes and NCCL "
      "settings, make it dial any address, and hold its GPU job slot. Give --token-file FILE (the same file to every "
      "member and the coordinator), listen on loopback, require client certificates (--tls-ca, docs/tls.md), or "
      "accept the risk with --insecure-no-token",
      what, host_port));
}

bool BearerMatches(std::string_view authorization, std::string_view token) {
  static constexpr std::string_view kBearer = "Bearer ";
  if (token.empty() || authorization.size() < kBearer.size() || authorization.substr(0, kBearer.size()) != kBearer) {
    return false;
  }
  return ConstantTimeEqual(authorization.substr(kBearer.size()), token);
}

std::string ClientMac(std::string_view token, std::string_view server_nonce, std::string_view client_nonce) {
  return ToHex(HmacSha256(token, fmt::format("fabcheck-perf client|{}|{}", server_nonce, client_nonce)));
}

std::string ServerMac(std::string_view token, std::string_view server_nonce, std::string_view client_nonce) {
  return ToHex(HmacSha256(token, fmt::format("fabcheck-perf server|{}|{}", server_nonce, client_nonce)));
}

}  // namespace fabcheck::net
