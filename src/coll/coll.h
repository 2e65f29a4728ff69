// `fabcheck coll` end to end for one process: NCCL logging set up, the
// collectives run (runner.h), NCCL's log read back (nccl_log.h), the figures
// compared with what the topology allows (expect.cc). The app command only
// parses flags and decides whether to launch local ranks (launch.h).
#pragma once

#include <filesystem>

#include <string>

#include "base/status.h"
#include "coll/rendezvous.h"
#include "coll/runner.h"
#include "fabcheck/model/coll.h"

namespace fabcheck::coll {

// Points NCCL's INFO log at `dir` (nccl.<host>.<pid>.log) unless the user set
// NCCL_DEBUG / NCCL_DEBUG_FILE / NCCL_DEBUG_SUBSYS already; creates `dir`.
// Must run before NCCL is first used in this process (and before launching ranks).
Status SetupNcclLogging(const std::string& dir);

// The NCCL log files in `dir`; when there are none, the user's NCCL_DEBUG_FILE:
// the file it names, or the files its %h/%p pattern matches that were written
// at or after `since` (this run's, not an older run's beside them). The
// default takes any time: the file clock's zero is not its earliest time
// (libstdc++ counts from 2174).
std::vector<std::string> NcclLogFiles(const std::string& dir,
                                      std::filesystem::file_time_type since = std::filesystem::file_time_type::min());

// Expected busbw from NCCL's own topology estimate (ring graphs in its log),
// and findings: #wrong, busbw far below expectation, NCCL's transport verdicts.
void AddExpectationAndFindings(model::CollReport* report);

// Everything above, for this process (single-process, or one rank).
Result<model::CollReport> RunColl(const CollOptions& options, const RankSetup& setup, const std::string& log_dir);

// Process per GPU: this rank's outcome for the rendezvous (host, device, or
// the error that stopped it).
RankOutcome OutcomeOf(const Result<model::CollReport>& report, int rank, const std::string& host);

// Rank 0: every rank's outcome into its report. `ranks` lists them all (by
// rank), and a rank that failed or never reported is a failing finding.
void MergeRankOutcomes(const std::vector<RankOutcome>& outcomes, model::CollReport* report);

}  // namespace fabcheck::coll
