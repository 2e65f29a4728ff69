// `fabcheck sim`: run the sweep's real planner and localiser against a
// simulated fabric with planted faults, and score them. Parsing and wiring
// only: sim/ does the work.
#include <unistd.h>

#include <iostream>

#include "app/command.h"
#include "app/tunables.h"
#include "base/exit_codes.h"
#include "base/input.h"
#include "base/json_text.h"
#include "report/sweep_text.h"
#include "sim/sim.h"

namespace {

using namespace fabcheck;

struct Options {
  sim::ClosOptions clos;
  std::string strategy = "adaptive";
  std::string faults, fault_mix;
  uint64_t seed = 1;
  double noise_cv = 0.02, tail = 0.01, round_seconds = 10;
  int flows = 0, max_rounds = 100;
  double uplink_load = 0.5;
  bool json = false, quiet = false;
};

int Usage(const std::string& m) {
  std::cerr << "fabcheck sim: " << m << "\n";
  return kExitUsage;
}

// The simulator tests the localiser, so its exit code is that test's
// outcome: 2 a planted fault was not named, 1 every fault named but some
// finding is false (a decoy or a healthy element), 0 exactly the faults.
// Without planted faults any finding is a false one.
int SimExitCode(const nlohmann::json& report) {
  if (!report.contains("score")) return report.value("findings", nlohmann::json::array()).empty() ? kExitOk : kExitWarnings;
  const auto& score = report["score"];
  if (!score.value("missed", nlohmann::json::array()).empty()) return kExitFailures;
  if (!score.value("false_positives", nlohmann::json::array()).empty()) return kExitWarnings;
  return kExitOk;
}

int Run(const Options& o) {
  auto strategy = sweep::ParsePattern(o.strategy);
  if (!strategy.ok()) return Usage(strategy.status().message());
  if (!o.fault_mix.empty() && o.fault_mix != "realistic" && o.fault_mix != "harsh") {
    return Usage("--fault-mix: 'realistic' or 'harsh'");
  }
  sim::SimOptions so;
  so.clos = o.clos;
  so.strategy = *strategy;
  so.seed = o.seed;
  so.realistic_mix = o.fault_mix == "realistic";
  so.harsh_mix = o.fault_mix == "harsh";
  so.transport.noise_cv = o.noise_cv;
  so.transport.tail_probability = o.tail;
  so.transport.round_seconds = o.round_seconds;
  so.flows = o.flows;
  so.uplink_load = o.uplink_load;
  so.max_rounds = o.max_rounds;
  if (!o.faults.empty()) {
    auto text = ReadFileBounded(o.faults);
    if (!text.ok()) {
      std::cerr << "fabcheck sim: " << text.status().message() << "\n";
      return kExitError;
    }
    if (text->find_first_not_of(" \t\r\n") == std::string::npos) {
      // An empty file would score a run "clean" against faults nobody wrote.
      std::cerr << "fabcheck sim: --faults " << o.faults << " is empty: give a JSON list of faults, e.g. "
                << R"([{"kind": "node_slow", "element": "n0003", "factor": 0.4}])" << ", or leave --faults out\n";
      return kExitError;
    }
    so.faults_json = *text;
  }
  const bool tty = ::isatty(STDERR_FILENO);
  if (!o.quiet) {
    so.on_progress = [tty](const sweep::Progress& p) {
      std::cerr << (tty ? "\r" : "") << "sim: round " << p.round << " of " << p.rounds << " (simulated "
                << static_cast<int>(p.elapsed_s) << " s)" << (tty ? "   " : "\n") << std::flush;
    };
  }
  auto report = sim::RunSim(so);
  if (tty && !o.quiet) std::cerr << "\n";
  if (!report.ok()) {
    std::cerr << "fabcheck sim: " << report.status().message() << "\n";
    return report.status().code() == StatusCode::kInvalidArgument ? kExitUsage : kExitError;
  }
  std::cout << (o.json ? ToJsonText(*report, 2) + "\n" : sim::RenderSimText(*report));
  return SimExitCode(*report);
}

app::RunFn Setup(CLI::App& root) {
  auto* cmd = root.add_subcommand("sim", "Run the sweep against a simulated fabric with planted faults and score it");
  auto o = std::make_shared<Options>();
  app::Tunables t(cmd, "sim");
  t.Integer("--nodes", o->clos.nodes, "Members", 2, 65536);
  t.Integer("--rails", o->clos.rails, "Rails (NICs per member, one Clos each)", 1, 16);
  t.Integer("--nodes-per-leaf", o->clos.nodes_per_leaf, "Members per leaf switch", 1, 512);
  t.Integer("--spines", o->clos.spines, "Spines per rail (every leaf links to each); with --pods, per pod", 1, 256);
  t.Integer("--pods", o->clos.pods,
            "Three tiers: split the leaves into this many pods, each with its own --spines, under --cores core "
            "switches (1 = two tiers)",
            1, 64);
  t.Integer("--cores", o->clos.cores, "Three tiers: core switches per rail, every spine linked to each", 0, 256);
  t.Number("--oversubscription", o->clos.oversubscription, "Leaf downlink over uplink capacity (1 = non-blocking)", 1,
           16);
  t.Number("--nic-gbps", o->clos.nic_gbps, "NIC and cable rate, Gb/s", 1, 100000);
  t.Text("--strategy", o->strategy, "pairwise, ring, k-random, topology or adaptive", "strategy");
  t.Path("--faults", o->faults, "Fault file: JSON list of {kind, element, factor|loss|mtu|cv}");
  t.Text("--fault-mix", o->fault_mix,
         "Generate faults: realistic (every kind at once, with noise decoys); harsh (realistic plus uplinks degraded "
         "or lossy one way, a flapping uplink, a congested spine)",
         "realistic");
  t.Count("--seed", o->seed, "Seed of the fault mix, ECMP source ports and noise", 0, uint64_t{1} << 62);
  t.Number("--noise-cv", o->noise_cv, "Measurement noise (coefficient of variation)", 0, 0.5);
  t.Number("--tail", o->tail, "Probability of a heavy-tail dip (a busy host) per test", 0, 0.5);
  t.Number("--round-seconds", o->round_seconds, "Simulated wall time of one round", 0.001, 86400);
  t.Integer("--flows", o->flows, "Flows per inter-leaf test (0: cover every spine with p >= 0.9)", 0, 256);
  t.Number("--uplink-load", o->uplink_load, "Share of a leaf testing across leaves at once", 0.01, 1);
  t.Integer("--max-rounds", o->max_rounds, "Adaptive: the budget of rounds", 1, 1 << 20);
  t.Flag("--json", o->json, "Print the fabcheck.sim/v1 document");
  t.Flag("--quiet", o->quiet, "No progress on stderr");
  cmd->footer(R"(Fault kinds and the elements they take (names as the simulator gives them):
  node_slow n0001 factor | nic_slow n0001/r3 factor | cable_degraded n0001/r3~leaf-r3-00 factor or loss
  uplink_degraded leaf-r3-07~spine-r3-12 factor or loss | spine_loss spine-r3-12 loss
  three tiers (--pods, --cores): uplink_degraded spine-r3-12~core-r3-02 | spine_loss core-r3-02
  mtu_mismatch n0001/r3 mtu | flap n0001/r3~leaf-r3-00 factor (share of time down) | noise n0001 cv (a decoy)

Examples:
  fabcheck sim --nodes 2048 --rails 8 --fault-mix realistic --seed 7
  fabcheck sim --nodes 256 --rails 2 --faults faults.json --strategy topology --json
  fabcheck sim --nodes 1024 --rails 2 --pods 4 --spines 4 --cores 4 --fault-mix realistic --strategy topology
  echo '[{"kind": "uplink_degraded", "element": "leaf-r0-01~spine-r0-03", "loss": 0.01}]' > f.json
  fabcheck sim --nodes 128 --rails 1 --faults f.json
Exit code: 0 the localiser named exactly the planted faults (or, with none planted, nothing), 1 it named them
all but also a false one (a decoy or a healthy element), 2 it missed a planted fault, 3 could not run,
64 usage or a bad fault file.
See docs/sim.md for the model and the measured accuracy.)");
  return [o] { return Run(*o); };
}

const bool kRegistered = app::RegisterCommand({"sim", 610, &Setup});

}  // namespace
