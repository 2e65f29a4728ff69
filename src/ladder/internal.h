// Shared by the rung implementations (runner.cc, rung_node.cc, rung_pairs.cc,
// rung_coll.cc); not an interface of the module.
#pragma once

#include <atomic>
#include <chrono>
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

// After a pair rung's counter deltas are in: each failing pair gets its two
// ports' deltas and, where one end counted link errors, that NIC or cable as
// the suspect (a finding, ladder.perf.link-errors); the blame, the members
// that pass and the reason are redone with the suspects.
void CorrelatePairRung(Run& run, model::RungResult& result);

// Makes sure each member has its inventory and facts (POST /v1/node without
// snapshot) for a rung that needs them when L1L2.node did not run.
void FetchNodeFacts(Run& run, const std::vector<std::string>& members, const std::string& rung);

}  // namespace fabcheck::ladder::internal
