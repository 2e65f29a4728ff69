// The ladder across the cluster: asks every agent who it is, then climbs the
// rungs bottom-up (rungs.h), each on the members that passed the rungs below,
// sampling counters before and after each rung, and writes the evidence into
// a bundle (bundle/bundle.h) as it goes. It never prints: progress goes to a
// callback.
//
// Robustness: every call to an agent has a timeout; a member that does not
// answer at the start, or stops answering during a rung, is named (reachable
// = false, dropped_at, dropped_reason) and the ladder goes on without it.
// `stop` (Ctrl-C) ends the ladder after the calls in flight: what was
// measured is kept, the rungs left are "not run: interrupted".
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "bundle/bundle.h"
#include "control/api.h"
#include "net/tls.h"
#include "fabcheck/model/ladder.h"

namespace fabcheck::ladder {

struct Progress {
  std::string rung;      // rung ID
  int rung_number = 0;   // 1-based among the rungs that run
  int rungs = 0;
  int members = 0;       // on this rung
  size_t done = 0;       // units of this rung finished (members or pairs)
  size_t total = 0;
  double elapsed_s = 0;  // since the ladder started
  double eta_s = -1;     // this rung's remaining time from its pace so far; -1 unknown
};

// Where a member sits in the fabric (ladder --topology, the fabric file
// sweep takes): recorded per member in the bundle, so the report can group
// baselines by rack and tell a rack's leaf from a rail's.
struct MemberPlace {
  std::string rack;                      // "" unknown
  std::string leaf;                      // the rail-0 leaf
  std::vector<std::string> rail_leaves;  // per rail
};

struct LadderOptions {
  std::vector<std::string> rungs;          // selected, from ParseRungSelection
  bool keep_going = false;
  std::string pattern = "ring";            // L2.path and L3: ring, pairwise, rails
  std::string transport = "auto";          // auto (verbs where both ends have RDMA), verbs, tcp
  std::string profile_name;                // --profile file name ("" = none)
  std::string profile_yaml;                // its text, sent to every agent
  double pass_fraction = 0.9;              // L3 verbs pass line (profile may override)
  uint64_t bw_size = 1 << 20;
  double bw_duration_s = 1.0;
  double lat_duration_s = 0.3;
  int streams = 1;
  int parallel_pairs = 0;                  // pairs of a round in flight at once; 0 = all
  int fan_out = 256;                       // members asked at once (L1/L2, counters)
  bool snapshots = true;                   // L1L2.node: each member's snapshot into the bundle
  // L4: one `fabcheck coll` job over every GPU of the members.
  std::string coll_ops = "all_reduce,all_gather,alltoall";
  std::string coll_sizes = "1M:1G";
  int coll_iters = 20;
  int coll_warmup = 5;
  int coll_port = 18523;                   // where rank 0 (on the first member) serves the rendezvous
  double coll_timeout_s = 1800;            // the whole job; its ranks are stopped after it
  // Baseline groups of L3 and L4 (ladder/baselines.h): one representative
  // test per scope after the rung, all of a rung's groups within the cap.
  bool baselines = true;
  double baseline_timeout_s = 600;
  std::optional<std::string> token;
  std::optional<net::TlsFiles> tls;  // the agents' API over HTTPS (control::ClientOptions::tls)
  std::chrono::milliseconds connect_timeout{3000};
  std::chrono::milliseconds info_timeout{6000};
  std::chrono::milliseconds node_timeout{120000};  // inventory + doctor + snapshot on one node
  // L2.path/L3: the longest one direction of a pair may take; 0 = derived from
  // the durations (sweep::TestTimeout), enough for a healthy fabric.
  std::chrono::milliseconds test_timeout{0};
  // By hostname or address (control or data): where each member sits.
  std::map<std::string, MemberPlace> places;
  std::string fabcheck_version;
  nlohmann::json parameters;               // the command line as values, for the manifest
  const std::atomic<bool>* stop = nullptr;
  std::function<void(const Progress&)> on_progress;
  // Called when a rung starts with the members it runs on (tests kill an agent here).
  std::function<void(const std::string& rung, const std::vector<std::string>& members)> on_rung_start;
};

// Runs the ladder over `agents` (control endpoints) and writes the bundle
// (manifest included) through `writer` (may be null: nothing is written).
// Fails only when the ladder cannot start (no agent answers, bad options);
// everything else is in the manifest.
Result<model::LadderManifest> RunLadder(const std::vector<control::HostPort>& agents, const LadderOptions& options,
                                        bundle::Writer* writer);

}  // namespace fabcheck::ladder
