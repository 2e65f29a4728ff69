// `fabcheck ladder`: the whole test ladder across the cluster, bottom-up,
// stopping at the first failing rung, into an evidence bundle. Parsing and
// wiring only: ladder/ does the work.
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "app/command.h"
#include "app/tunables.h"
#include "base/json_text.h"
#include "base/exit_codes.h"
#include "base/log.h"
#include "base/units.h"
#include "bundle/bundle.h"
#include "checks/profile.h"
#include "coll/busbw.h"
#include "control/netif.h"
#include "control/server.h"
#include "fabcheck/version.h"
#include "fabric/fabric.h"
#include "ladder/judge.h"
#include "agent/node_service.h"
#include "ladder/runner.h"
#include "ladder/rungs.h"
#include "net/auth.h"
#include "net/rank.h"
#include "report/ladder_text.h"
#include "agent/config.h"
#include "agent/local_agent.h"
#include "agent/members.h"
#include "sys/sysroot.h"

namespace {

using namespace fabcheck;

std::atomic<bool> g_stop{false};

void OnSignal(int) {
  if (g_stop.exchange(true)) std::_Exit(130);  // a second Ctrl-C: out now
}

struct Options {
  std::string agents, agents_file, coordinator;
  int world = 0;
  std::string rungs = "all";
  bool keep_going = false;
  std::string pattern = "ring";
  std::string transport = "auto";
  std::string profile;
  std::string topology;
  double pass_fraction = 0;  // 0 = the profile's, else 0.9
  std::string bw_size = "1M", duration = "1s", lat_duration = "300ms";
  int streams = 1;
  int parallel = 0;
  int fan_out = 256;
  bool no_snapshot = false;
  bool no_baselines = false;
  std::string baseline_timeout = "10m";
  std::string token_file;
  bool insecure_no_token = false;
  net::TlsFiles tls;
  std::string connect_timeout = "3s", node_timeout = "120s", rendezvous_timeout = "300s", test_timeout;
  std::string coll_ops = "all_reduce,all_gather,alltoall", coll_sizes = "1M:1G", coll_timeout = "30m";
  int coll_iters = 20, coll_warmup = 5, coll_port = 18523;
  std::string out;
  bool json = false, quiet = false;
  // SPMD: this rank's own agent.
  std::string listen = "0.0.0.0:0";
  std::vector<std::string> data_ifaces, data_addrs;
  std::string sysroot;
};

// Where each member of the fabric file sits, by name and by address: the
// file's rack, else the leaf when every rail shares it (a top-of-rack switch).
std::map<std::string, ladder::MemberPlace> PlacesOf(const fabric::Fabric& f) {
  std::map<std::string, ladder::MemberPlace> places;
  for (const auto& m : f.members) {
    ladder::MemberPlace p;
    p.rail_leaves = m.leaves;
    p.leaf = m.leaves.empty() ? "" : m.leaves.front();
    const bool one_leaf = !m.leaves.empty() && std::all_of(m.leaves.begin(), m.leaves.end(),
                                                            [&](const auto& l) { return l == m.leaves.front(); });
    p.rack = !m.rack.empty() ? m.rack : one_leaf ? p.leaf : "";
    places[m.name] = p;
    if (!m.address.empty()) places[m.address] = p;
  }
  return places;
}

int Usage(const std::string& message) {
  std::cerr << "fabcheck ladder: " << message << "\n";
  return kExitUsage;
}

int Fail(const std::string& message) {
  std::cerr << "fabcheck ladder: " << message << "\n";
  return kExitError;
}

Result<double> Seconds(const std::string& flag, const std::string& text) {
  auto v = ParseDurationSeconds(text);
  if (!v.ok() || *v <= 0) return InvalidArgumentError(flag + ": give a duration like 3s (got '" + text + "')");
  return *v;
}

std::chrono::milliseconds Ms(double seconds) { return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000)); }

// This rank's agent (SPMD), with the node service wired in.
Result<agent::AgentConfig> OwnAgentConfig(const Options& o, const std::optional<std::string>& token) {
  agent::AgentFlags f;
  f.listen = o.listen;
  f.default_port = 0;
  f.data_ifaces = o.data_ifaces;
  f.data_addrs = o.data_addrs;
  f.token = token;
  ASSIGN_OR_RETURN(agent::AgentConfig c, agent::BuildAgentConfig(f));
  ASSIGN_OR_RETURN(auto service, agent::NodeService::Create(
      {.sysroot = o.sysroot, .fabcheck_version = kVersion, .query_libraries = true, .coll_executable = ""}));
  agent::NodeService::Wire(service, c);
  return c;
}

