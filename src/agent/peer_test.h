// What an agent does when the coordinator asks it to test a peer
// (POST /v1/test): bandwidth and latency with the perf engine's client
// against the peer's perf server, then the path-MTU probe against the peer's
// UDP echo. Each step's failure is recorded and the next step still runs, so
// a peer with a broken perf server still gets its MTU measured.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include "base/status.h"
#include "control/api.h"
#include "net/tls.h"
#include "sys/sysroot.h"

namespace fabcheck::agent {

struct PeerTestEnv {
  std::optional<std::string> token;          // the perf server's shared token
  const std::atomic<bool>* cancel = nullptr;  // agent shutdown
  std::optional<sys::SysRoot> root;           // the node the client side runs on
  std::shared_ptr<const net::TlsContext> tls;  // the peer's perf server speaks TLS (AgentConfig::peer_tls)
};

Result<control::PeerTestResponse> RunPeerTest(const control::PeerTestRequest& request, const PeerTestEnv& env);

}  // namespace fabcheck::agent
