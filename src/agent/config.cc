#include "agent/config.h"

#include "control/netif.h"

namespace fabcheck::agent {

Result<AgentConfig> BuildAgentConfig(const AgentFlags& flags) {
  auto listen = control::ParseHostPort(flags.listen, flags.default_port);
  if (!listen.ok()) return InvalidArgumentError("--listen " + listen.status().message());
  AgentConfig config;
  config.bind = listen->host;
  config.control_port = listen->port;
  config.perf_port = flags.perf_port;
  config.name = flags.name;
  config.token = flags.token;
  config.root = sys::SysRoot::Live();
  if (flags.tls && flags.tls->enabled()) {
    auto server = net::TlsContext::ForServer(*flags.tls);
    if (!server.ok()) return InvalidArgumentError(server.status().message());
    config.tls = *server;
    config.tls_files = *flags.tls;  // the L4 ranks serve the board with the same files
    if (!flags.tls->ca.empty()) {
      // Mutual TLS: the perf channel between agents is TLS too, each agent
      // presenting its own certificate to the others.
      auto peer = net::TlsContext::ForClient(*flags.tls);
      if (!peer.ok()) return InvalidArgumentError(peer.status().message());
      config.peer_tls = *peer;
    }
  }
  for (const auto& iface : flags.data_ifaces) {
    ASSIGN_OR_RETURN(control::RailInfo rail, control::RailFromInterface(iface));
    config.rails.push_back(rail);
  }
  for (const auto& addr : flags.data_addrs) {
    ASSIGN_OR_RETURN(control::RailInfo rail, control::RailFromAddress(addr));
    config.rails.push_back(rail);
  }
  return config;
}

}  // namespace fabcheck::agent
