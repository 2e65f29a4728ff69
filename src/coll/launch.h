// One process per GPU on this node without MPI: fabcheck starts itself N
// times with FABCHECK_RANK / FABCHECK_WORLD_SIZE / FABCHECK_LOCAL_RANK and a
// file rendezvous in a fresh directory, waits for all of them, and stops the
// rest when one fails (a rank left alone would wait in NCCL init forever).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/status.h"

namespace fabcheck::coll {

struct LaunchSpec {
  int nprocs = 0;
  // This node's ranks are first_rank .. first_rank + nprocs - 1 of `world`
  // (0 = nprocs: the node is the whole job). Local rank i runs rank
  // first_rank + i on GPU i.
  int first_rank = 0;
  int world = 0;
  std::vector<std::string> argv;            // the command line to run (argv[0] replaced by the executable)
  std::string executable;                   // "" = this executable (tests give the fabcheck binary)
  std::map<std::string, std::string> env;   // added to each child's environment
  double timeout_seconds = 1800;            // the whole run
  // After SIGTERM (a rank beside them failed), how long the others have to
  // end before SIGKILL: a rank that ignores SIGTERM must not keep the job,
  // and the agent's one L4 slot, alive. Never later than the deadline.
  double term_grace_seconds = 10;
  // "" = inherit. Otherwise each rank's stdout / stderr goes to this path
  // with its "{rank}" replaced by the global rank (the agent collects them).
  std::string stdout_pattern;
  std::string stderr_pattern;
};

// The ranks' exit codes, by local rank (a rank ended by a signal, or stopped
// because another failed or the time ran out, counts as 3).
struct LaunchOutcome {
  std::vector<int> exit_codes;
  std::vector<bool> signalled;  // ended by a signal (stopped because another failed, or crashed)
  int worst = 0;
  bool timed_out = false;
};

// Starts the ranks and waits for them (only for them: the caller may have
// other children). When one fails the others are stopped, since a rank left
// alone would wait in NCCL init forever.
Result<LaunchOutcome> RunLocalRanks(const LaunchSpec& spec);

// RunLocalRanks' worst exit code.
Result<int> LaunchLocalRanks(const LaunchSpec& spec);

}  // namespace fabcheck::coll
