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
  std::vector<std::string> argv;            // the command line to run (argv[0] replaced by this executable)
  std::map<std::string, std::string> env;   // added to each child's environment
  double timeout_seconds = 1800;            // the whole run
};

// Returns the worst exit code of the ranks (a killed rank counts as 3).
Result<int> LaunchLocalRanks(const LaunchSpec& spec);

}  // namespace fabcheck::coll