int RunLadderCommand(const Options& o) {
  auto rungs = ladder::ParseRungSelection(o.rungs);
  if (!rungs.ok()) return Usage(rungs.status().message());
  if (o.pattern != "ring" && o.pattern != "pairwise" && o.pattern != "rails") {
    return Usage("--pattern must be ring, pairwise or rails");
  }
  if (o.transport != "auto" && o.transport != "verbs" && o.transport != "tcp") {
    return Usage("--transport must be auto, verbs or tcp");
  }
  auto bw_size = ParseSize(o.bw_size);
  if (!bw_size.ok() || *bw_size == 0) return Usage("--bw-size: give a size like 1M");
  auto duration = Seconds("--duration", o.duration);
  auto lat_duration = Seconds("--lat-duration", o.lat_duration);
  auto connect_timeout = Seconds("--connect-timeout", o.connect_timeout);
  auto node_timeout = Seconds("--node-timeout", o.node_timeout);
  auto rendezvous_timeout = Seconds("--rendezvous-timeout", o.rendezvous_timeout);
  auto coll_timeout = Seconds("--coll-timeout", o.coll_timeout);
  auto test_timeout = o.test_timeout.empty() ? Result<double>(0.0) : Seconds("--test-timeout", o.test_timeout);
  auto baseline_timeout = Seconds("--baseline-timeout", o.baseline_timeout);
  for (const auto* r : {&duration, &lat_duration, &connect_timeout, &node_timeout, &rendezvous_timeout, &coll_timeout,
                        &test_timeout, &baseline_timeout}) {
    if (!r->ok()) return Usage(r->status().message());
  }
  if (auto ops = coll::ParseCollOpList(o.coll_ops); !ops.ok()) return Usage("--coll-ops: " + ops.status().message());
  if (auto sizes = ParseSizeList(o.coll_sizes); !sizes.ok()) return Usage("--coll-sizes: " + sizes.status().message());

  ladder::LadderOptions lo;
  lo.rungs = *rungs;
  lo.keep_going = o.keep_going;
  lo.pattern = o.pattern;
  lo.transport = o.transport;
  lo.pass_fraction = ladder::kDefaultVerbsPassFraction;
  if (!o.profile.empty()) {
    std::ifstream in(o.profile);
    if (!in) return Fail("cannot read --profile " + o.profile + " (a YAML profile, see profiles/)");
    std::stringstream text;
    text << in.rdbuf();
    // Checked here, so a typo fails once on the coordinator, not on every agent.
    auto profile = checks::ParseProfile(text.str(), o.profile);
    if (!profile.ok()) return Fail(profile.status().message());
    lo.profile_yaml = text.str();
    lo.profile_name = o.profile;
    if (profile->perf_pass_fraction) lo.pass_fraction = *profile->perf_pass_fraction;
  }
  if (!o.topology.empty()) {
    auto fabric_file = fabric::LoadFabric(o.topology);
    if (!fabric_file.ok()) return Fail("--topology " + fabric_file.status().message());
    lo.places = PlacesOf(*fabric_file);
  }
  if (o.pass_fraction > 0) lo.pass_fraction = o.pass_fraction;
  lo.bw_size = *bw_size;
  lo.bw_duration_s = *duration;
  lo.lat_duration_s = *lat_duration;
  lo.streams = o.streams;
  lo.parallel_pairs = o.parallel;
  lo.fan_out = o.fan_out;
  lo.snapshots = !o.no_snapshot;
  lo.connect_timeout = Ms(*connect_timeout);
  lo.info_timeout = lo.connect_timeout * 2;
  lo.node_timeout = Ms(*node_timeout);
  lo.test_timeout = Ms(*test_timeout);
  lo.coll_ops = o.coll_ops;
  lo.coll_sizes = o.coll_sizes;
  lo.coll_iters = o.coll_iters;
  lo.coll_warmup = o.coll_warmup;
  lo.coll_port = o.coll_port;
  lo.coll_timeout_s = *coll_timeout;
  lo.baselines = !o.no_baselines;
  lo.baseline_timeout_s = *baseline_timeout;
  lo.fabcheck_version = kVersion;
  lo.stop = &g_stop;
  lo.parameters = {{"rungs", o.rungs},          {"rungs_selected", *rungs},   {"keep_going", o.keep_going},
                   {"pattern", o.pattern},      {"transport", o.transport},   {"profile", o.profile},
                   {"topology", o.topology},
                   {"pass_fraction", lo.pass_fraction}, {"bw_size", lo.bw_size}, {"bw_duration_s", lo.bw_duration_s},
                   {"lat_duration_s", lo.lat_duration_s}, {"streams", o.streams}, {"parallel", o.parallel},
                   {"snapshots", lo.snapshots}, {"coll_ops", o.coll_ops}, {"coll_sizes", o.coll_sizes},
                   {"coll_iters", o.coll_iters}, {"coll_timeout_s", lo.coll_timeout_s}, {"test_timeout_s", *test_timeout},
                   {"baselines", lo.baselines}, {"baseline_timeout_s", lo.baseline_timeout_s}};
  if (!o.token_file.empty()) {
    auto t = net::ReadTokenFile(o.token_file);
    if (!t.ok()) return Fail(t.status().message());
    lo.token = *t;
  }
  if (o.tls.enabled()) {
    Status checked = app::CheckAgentsTls(o.tls, !o.agents.empty() || !o.agents_file.empty());
    if (!checked.ok()) return Usage(checked.message());
    lo.tls = o.tls;
  }
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
  std::signal(SIGPIPE, SIG_IGN);

  // Members: a list, a file, or the SPMD launch (as `sweep` finds them).
  agent::MemberOptions mo;
  mo.command = "ladder";
  mo.agents = o.agents;
  mo.agents_file = o.agents_file;
  mo.coordinator = o.coordinator;
  mo.world = o.world;
  mo.token = lo.token;
  if (o.tls.enabled()) mo.tls = o.tls;
  mo.rendezvous_timeout = Ms(*rendezvous_timeout);
  mo.stop = &g_stop;
  mo.insecure_no_token = o.insecure_no_token;
  mo.own_agent = [&] { return OwnAgentConfig(o, lo.token); };
  auto members = agent::FindMembers(mo, net::ProcessEnv());
  if (!members.ok()) {
    if (members.status().code() == StatusCode::kInvalidArgument) return Usage(members.status().message());
    return Fail(members.status().message());
  }
  if (members->rank_done) return kExitOk;  // rank 0 prints the verdict
  std::vector<control::HostPort> agents = std::move(members->agents);
  std::unique_ptr<agent::LocalAgent> own_agent = std::move(members->own_agent);
  std::unique_ptr<agent::AgentRegistry> rendezvous = std::move(members->registry);

  std::optional<bundle::Writer> writer;
  if (!o.out.empty()) {
    auto w = bundle::Writer::Create(o.out);
    if (!w.ok()) return Usage(w.status().message());
    writer.emplace(std::move(w).value());
  }
  const bool tty = ::isatty(STDERR_FILENO);
  if (!o.quiet) {
    lo.on_progress = [tty](const ladder::Progress& p) {
      std::cerr << (tty ? "\r" : "")
                << report::LadderProgressLine(p.rung, p.rung_number, p.rungs, p.members, p.done, p.total, p.elapsed_s, p.eta_s)
                << (tty ? "\033[K" : "\n") << std::flush;
    };
  }
  auto manifest = ladder::RunLadder(agents, lo, writer ? &*writer : nullptr);
  if (tty && !o.quiet) std::cerr << "\n";
  if (rendezvous) rendezvous->SetState("done");
  if (!manifest.ok()) return Fail(manifest.status().message());
  if (o.json) {
    std::cout << ToJsonText(nlohmann::json(*manifest), 2) << "\n";
  } else {
    std::cout << report::RenderLadderVerdict(*manifest, o.out);
  }
  if (rendezvous) std::this_thread::sleep_for(std::chrono::seconds(2));  // let the ranks see "done"
  return manifest->verdict.exit_code;
}

