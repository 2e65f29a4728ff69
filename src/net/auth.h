// The one token policy of every fabcheck server and client: the agent API,
// the sweep and coll rendezvous, and the perf control channel.
//
//  * A token file is a regular file readable by its owner only (mode 0600 or
//    stricter) whose first line, trimmed, is the token: at least
//    kMinTokenLength characters. Anything else is an error naming the fix.
//  * HTTP servers compare "Authorization: Bearer <token>" in constant time.
//  * The perf control channel never sends the token: each side proves it
//    knows it with an HMAC-SHA256 over both nonces (ClientMac / ServerMac).
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace fabcheck::net {

inline constexpr size_t kMinTokenLength = 8;
// Longer lines are not tokens (a key file or a binary given by mistake).
inline constexpr size_t kMaxTokenLength = 4096;

// Reads and checks a token file (see above).
Result<std::string> ReadTokenFile(const std::string& path);
// A fresh random token (32 hex digits) for processes that share it privately,
// e.g. the ranks `coll --nprocs` starts.
Result<std::string> RandomToken();

// Compares in time independent of where the inputs differ (no timing oracle).
bool ConstantTimeEqual(std::string_view a, std::string_view b);
// True when `authorization` (an HTTP Authorization header) is exactly
// "Bearer <token>"; constant time in the token.
bool BearerMatches(std::string_view authorization, std::string_view token);

// Whether a server may answer without a token: on loopback, or with mutual
// TLS (only holders of a certificate of the cluster's CA connect), or when
// the operator said --insecure-no-token. Otherwise InvalidArgument (a usage
// error) naming `what` ("every route of the agent", "this rank's agent and
// the rendezvous"), where, and the four ways out. The agent, and the ranks of
// an SPMD sweep or ladder, ask this one question.
Status CheckTokenlessListen(std::string_view what, std::string_view host_port, bool loopback, bool mutual_tls,
                            bool insecure_no_token);

// The perf handshake: the client's and the server's proof of the token over
// the server's and the client's nonce.
std::string ClientMac(std::string_view token, std::string_view server_nonce, std::string_view client_nonce);
std::string ServerMac(std::string_view token, std::string_view server_nonce, std::string_view client_nonce);

}  // namespace fabcheck::net
