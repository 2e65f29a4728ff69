// A running agent: the control API (control/), the perf server (perf/) and
// the path-MTU echo, wired together. Used by `fabcheck agent` and by every
// rank of an SPMD `fabcheck sweep`.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "control/api.h"
#include "control/server.h"
#include "agent/mtu_probe.h"
#include "sys/sysroot.h"

namespace fabcheck::perf {
class Server;
}

namespace fabcheck::agent {

struct AgentConfig {
  std::string bind = "0.0.0.0";
  int control_port = control::kDefaultControlPort;  // 0 = any free port; the MTU echo uses the same UDP port
  int perf_port = 0;                                 // 0 = any free port
  std::optional<std::string> token;
  std::string name;                                  // "" = NODE_NAME or hostname
  std::vector<control::RailInfo> rails;              // resolved --data-iface / --data-addr
  control::InventoryHandler inventory;               // optional
  control::JsonHandler node;                         // optional: POST /v1/node (the ladder's node service)
  control::JsonHandler counters;                     // optional: GET /v1/counters
  control::JsonHandler coll;                         // optional: POST /v1/coll (the ladder's L4 ranks)
  control::JsonHandler kv;                           // optional: POST /v1/kv (kv fan-in/fan-out)
  // The node the perf server and the peer tests run on (the command passes
  // the live node: data moves through its NICs whatever --sysroot answers); required.
  std::optional<sys::SysRoot> root;
  std::shared_ptr<const net::TlsContext> tls;        // the control API over HTTPS when set
  std::optional<net::TlsFiles> tls_files;            // the files `tls` came from (the L4 ranks serve with them)
  // Mutual TLS among agents (--tls-ca): the perf server takes `tls` too, and
  // the peer tests' perf client verifies the other agents with this context
  // (the CA, and this agent's certificate to present).
  std::shared_ptr<const net::TlsContext> peer_tls;
};

class LocalAgent {
 public:
  static Result<std::unique_ptr<LocalAgent>> Start(AgentConfig config);
  ~LocalAgent();
  LocalAgent(const LocalAgent&) = delete;
  LocalAgent& operator=(const LocalAgent&) = delete;

  int control_port() const { return control_->port(); }
  const control::AgentInfo& info() const { return info_; }
  uint64_t tests_served() const { return control_->tests_served(); }

 private:
  LocalAgent() = default;
  control::AgentInfo info_;
  std::atomic<bool> cancel_{false};
  std::unique_ptr<perf::Server> perf_;
  std::thread perf_thread_;
  std::unique_ptr<MtuEcho> echo_;
  std::unique_ptr<control::AgentServer> control_;
};

}  // namespace fabcheck::agent
