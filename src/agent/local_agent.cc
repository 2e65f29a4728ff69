#include "agent/local_agent.h"

#include <fmt/format.h>

#include "base/thread_group.h"
#include "control/netif.h"
#include "fabcheck/version.h"
#include "perf/server.h"
#include "sys/infiniband.h"
#include "agent/peer_test.h"

namespace fabcheck::agent {

Result<std::unique_ptr<LocalAgent>> LocalAgent::Start(AgentConfig config) {
  std::unique_ptr<LocalAgent> a(new LocalAgent());
  // Peers reach the perf server and the MTU echo on the data-plane
  // addresses; with rails declared next to a control address of its own
  // (--listen on the management network), those two listen everywhere.
  bool rails_elsewhere = false;
  for (const auto& r : config.rails) rails_elsewhere |= !r.address.empty() && r.address != config.bind;
  const std::string data_bind = config.bind == "0.0.0.0" || rails_elsewhere ? "" : config.bind;
  if (!config.root) return InvalidArgumentError("agent: AgentConfig.root is not set (the node perf runs on)");
  perf::ServeOptions serve;
  serve.bind = data_bind;
  serve.port = config.perf_port;
  serve.token = config.token;
  serve.root = config.root;
  serve.limits.set_by_serve_options = false;  // the agent takes no --max-* options
  if (config.peer_tls) serve.tls = config.tls;
  auto perf_server = perf::Server::Start(serve);
  if (!perf_server.ok()) return perf_server.status().WithContext("agent: perf server");
  a->perf_ = std::move(perf_server).value();
  RETURN_IF_ERROR(base::StartThread("the agent's perf server", a->perf_thread_, [p = a->perf_.get()] { p->Run(); }));

  control::AgentInfo& info = a->info_;
  info.name = config.name.empty() ? control::NodeName() : config.name;
  info.fabcheck_version = kVersion;
  info.perf_port = a->perf_->port();
  // verbs where this node has an RDMA device (what sweep's --transport auto
  // asks); a device that then cannot run the test fails the pair with the
  // verbs error, never a silent TCP figure.
  info.transports = {"tcp"};
  if (auto devices = sys::infiniband::ListDevices(*config.root); devices.ok() && !devices->empty()) {
    info.transports.push_back("verbs");
  }
  info.rails = config.rails;

  control::AgentServerOptions options;
  options.bind = config.bind;
  options.port = config.control_port;
  options.token = config.token;
  options.inventory = config.inventory;
  options.node = config.node;
  options.counters = config.counters;
  options.coll = config.coll;
  options.kv = config.kv;
  options.tls = config.tls;
  PeerTestEnv env{config.token, &a->cancel_, *config.root, config.peer_tls};
  options.run_test = [env](const control::PeerTestRequest& r) { return RunPeerTest(r, env); };
  // The echo needs the control port's number (same number, UDP), so with
  // port 0 the control server binds first and the echo follows.
  options.info = info;
  auto control_server = control::AgentServer::Start(options);
  if (!control_server.ok()) return control_server.status();
  a->control_ = std::move(control_server).value();
  auto echo = MtuEcho::Start(data_bind, a->control_->port());
  if (!echo.ok()) return echo.status().WithContext("agent: path-MTU echo");
  a->echo_ = std::move(echo).value();
  info.control_port = a->control_->port();
  info.mtu_port = a->echo_->port();
  // The served info was copied before the echo existed; restart-free update.
  a->control_->SetInfo(info);
  return a;
}

LocalAgent::~LocalAgent() {
  cancel_.store(true);
  if (control_) control_->Stop();
  if (perf_) perf_->Stop();
  if (perf_thread_.joinable()) perf_thread_.join();
}

}  // namespace fabcheck::agent