fabcheck::app::RunFn Setup(CLI::App& root) {
  auto* cmd = root.add_subcommand(
      "ladder", "Walk the test ladder L1 -> L4 across the cluster, stop at the first failing rung, bundle the evidence");
  auto o = std::make_shared<Options>();
  fabcheck::app::Tunables t(cmd, "ladder");
  t.Text("--agents", o->agents, "Members: agents host[:port],... (port 18521 when left out)", "host[:port] list");
  t.Path("--agents-file", o->agents_file, "File with one agent host[:port] per line (# comments)");
  t.Text("--coordinator", o->coordinator,
         "SPMD launch: rank 0's HOST[:PORT] where the ranks meet (port 18522 when left out; Kubernetes: the\n"
         "headless Service name; under srun the step's first node when left out)",
         "host[:port]");
  t.Integer("--world", o->world, "Number of ranks when the environment gives only the rank (Indexed Job)", 0, 1 << 20);
  t.Text("--rungs", o->rungs,
         "Rungs to run: all, L1..L4, a range (L1-L3) or rung IDs (L1L2.node, L1L2.cluster, L2.path, L3, L4)",
         "rung selection");
  t.Flag("--keep-going", o->keep_going,
         "After a failing rung, go on with the members that passed it (and say who was dropped where)");
  t.Text("--pattern", o->pattern,
         "L2.path and L3 pairs: ring (i <-> i+1), pairwise (every pair), rails (ring, NIC i <-> NIC i on every rail)",
         "ring|pairwise|rails");
  t.Text("--transport", o->transport,
         "L3: auto (verbs where both ends have an RDMA device), verbs, or tcp (measure the IP path; never "
         "counted as RDMA)",
         "auto|verbs|tcp");
  t.Path("--profile", o->profile,
         "Machine-type profile (YAML, profiles/): sent to every agent's doctor; its perf.pass_fraction sets the L3 "
         "pass line");
  t.Path("--topology", o->topology,
         "Fabric file (fabcheck.fabric/v1, as for sweep; `fabcheck fabric --from k8s|ibnetdiscover|lldp` writes "
         "one from node labels or the fabric): each member's rack, leaf and rail leaves go into the bundle, where "
         "the report groups the baselines by rack");
  t.Number("--pass-fraction", o->pass_fraction,
           "L3 pass line as a fraction of the expected bandwidth (default 0: the profile's, else 0.9)", 0, 1);
  t.Text("--bw-size", o->bw_size, "L3 bandwidth message size", "size");
  t.Text("--duration", o->duration, "L3 bandwidth time per direction", "duration");
  t.Text("--lat-duration", o->lat_duration, "L3 latency time per direction", "duration");
  t.Integer("--streams", o->streams, "L3 TCP connections / QPs per bandwidth test", 1, 64);
  t.Integer("--parallel", o->parallel, "Pairs of a round in flight at once (0 = the whole round)", 0, 8192);
  t.Integer("--fan-out", o->fan_out, "Members asked at once in L1/L2 and for counters", 1, 4096);
  t.Text("--coll-ops", o->coll_ops, "L4: the collectives (coll's --op names, comma-separated, or all)",
         "collective list");
  t.Text("--coll-sizes", o->coll_sizes, "L4: message sizes MIN:MAX (x2 steps) or a list", "size list");
  t.Integer("--coll-iters", o->coll_iters, "L4: timed iterations per size", 1, 1'000'000'000);
  t.Integer("--coll-warmup", o->coll_warmup, "L4: warm-up iterations per size", 0, 1'000'000'000);
  t.Port("--coll-port", o->coll_port, "L4: port of the ranks' rendezvous on the first member",
         /*zero_means_any=*/false);
  t.Text("--coll-timeout", o->coll_timeout, "L4: longest the whole job may take; its ranks are stopped then",
         "duration");
  t.Flag("--no-baselines", o->no_baselines,
         "Skip the baseline groups of L3 and L4 (single node, two nodes, same rack, cross rack, one rail, all rails, "
         "GPUDirect on/off; docs/ladder.md); the report's checklist item 7 then has no baselines to read");
  t.Text("--baseline-timeout", o->baseline_timeout,
         "Longest the baseline groups of one rung may take together; groups left when it is spent are not run",
         "duration");
  t.Flag("--no-snapshot", o->no_snapshot, "Do not put each member's sysfs snapshot into the bundle");
  t.Path("--token-file", o->token_file, "The agents' shared token", /*dash_is_stdio=*/false, "FABCHECK_TOKEN_FILE");
  t.Flag("--insecure-no-token", o->insecure_no_token,
         "SPMD: let this rank's agent and the rendezvous serve without --token-file beyond loopback (no mutual TLS)");
  t.Tls(o->tls, fabcheck::app::Tunables::TlsRole::kClient);
  t.Text("--connect-timeout", o->connect_timeout, "Give up on an agent that does not connect in this time",
         "duration");
  t.Text("--test-timeout", o->test_timeout,
         "L2.path/L3: longest one direction of a pair may take (default: from --duration, ~20 s; raise it "
         "for slow or emulated links)",
         "duration");
  t.Text("--node-timeout", o->node_timeout, "L1L2.node: longest inventory + doctor + snapshot on one member",
         "duration");
  t.Text("--rendezvous-timeout", o->rendezvous_timeout, "SPMD: how long rank 0 waits for every rank", "duration");
  t.Text("--listen", o->listen, "SPMD: this rank's agent address (port 0 = any)", "host:port");
  t.List("--data-iface", o->data_ifaces, "SPMD: this rank's data-plane interface, once per rail", "interface");
  t.List("--data-addr", o->data_addrs, "SPMD: this rank's data-plane address, once per rail", "address");
  t.Path("--sysroot", o->sysroot, "SPMD: read this rank's node from a fixture or capture (tests)");
  t.Path("-o,--output", o->out, "Write the evidence bundle here: a new directory, or FILE.tar.gz");
  t.Flag("--json", o->json, "Print the manifest (schema fabcheck.ladder/v1) instead of the verdict");
  t.Flag("--quiet", o->quiet, "No progress lines on stderr");
  cmd->footer(R"(Rungs, bottom-up; each runs on the members that passed the rungs below:
  L1L2.node     inventory + doctor (with --profile) on every member, in one parallel round
  L1L2.cluster  settings that must agree: link layer, port rate/width, data-plane MTU, RoCE GID type and the
                index NCCL picks, PFC priorities and trust, firmware, drivers, NCCL/CUDA versions, kernel;
                each member against the majority, outliers named
  L2.path       path MTU (DF probes) and reachability per pair on the data-plane addresses
  L3            bandwidth per pair against the port rate and PCIe link (90% for verbs), latency p50/p99;
                a pair that could only use TCP fails as "RDMA not used"
  L4            one `coll` job over every GPU of the members (all_reduce, all_gather, alltoall up to 1 GiB):
                busbw against the members' RDMA ports (80%), and what NCCL really used on each member
                (its log: NET/IB with GPUDirect, or the NET/Socket fallback); "not run" with the reason
                where a member has no GPU, CUDA or NCCL
After L3 and L4, their baseline groups (--no-baselines skips them): one representative test per scope on
members that passed the rung, racks from --topology: single node, two nodes, same rack, cross rack, one
rail and all rails, and in L4 GPUDirect RDMA on/off (NCCL_NET_GDR_LEVEL=LOC); a scope this cluster cannot
form is recorded as not applicable with the reason. A failing group fails its rung.
Without --keep-going the ladder stops at the first failing rung. A rung that cannot run is "not run" with
the reason, never a pass. Counters (RDMA port and hw counters, netdev statistics, PFC) are sampled on
every member before and after each rung; their deltas are in the bundle.

Exit code: 0 go, 1 go with warnings, 2 no-go (a failing rung, a rung asked for that did not run, L3 over
TCP only, an unreachable member), 3 could not run, 64 bad command line. Ctrl-C stops after the calls in
flight and keeps what was measured; a second Ctrl-C exits at once.

Examples:
  fabcheck ladder --agents n1,n2,n3,n4 --profile /usr/share/fabcheck/profiles/dgx-h100-ib.yaml -o golive.tar.gz
  fabcheck ladder --agents-file nodes.txt --rungs L1-L3 --keep-going -o run1/
  srun -N16 --ntasks-per-node=1 fabcheck ladder --data-iface ib0 -o r.tar.gz   # rank 0: the first node
  sbatch /usr/share/fabcheck/slurm/fabcheck-ladder.sbatch                     # the same, as a batch job
  fabcheck report golive.tar.gz -o report.html
See docs/ladder.md.)");
  return [o] { return RunLadderCommand(*o); };
}

const bool kRegistered = fabcheck::app::RegisterCommand({"ladder", 590, &Setup});

}  // namespace
