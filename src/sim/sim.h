// `fabcheck sim`: the sweep's real planner and localiser against a simulated
// fabric with planted faults, scored against the truth.
//   precision  findings that name a planted fault's element / all findings
//   recall     planted faults named with their element and kind / planted faults
//   top-1      planted faults whose exact element is named / planted faults
// Noise decoys are not faults: a finding on one is a false positive.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <string>

#include "base/status.h"
#include "sim/clos.h"
#include "sim/sim_transport.h"
#include "sweep/runner.h"

namespace fabcheck::sim {

inline constexpr std::string_view kSimSchema = "fabcheck.sim/v1";

struct SimOptions {
  ClosOptions clos;
  std::string faults_json;       // a fault file's text; empty: none (or the generated mix)
  bool realistic_mix = false;    // --fault-mix realistic
  bool harsh_mix = false;        // --fault-mix harsh: realistic plus one-way, gray-loss, flapping and congested links
  uint64_t seed = 1;
  SimTransportOptions transport;
  sweep::Pattern strategy = sweep::Pattern::kAdaptive;
  int flows = 0;
  double uplink_load = 0.5;
  int max_rounds = 100;
  std::function<void(const sweep::Progress&)> on_progress;
};

// Runs the sweep and returns the fabcheck.sim/v1 document: settings, rounds,
// simulated wall time, analysis CPU time, findings, and with planted faults
// the score (precision, recall, top-1, what was missed, what was wrong).
Result<nlohmann::json> RunSim(const SimOptions& options);

// A page for people from that document.
std::string RenderSimText(const nlohmann::json& report);

}  // namespace fabcheck::sim
