// One agent configuration from the flags every command spells the same way:
// `fabcheck agent` (a standing agent) and the agent each rank of an SPMD
// `sweep` or `ladder` starts for itself.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "agent/local_agent.h"
#include "base/status.h"
#include "control/api.h"
#include "net/tls.h"

namespace fabcheck::agent {

struct AgentFlags {
  std::string listen;                                // --listen host[:port]
  int default_port = control::kDefaultControlPort;   // the port when --listen names none (0 = any free port)
  int perf_port = 0;                                 // --perf-port (0 = any free port)
  std::string name;                                  // --name ("" = NODE_NAME or hostname)
  std::vector<std::string> data_ifaces;              // --data-iface, once per rail in rail order
  std::vector<std::string> data_addrs;               // --data-addr, once per rail
  std::optional<std::string> token;                  // already read from --token-file
  // A standing agent's TLS (--tls-cert/--tls-key, and --tls-ca for mutual TLS
  // among agents). An SPMD rank leaves it unset: MeetSpmd sets its TLS.
  std::optional<net::TlsFiles> tls;
};

// The configuration LocalAgent::Start takes, on the live node (perf moves
// data through this node's NICs whatever --sysroot answers). A malformed
// --listen or TLS file is InvalidArgument naming the flag; an interface or
// address this node lacks keeps the resolver's code and message.
Result<AgentConfig> BuildAgentConfig(const AgentFlags& flags);

}  // namespace fabcheck::agent
