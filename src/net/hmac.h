// SHA-256 and HMAC-SHA256 (FIPS 180-4, RFC 2104) for the token challenge of
// the perf control protocol (net/auth.h), plus the few helpers around them. Written here
// to keep fabcheck free of a crypto library dependency for one MAC; checked
// against the FIPS and RFC 4231 test vectors in tests/net.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace fabcheck::net {

using Digest = std::array<uint8_t, 32>;

Digest Sha256(std::string_view data);
Digest HmacSha256(std::string_view key, std::string_view message);

std::string ToHex(std::string_view bytes);
std::string ToHex(const Digest& digest);
// `n` bytes from the kernel's CSPRNG (getrandom).
Result<std::string> RandomBytes(size_t n);

}  // namespace fabcheck::net
