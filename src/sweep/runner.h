// The coordinator: asks every agent who it is, plans the rounds, runs each
// round's pairs at once (both directions, every rail), and gathers a
// SweepResult. It never prints: progress goes to a callback.
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
#include "sweep/analysis.h"
#include "sweep/schedule.h"

namespace fabcheck::sweep {

struct Progress {
  int round = 0;        // rounds finished
  int rounds = 0;
  size_t pairs_done = 0;
  int unreachable = 0;
  double elapsed_s = 0;
  double eta_s = 0;     // from the mean round time so far
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
  AnalysisOptions analysis;
  const std::atomic<bool>* stop = nullptr;
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

}  // namespace fabcheck::sweep
