// The coordinator: asks every member who it is (through a Transport: real
// agents or the simulator), plans the rounds (planner.h), runs each round's
// pairs at once (both directions, every rail), and gathers a SweepResult
// judged by the analysis (no fabric) or the localiser (with a fabric). It
// never prints: progress goes to a callback.
//
// Robustness: an agent that does not answer (at the start or mid-sweep) is
// marked unreachable and its remaining pairs are skipped; the rest goes on.
// `stop` (Ctrl-C) ends the sweep after the pairs in flight, which are bounded
// by the per-test timeout: the result is then partial (interrupted = true).
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "control/api.h"
#include "net/tls.h"
#include "fabcheck/model/sweep.h"
#include "fabric/fabric.h"
#include "sweep/analysis.h"
#include "sweep/localize.h"
#include "sweep/schedule.h"
#include "sweep/transport.h"

namespace fabcheck::sweep {

struct Progress {
  int round = 0;        // rounds finished
  int rounds = 0;
  size_t pairs_done = 0;
  int unreachable = 0;
  double elapsed_s = 0;
  double eta_s = 0;     // from the mean round time so far
};

// What judging the sweep cost: the localiser's CPU (folding every test into
// the evidence as it arrives, then the final localisation; the adaptive
// planner's own look at the suspects between rounds is planning, not
// counted), and how many tests it judged.
struct SweepCost {
  double analysis_cpu_s = 0;
  size_t tests = 0;
};

struct SweepOptions {
  Pattern pattern = Pattern::kPairwise;
  int peers = 3;                   // k-random: peers per node
  uint64_t seed = 1;
  bool rails = false;              // test NIC i <-> NIC i, every rail of a pair at once
  control::PeerTestRequest test;   // sizes, durations, transport, what to measure (peer fields filled per pair)
  std::optional<std::string> token;
  std::optional<net::TlsFiles> tls;  // the agents' API over HTTPS (control::ClientOptions::tls)
  std::chrono::milliseconds connect_timeout{3000};
  std::chrono::milliseconds info_timeout{5000};
  int max_parallel_pairs = 256;    // pairs of one round in flight at once
  // The fabric (member -> leaf per rail). Members are matched to it by name,
  // display name, address or control host; topology and adaptive need it,
  // and with it the verdict names elements (node, nic, cable, uplink, spine, mtu).
  const fabric::Fabric* fabric = nullptr;
  int flows = 0;                   // flows per inter-leaf test; 0: enough to cover the spines (p >= 0.9)
  double uplink_load = 0.5;        // share of a leaf testing across leaves at once
  int max_rounds = 100;            // adaptive: the budget of rounds
  int path_hops = 2;               // agents: trace flows' routers up to this TTL (AgentTransportOptions::path_hops)
  bool dense_matrices = true;      // n x n matrices in the result (off for very large simulated fabrics)
  // Every directional test in the result (`pairs`). With a fabric the
  // localiser needs only running sums (evidence.h), so a very large simulated
  // sweep turns this off and its memory grows with members x rails, not tests.
  bool keep_pairs = true;
  AnalysisOptions analysis;
  LocalizeOptions localize;
  const std::atomic<bool>* stop = nullptr;
  SweepCost* cost = nullptr;       // filled when given
  std::function<void(const Progress&)> on_progress;
  // Called once, after members answered and before round 1 (tests kill an agent here).
  std::function<void(const std::vector<model::SweepMember>&)> on_start;
  // Called after each round (tests use it to kill an agent mid-sweep).
  std::function<void(int round)> on_round;
};

// Runs the sweep over `agents` (control endpoints). Fails only when the sweep
// cannot start (fewer than 2 agents answer); everything else is in the result.
Result<model::SweepResult> RunSweep(const std::vector<control::HostPort>& agents, const SweepOptions& options);

// The per-request timeout for a test with these settings: both perf runs, the
// MTU search, and slack for connection set-up.
std::chrono::milliseconds TestTimeout(const control::PeerTestRequest& test);

// The same over any transport (the simulator's, a test's).
Result<model::SweepResult> RunSweepOver(Transport& transport, const SweepOptions& options);

// The fabric reordered to the sweep's members: member i of the result is
// member i of the sweep. Fails naming the members the fabric does not know.
Result<fabric::Fabric> MatchFabric(const fabric::Fabric& fabric, const std::vector<model::SweepMember>& members,
                                   int rails);

}  // namespace fabcheck::sweep
