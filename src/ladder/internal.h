// Shared by the rung implementations (runner.cc, rung_node.cc, rung_pairs.cc,
// rung_coll.cc); not an interface of the module.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/parallel.h"
#include "base/status.h"
#include "bundle/bundle.h"
#include "control/api.h"
#include "control/client.h"
#include "fabcheck/model/inventory.h"
#include "fabcheck/model/ladder.h"
#include "ladder/coll_judge.h"
#include "ladder/runner.h"

namespace fabcheck::ladder::internal {

using Clock = std::chrono::steady_clock;

double NowUnix();

using base::ParallelFor;

struct Member {
  control::HostPort endpoint;
  std::optional<control::AgentInfo> info;
  model::LadderMember m;            // what goes into the manifest
  std::optional<model::Inventory> inventory;
  nlohmann::json facts = nlohmann::json::object();
  std::atomic<bool> alive{false};
  std::mutex mu;                    // guards m.error/m.dropped_* when marked dead from a worker

  std::string DataAddress(int rail) const;
};

// Everything a rung needs.
struct Run {
  Run(const LadderOptions& o, bundle::Writer* w, std::vector<std::unique_ptr<Member>>& m)
      : options(o), writer(w), members(m), start(Clock::now()) {}

  const LadderOptions& options;
  bundle::Writer* writer;            // may be null
  std::vector<std::unique_ptr<Member>>& members;
  Clock::time_point start;
  int rung_number = 0;               // for progress
  int rungs_to_run = 0;
  std::vector<std::string> warnings;  // bundle write failures (reported, never fatal)
  std::mutex mu;

  control::AgentClient Client(const Member& m) const;
  Member* Find(const std::string& id) const;
  bool Stopped() const { return options.stop && options.stop->load(); }
  // Writes evidence; a failure is remembered and reported, the ladder goes on.
  bool Write(const std::string& path, std::string_view content);
  bool WriteJson(const std::string& path, const nlohmann::json& value);
  // A call to `m` failed: when the agent no longer answers /v1/health it is
  // marked dead here (named, dropped at `rung`). Returns true when it died.
  bool CheckAlive(Member& m, const Status& failure, const std::string& rung);
  void Progress(const std::string& rung, int members, size_t done, size_t total, Clock::time_point rung_start);
};

// The rungs. Each fills `result` (verdict, reason, members_passed, findings,
// pairs...) for `members` (IDs of live members).
void RunNodeRung(Run& run, const std::vector<std::string>& members, model::RungResult& result);
void RunClusterRung(Run& run, const std::vector<std::string>& members, model::RungResult& result);
void RunPathRung(Run& run, const std::vector<std::string>& members, model::RungResult& result);
void RunPerfRung(Run& run, const std::vector<std::string>& members, model::RungResult& result);
void RunCollRung(Run& run, const std::vector<std::string>& members, model::RungResult& result);

// One `fabcheck coll` job over rank blocks (rung L4 and its baseline
// groups): every member asked at once, each member's ranks.json and NCCL logs
// written under members/<id>/<member_subdir>/, rank 0's report to
// report_file.
struct CollJobSpec {
  std::vector<CollRankBlock> plan;
  std::string ops, sizes;
  int iters = 20, warmup = 5;
  double timeout_s = 1800;
  std::string token, coordinator;
  std::string gdr_level;                      // NCCL_NET_GDR_LEVEL ("" = NCCL's choice)
  std::map<std::string, std::string> ib_hca;  // member ID -> NCCL_IB_HCA (absent = every HCA)
  std::string member_subdir = "L4";
  std::string report_file = "L4/coll.json";
};
struct CollJobOutcome {
  int world = 0;
  std::optional<nlohmann::json> report;           // rank 0's fabcheck.coll/v1
  std::vector<std::string> problems;              // "member: what went wrong"
  bool could_not_run = false;                     // every problem is an exit 3 (no CUDA, no NCCL)
  std::vector<model::NcclTransportCheck> nccl;    // what NCCL used on each member
  std::vector<const model::Inventory*> inventories;  // of the plan's members, in order
  std::vector<std::string> evidence_files;
};
CollJobOutcome RunCollJob(Run& run, const CollJobSpec& spec, const std::string& rung, bool progress);

// One direction of a pair test on rung L3: `a` sends from its rail
// `rail_a` to `b`'s rail `rail_b` (a == b: between two NICs of one node, or
// a NIC to itself), measured and judged like the rung's pairs (`tcp_best`:
// the rung's best TCP figure). The perf JSON goes to `file` ("" = not kept).
model::PairTest MeasurePerfDirection(Run& run, Member& a, Member& b, int rail_a, int rail_b, bool bind_rail,
                                     const std::string& rung, const std::string& file, std::optional<double> tcp_best);

// The baseline groups of L3 and L4 (ladder/baselines.h), after the rung:
// formed from the members that passed it and run within
// --baseline-timeout; a failing group fails the rung with a
// ladder.baseline.fail finding (its members still pass: the group proves a
// scope, not a member).
void RunPerfBaselines(Run& run, model::RungResult& result);
void RunCollBaselines(Run& run, model::RungResult& result);

// After a pair rung's counter deltas are in: each failing pair gets its two
// ports' deltas and, where one end counted link errors, that NIC or cable as
// the suspect (a finding, ladder.perf.link-errors); the blame, the members
// that pass and the reason are redone with the suspects.
void CorrelatePairRung(Run& run, model::RungResult& result);

// Makes sure each member has its inventory and facts (POST /v1/node without
// snapshot) for a rung that needs them when L1L2.node did not run.
void FetchNodeFacts(Run& run, const std::vector<std::string>& members, const std::string& rung);

}  // namespace fabcheck::ladder::internal
