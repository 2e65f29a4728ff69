// `fabcheck agent`: the per-node daemon a sweep talks to. Parsing and wiring
// only: agent/local_agent.h does the work.
#include <csignal>
#include <iostream>
#include <thread>

#include "app/command.h"
#include "app/tunables.h"
#include "base/exit_codes.h"
#include "base/json_text.h"
#include "base/log.h"
#include "base/malloc_arenas.h"
#include "control/server.h"
#include "fabcheck/version.h"
#include "kv/fan.h"
#include "agent/node_service.h"
#include "net/address.h"
#include "net/auth.h"
#include "agent/config.h"
#include "agent/local_agent.h"
#include "sys/sysroot.h"

namespace {

std::atomic<bool> g_stop{false};

void OnSignal(int) {
  if (g_stop.exchange(true)) std::_Exit(130);  // a second Ctrl-C: out now
}

struct AgentOptions {
  std::string listen = "0.0.0.0:18521";
  int perf_port = 18520;
  std::string token_file;
  std::string name;
  std::vector<std::string> data_ifaces;
  std::vector<std::string> data_addrs;
  std::string sysroot;
  fabcheck::net::TlsFiles tls;
  bool insecure_no_token = false;
  bool json = false;
};

int RunAgent(const AgentOptions& o) {
  using namespace fabcheck;
  base::LimitMallocArenas();  // tests, kv transfers and HTTP workers run on many threads
  auto listen = control::ParseHostPort(o.listen, control::kDefaultControlPort);
  if (!listen.ok()) {
    std::cerr << "fabcheck agent: --listen " << listen.status().message() << "\n";
    return kExitUsage;
  }
  // Every route of the agent reads the node or spends its resources: beyond
  // loopback, nobody may use them without the cluster's token unless the
  // operator says so in as many words.
  const bool loopback = net::IsLoopbackAddress(listen->host);
  const bool mutual_tls = o.tls.enabled() && !o.tls.ca.empty();
  if (o.token_file.empty()) {
    Status open = net::CheckTokenlessListen("every route", o.listen, loopback, mutual_tls, o.insecure_no_token);
    if (!open.ok()) {
      std::cerr << "fabcheck agent: " << open.message() << "\n";
      return kExitUsage;
    }
    LOG_WARN("agent", "NO TOKEN: every route of this agent is open to whoever reaches {} ({}); "
             "give --token-file to require the cluster's token", o.listen,
             loopback ? "every user and container of this host"
             : mutual_tls ? "every holder of a certificate of --tls-ca" : "--insecure-no-token was given");
  }
  agent::AgentFlags flags;
  flags.listen = o.listen;
  flags.perf_port = o.perf_port;
  flags.name = o.name;
  flags.data_ifaces = o.data_ifaces;
  flags.data_addrs = o.data_addrs;
  if (!o.token_file.empty()) {
    auto token = net::ReadTokenFile(o.token_file);
    if (!token.ok()) {
      std::cerr << "fabcheck agent: " << token.status().message() << "\n";
      return kExitError;
    }
    flags.token = *token;
  }
  if (o.tls.enabled()) flags.tls = o.tls;
  auto built = agent::BuildAgentConfig(flags);
  if (!built.ok()) {
    std::cerr << "fabcheck agent: " << built.status().message() << "\n";
    return built.status().code() == StatusCode::kInvalidArgument ? kExitUsage : kExitError;
  }
  agent::AgentConfig config = std::move(built).value();
  // Inventory, doctor, snapshot and counters for the ladder, from the live
  // node or from --sysroot.
  auto service = agent::NodeService::Create(
      {.sysroot = o.sysroot, .fabcheck_version = kVersion, .query_libraries = o.sysroot.empty(), .coll_executable = ""});
  if (!service.ok()) {
    std::cerr << "fabcheck agent: --sysroot " << service.status().message() << "\n";
    return kExitError;
  }
  agent::NodeService::Wire(*service, config);
  // KV transfers from this node (kv run --agents), with the agent's own credentials.
  config.kv = kv::AgentKvHandler({config.token, config.peer_tls, *config.root});
  auto agent = agent::LocalAgent::Start(config);
  if (!agent.ok()) {
    std::cerr << "fabcheck agent: " << agent.status().message() << "\n";
    return kExitError;
  }
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
  std::signal(SIGPIPE, SIG_IGN);
  const auto& info = (*agent)->info();
  if (o.json) {
    // One line once it serves, so a script can wait for it and learn the ports.
    std::cout << fabcheck::ToJsonText({{"schema", "fabcheck.agent/v1"},
                                       {"name", info.name},
                                       {"control_port", info.control_port},
                                       {"mtu_port", info.mtu_port},
                                       {"perf_port", info.perf_port},
                                       {"tls", config.tls != nullptr},
                                       {"token", config.token.has_value()}})
              << std::endl;
  }
  LOG_WARN("agent", "{} serving: control {}:{} ({}), path-MTU echo UDP {}, perf {}{}", info.name, config.bind,
           info.control_port,
           !config.tls ? "HTTP" : config.tls->mutual() ? "HTTPS, client certificates required" : "HTTPS",
           info.mtu_port, info.perf_port, config.token ? ", token required" : "");
  while (!g_stop.load()) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  LOG_WARN("agent", "stopping after {} tests", (*agent)->tests_served());
  return kExitOk;
}

fabcheck::app::RunFn Setup(CLI::App& root) {
  auto* cmd = root.add_subcommand("agent", "Serve perf tests and the control API a sweep coordinator drives");
  auto o = std::make_shared<AgentOptions>();
  fabcheck::app::Tunables t(cmd, "agent");
  t.Text("--listen", o->listen, "Control API address, HTTP/JSON; the path-MTU echo uses the same UDP port",
         "host:port");
  t.Port("--perf-port", o->perf_port, "TCP port of the perf server (0 = any free port)", /*zero_means_any=*/true);
  t.Path("--token-file", o->token_file,
         "Require this shared token (first line of the file) on the control API and perf server",
         /*dash_is_stdio=*/false, "FABCHECK_TOKEN_FILE");
  t.Text("--name", o->name, "Name in reports (default: $NODE_NAME, else the hostname)", "name");
  t.List("--data-iface", o->data_ifaces,
         "Data-plane interface, once per rail in rail order (e.g. --data-iface net1 --data-iface net2)", "interface");
  t.List("--data-addr", o->data_addrs, "Data-plane address, once per rail (alternative to --data-iface)", "address");
  t.Tls(o->tls, fabcheck::app::Tunables::TlsRole::kServer);
  t.Flag("--insecure-no-token", o->insecure_no_token,
         "Serve without --token-file on an address other than loopback (every route open to the network; "
         "without it such an agent refuses to start)");
  t.Flag("--json", o->json,
         "One JSON line (schema fabcheck.agent/v1: name and ports) on stdout once it serves; errors as\n"
         "fabcheck.error/v1");
  t.Path("--sysroot", o->sysroot,
         "Answer inventory, doctor, snapshot and counter requests from this directory or capture instead of\n"
         "the running node (tests and demos; perf tests still use this machine's network)");
  cmd->footer(R"(Without --token-file the agent listens only on loopback, unless --insecure-no-token is given.
Routes: GET /v1/health (no token), GET /v1/info, GET /v1/inventory, POST /v1/test,
POST /v1/node, GET /v1/counters and POST /v1/coll (what `fabcheck ladder` asks of each node; /v1/coll
starts this node's ranks of the L4 `fabcheck coll` job as child processes, one per GPU, one job at a time),
POST /v1/kv (`fabcheck kv run --agents`: KV transfers from this node into other agents, all at once).

Examples:
  fabcheck agent --token-file /etc/fabcheck/token # control on :18521, perf on :18520
  fabcheck agent --listen 127.0.0.1:18521          # this host only; no token needed (a warning says so)
  fabcheck agent --data-iface net1 --token-file /etc/fabcheck/token
  fabcheck agent --tls-cert /etc/fabcheck/tls/tls.crt --tls-key /etc/fabcheck/tls/tls.key --token-file ...
  fabcheck agent --listen 10.0.0.5:18521 --data-addr 192.168.1.5 --data-addr 192.168.2.5   # two rails
Then, from anywhere: fabcheck sweep --agents node1:18521,node2:18521,...
                 or: fabcheck ladder --agents node1,node2,... -o golive.tar.gz)");
  return [o] { return RunAgent(*o); };
}

const bool kRegistered = fabcheck::app::RegisterCommand({"agent", 610, &Setup});

}  // namespace
