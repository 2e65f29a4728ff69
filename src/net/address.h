// Which addresses a listening server exposes, for the policy that a server
// beyond loopback needs a token (`agent --insecure-no-token` to go without).
#pragma once

#include <string_view>

namespace fabcheck::net {

// True for an address only this host can reach: 127.0.0.0/8, ::1 (bracketed
// or not), "localhost". "0.0.0.0", "::" and every other address are not.
bool IsLoopbackAddress(std::string_view host);

}  // namespace fabcheck::net
