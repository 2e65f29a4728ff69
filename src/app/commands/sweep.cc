// `fabcheck sweep`: test every pair of nodes (or a ring, or k random peers)
// and name the slow node, the slow link or the MTU hole. Parsing and wiring
// only: sweep/ does the work.
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <iostream>

#include "app/command.h"
#include "app/tunables.h"
#include "base/exit_codes.h"
#include "base/json_text.h"
#include "base/log.h"
#include "base/units.h"
#include "control/netif.h"
#include "control/server.h"
#include "net/auth.h"
#include "net/rank.h"
#include "fabric/fabric.h"
#include "agent/config.h"
#include "agent/local_agent.h"
#include "agent/members.h"
#include "report/sweep_text.h"
#include "sweep/runner.h"
#include "sys/sysroot.h"

namespace {

using namespace fabcheck;

std::atomic<bool> g_stop{false};

void OnSignal(int) {
  if (g_stop.exchange(true)) std::_Exit(130);  // a second Ctrl-C: out now, no partial result
}

struct Options {
  std::string agents, agents_file, coordinator;
  int world = 0;
  std::string pattern = "pairwise";
  std::string topology;
  int flows = 0, max_rounds = 100, path_hops = 2;
  double uplink_load = 0.5;
  int peers = 3;
  uint64_t seed = 1;
  bool rails = false;
  std::string transport = "auto";
  std::string bw_size = "1M", duration = "1s", lat_duration = "300ms";
  int streams = 1;
  int parallel = 256;
  bool no_bw = false, no_lat = false, no_mtu = false;
  std::string token_file;
  bool insecure_no_token = false;
  fabcheck::net::TlsFiles tls;
  std::string connect_timeout = "3s", rendezvous_timeout = "300s";
  bool json = false, quiet = false;
  std::string output;
  // SPMD: this rank's own agent.
  std::string listen = "0.0.0.0:0";
  std::vector<std::string> data_ifaces, data_addrs;
};

int Usage(const std::string& message) {
  std::cerr << "fabcheck sweep: " << message << "\n";
  return kExitUsage;
}

int ExitFor(const model::SweepResult& r) {
  switch (r.verdict.severity) {
    case model::Severity::kPass:
    case model::Severity::kInfo: return kExitOk;
    case model::Severity::kWarn: return kExitWarnings;
    case model::Severity::kFail: return kExitFailures;
    case model::Severity::kUnknown: return kExitError;
  }
  return kExitError;
}

agent::AgentFlags OwnAgentFlags(const Options& o, const std::optional<std::string>& token) {
  agent::AgentFlags f;
  f.listen = o.listen;
  f.default_port = 0;
  f.data_ifaces = o.data_ifaces;
  f.data_addrs = o.data_addrs;
  f.token = token;
  return f;
}

int RunSweepCommand(const Options& o) {
  auto pattern = sweep::ParsePattern(o.pattern);
  if (!pattern.ok()) return Usage(pattern.status().message());
  auto bw_size = ParseSize(o.bw_size);
  if (!bw_size.ok()) return Usage("--bw-size: " + bw_size.status().message());
  auto duration = ParseDurationSeconds(o.duration);
  if (!duration.ok()) return Usage("--duration: " + duration.status().message());
  auto lat_duration = ParseDurationSeconds(o.lat_duration);
  if (!lat_duration.ok()) return Usage("--lat-duration: " + lat_duration.status().message());
  auto connect_timeout = ParseDurationSeconds(o.connect_timeout);
  if (!connect_timeout.ok() || *connect_timeout <= 0) return Usage("--connect-timeout: give a duration like 3s");
  auto rendezvous_timeout = ParseDurationSeconds(o.rendezvous_timeout);
  if (!rendezvous_timeout.ok() || *rendezvous_timeout <= 0) return Usage("--rendezvous-timeout: give a duration like 300s");
  if (o.transport != "auto" && o.transport != "tcp" && o.transport != "verbs") {
    return Usage("--transport must be auto, verbs or tcp");
  }
  if (o.no_bw && o.no_lat && o.no_mtu) return Usage("--no-bw --no-lat --no-mtu leaves nothing to measure");
  if (!(o.uplink_load > 0 && o.uplink_load <= 1)) return Usage("--uplink-load must be in (0, 1]");
  std::optional<fabric::Fabric> topology;
  if (!o.topology.empty()) {
    auto f = fabric::LoadFabric(o.topology);
    if (!f.ok()) {
      std::cerr << "fabcheck sweep: --topology " << f.status().message() << "\n";
      return kExitError;
    }
    topology = std::move(f).value();
  } else if (*pattern == sweep::Pattern::kTopology || *pattern == sweep::Pattern::kAdaptive) {
    return Usage("--strategy " + o.pattern + " plans by leaf: give --topology FILE (fabcheck fabric builds one)");
  }

  std::optional<std::string> token;
  if (!o.token_file.empty()) {
    auto t = net::ReadTokenFile(o.token_file);
    if (!t.ok()) {
      std::cerr << "fabcheck sweep: " << t.status().message() << "\n";
      return kExitError;
    }
    token = *t;
  }
  if (o.tls.enabled()) {
    Status checked = app::CheckAgentsTls(o.tls, !o.agents.empty() || !o.agents_file.empty());
    if (!checked.ok()) return Usage(checked.message());
  }
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
  std::signal(SIGPIPE, SIG_IGN);
  const auto rdv_timeout = std::chrono::milliseconds(static_cast<int64_t>(*rendezvous_timeout * 1000));

  // Members: a list, a file, or the SPMD launch.
  agent::MemberOptions mo;
  mo.command = "sweep";
  mo.agents = o.agents;
  mo.agents_file = o.agents_file;
  mo.coordinator = o.coordinator;
  mo.world = o.world;
  mo.min_ranks = 2;
  mo.token = token;
  if (o.tls.enabled()) mo.tls = o.tls;
  mo.rendezvous_timeout = rdv_timeout;
  mo.stop = &g_stop;
  mo.insecure_no_token = o.insecure_no_token;
  mo.own_agent = [&] { return agent::BuildAgentConfig(OwnAgentFlags(o, token)); };
  auto members = agent::FindMembers(mo, net::ProcessEnv());
  if (!members.ok()) {
    if (members.status().code() == StatusCode::kInvalidArgument) return Usage(members.status().message());
    std::cerr << "fabcheck sweep: " << members.status().message() << "\n";
    return kExitError;
  }
  if (members->rank_done) return kExitOk;  // rank 0 prints the result
  std::vector<control::HostPort> agents = std::move(members->agents);
  std::unique_ptr<agent::LocalAgent> own_agent = std::move(members->own_agent);
  std::unique_ptr<agent::AgentRegistry> rendezvous = std::move(members->registry);

  sweep::SweepOptions so;
  so.pattern = *pattern;
  so.peers = o.peers;
  so.seed = o.seed;
  so.rails = o.rails;
  so.token = token;
  if (o.tls.enabled()) so.tls = o.tls;
  so.connect_timeout = std::chrono::milliseconds(static_cast<int64_t>(*connect_timeout * 1000));
  so.info_timeout = so.connect_timeout * 2;
  so.test.transport = o.transport;
  so.test.bandwidth = !o.no_bw;
  so.test.latency = !o.no_lat;
  so.test.mtu = !o.no_mtu;
  so.test.bw_size = *bw_size;
  so.test.bw_duration_s = *duration;
  so.test.lat_duration_s = *lat_duration;
  so.test.streams = o.streams;
  so.max_parallel_pairs = o.parallel;
  so.fabric = topology ? &*topology : nullptr;
  so.flows = o.flows;
  so.uplink_load = o.uplink_load;
  so.max_rounds = o.max_rounds;
  so.path_hops = o.path_hops;
  so.stop = &g_stop;
  const bool tty = ::isatty(STDERR_FILENO);
  if (!o.quiet) {
    so.on_progress = [tty](const sweep::Progress& p) {
      std::cerr << (tty ? "\r" : "")
                << report::SweepProgressLine(p.round, p.rounds, p.elapsed_s, p.eta_s, p.unreachable)
                << (tty ? "   " : "\n") << std::flush;
    };
  }
  auto result = sweep::RunSweep(agents, so);
  if (tty && !o.quiet) std::cerr << "\n";
  if (rendezvous) rendezvous->SetState("done");
  if (!result.ok()) {
    std::cerr << "fabcheck sweep: " << result.status().message() << "\n";
    return kExitError;
  }
  if (result->interrupted) LOG_WARN("sweep", "interrupted: the result covers {} of {} rounds",
                                    result->rounds_completed, result->rounds_planned);
  nlohmann::json j = *result;
  if (!o.output.empty()) {
    std::ofstream out(o.output);
    out << ToJsonText(j, 2) << "\n";
    if (!out) {
      std::cerr << "fabcheck sweep: cannot write " << o.output << "\n";
      return kExitError;
    }
  }
  if (o.json) {
    std::cout << ToJsonText(j, 2) << "\n";
  } else {
    std::cout << report::RenderSweepText(*result);
  }
  if (rendezvous) std::this_thread::sleep_for(std::chrono::seconds(2));  // let the ranks see "done"
  return ExitFor(*result);
}

fabcheck::app::RunFn Setup(CLI::App& root) {
  auto* cmd = root.add_subcommand("sweep", "Test every pair of nodes and name the slow node, slow link or MTU hole");
  auto o = std::make_shared<Options>();
  fabcheck::app::Tunables t(cmd, "sweep");
  t.Text("--agents", o->agents, "Agents to sweep: host[:port],... (port 18521 when left out)", "host[:port] list");
  t.Path("--agents-file", o->agents_file, "File with one agent host[:port] per line (# comments)");
  t.Text("--coordinator", o->coordinator,
         "SPMD launch: rank 0's HOST[:PORT] where the ranks meet (port 18522 when left out; Kubernetes: the\n"
         "headless Service name; under srun the step's first node when left out)",
         "host[:port]");
  t.Integer("--world", o->world,
            "Number of ranks when the environment gives only the rank (Kubernetes Indexed Job: JOB_COMPLETION_INDEX)",
            0, 1 << 20);
  t.Text("--strategy,--pattern", o->pattern,
         "pairwise (every pair, n-1 rounds), ring, k-random, topology (every pair inside each leaf, then "
         "leaf against leaf) or adaptive (a cheap pass, then only suspects; needs --topology)",
         "pairwise|ring|k-random|topology|adaptive");
  t.Path("--topology", o->topology,
         "Fabric file (fabcheck.fabric/v1: each member's leaf per rail, the spines); findings then name node, nic, "
         "cable, uplink, spine or mtu");
  t.Integer("--flows", o->flows,
            "Flows per test between leaves (distinct source ports, so ECMP spreads them; 0: enough to cover every "
            "spine with p >= 0.9)",
            0, 64);
  t.Number("--uplink-load", o->uplink_load,
           "Share of a leaf testing across leaves at once (keeps ECMP collisions from saturating an uplink), "
           "above 0",
           0, 1);
  t.Integer("--max-rounds", o->max_rounds, "Adaptive: the budget of rounds", 1, 1 << 20);
  t.Integer("--path-hops", o->path_hops,
            "Tests between leaves on a rail whose spines list addresses in the fabric file: trace each flow's "
            "routers with TTLs 1..N on its own 5-tuple (TCP SYN probes, no privilege) to learn which spine it "
            "crossed (0: off; 2 finds the spine of a two-tier Clos with routed or bridged leaves; with core "
            "addresses in the file, at least 4: spine, core and the far pod's spine of a flow between pods)",
            0, 16);
  t.Integer("--peers", o->peers, "k-random: peers per node", 1, 1 << 20);
  t.Count("--seed", o->seed, "k-random: seed, to repeat a sweep", 0, uint64_t{1} << 62);
  t.Flag("--all-rails", o->rails, "Test NIC i of one node with NIC i of the other, all rails of a pair at once");
  t.Text("--transport", o->transport,
         "auto (verbs where both agents serve it, TCP otherwise, said on stderr), verbs or tcp", "auto|verbs|tcp");
  t.Text("--bw-size", o->bw_size, "Bandwidth message size", "size");
  t.Text("--duration", o->duration, "Bandwidth test time per direction", "duration");
  t.Text("--lat-duration", o->lat_duration, "Latency test time per direction", "duration");
  t.Integer("--streams", o->streams, "TCP connections / QPs per bandwidth test", 1, 64);
  t.Integer("--parallel", o->parallel, "Pairs of a round in flight at once (a round has n/2 pairs)", 1, 8192);
  t.Flag("--no-bw", o->no_bw, "Skip bandwidth");
  t.Flag("--no-lat", o->no_lat, "Skip latency");
  t.Flag("--no-mtu", o->no_mtu, "Skip the path-MTU probe");
  t.Path("--token-file", o->token_file, "The agents' shared token", /*dash_is_stdio=*/false, "FABCHECK_TOKEN_FILE");
  t.Flag("--insecure-no-token", o->insecure_no_token,
         "SPMD: let this rank's agent and the rendezvous serve without --token-file beyond loopback (no mutual TLS)");
  t.Tls(o->tls, fabcheck::app::Tunables::TlsRole::kClient);
  t.Text("--connect-timeout", o->connect_timeout, "Give up on an agent that does not connect in this time",
         "duration");
  t.Text("--rendezvous-timeout", o->rendezvous_timeout, "SPMD: how long rank 0 waits for every rank", "duration");
  t.Text("--listen", o->listen, "SPMD: this rank's agent address (port 0 = any)", "host:port");
  t.List("--data-iface", o->data_ifaces, "SPMD: this rank's data-plane interface, once per rail", "interface");
  t.List("--data-addr", o->data_addrs, "SPMD: this rank's data-plane address, once per rail", "address");
  t.Flag("--json", o->json, "Print the result as JSON (schema fabcheck.sweep/v1)");
  t.Path("-o,--output", o->output, "Also write the JSON result to this file");
  t.Flag("--quiet", o->quiet, "No progress line on stderr");
  cmd->footer(R"(Exit code: 0 no outlier, 1 warnings, 2 a slow node/link, MTU hole, failed test or unreachable
agent, 3 could not run. Ctrl-C prints the partial result; a second Ctrl-C exits at once.

Examples:
  fabcheck sweep --agents n1,n2,n3,n4               # agents already running (DaemonSet)
  fabcheck sweep --agents-file nodes.txt --pattern ring --json > sweep.json
  fabcheck sweep --agents-file nodes.txt --topology fabric.yaml --strategy adaptive   # names the element
  srun -N64 --ntasks-per-node=1 fabcheck sweep --data-iface ib0   # rank 0 on the step's first node
  mpirun -np 8 --map-by ppr:1:node fabcheck sweep --coordinator head01:18522
  # Kubernetes Indexed Job: fabcheck sweep --world 16 --coordinator fabcheck-sweep-0.fabcheck-sweep:18522
See docs/sweep.md for rounds and expected wall time at 64, 512 and 4,096 nodes.)");
  return [o] { return RunSweepCommand(*o); };
}

const bool kRegistered = fabcheck::app::RegisterCommand({"sweep", 600, &Setup});

}  // namespace
