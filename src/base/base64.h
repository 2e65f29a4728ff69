// Base64 (RFC 4648, with padding): binary evidence (a snapshot tarball) inside
// a JSON answer of the control API.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace fabcheck {

std::string Base64Encode(std::string_view bytes);
// nullopt on a character outside the alphabet or a bad length; whitespace is skipped.
std::optional<std::string> Base64Decode(std::string_view text);

}  // namespace fabcheck
