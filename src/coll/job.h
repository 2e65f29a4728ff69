// One `fabcheck coll` job, whichever way it was started: a single process
// driving its GPUs, one rank of many (started by --nprocs, Slurm, mpirun,
// PMI, an Indexed Job or torchrun: net/rank.h), or the --nprocs launcher
// itself. The app command parses options into a JobOptions and prints what
// comes back; everything in between lives here.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "net/tls.h"
#include "coll/runner.h"
#include "fabcheck/model/coll.h"

namespace fabcheck::coll {

struct JobOptions {
  CollOptions coll;             // what to measure
  int nprocs = 0;               // > 1: start this many local ranks and wait for them
  std::string rendezvous;       // --rendezvous spec (rendezvous.h)
  std::string coordinator;      // --coordinator HOST[:PORT] (= tcp:HOST:PORT)
  int world = 0;                // --world, for launchers that export only the rank
  std::string token_file;       // the ranks' shared token (net/auth.h policy)
  net::TlsFiles tls;            // the tcp rendezvous over HTTPS (RankExchangeConfig::tls)
  std::string rendezvous_bind;  // rank 0's board listens here ("" = every address)
  double rendezvous_timeout_s = 300;
  std::string log_dir;          // NCCL's INFO log ("" = a new directory)
  double launch_timeout_s = 1800;
  // The command line this process was started with ("fabcheck", "coll", ...):
  // --nprocs starts its ranks with it, less the options only the launcher uses,
  // so every option reaches the ranks without being listed twice.
  std::vector<std::string> argv;
};

struct JobOutcome {
  // The report to print (this process ran collectives and is the one that
  // reports: a single process, or rank 0); nullopt for other ranks and the launcher.
  std::optional<model::CollReport> report;
  int exit_code = 0;  // base/exit_codes.h
};

// Exit code of a report: 2 when a finding fails, 1 when one warns, else 0.
int ExitCodeOf(const model::CollReport& report);

// The ranks' command line: `argv` without --nprocs, --gpus, --coordinator,
// --rendezvous, --world, --token-file and --tls-* (the launcher hands its ranks
// a loopback rendezvous and a fresh token instead).
std::vector<std::string> RankArgv(const std::vector<std::string>& argv);

// Runs the job. Errors are InvalidArgument for what the user must fix in the
// command line or the launcher's environment, others for what went wrong.
Result<JobOutcome> RunJob(const JobOptions& options);

}  // namespace fabcheck::coll
