// Who this process is in a job: the one reader of the launchers' rank
// environment, for `coll` and `sweep` (no MPI library needed). Variables are
// tried in this order, the first rank variable set wins:
//   fabcheck's --nprocs   FABCHECK_RANK / FABCHECK_WORLD_SIZE / FABCHECK_LOCAL_RANK
//   torchrun              RANK / WORLD_SIZE / LOCAL_RANK
//   mpirun (Open MPI)     OMPI_COMM_WORLD_RANK / OMPI_COMM_WORLD_SIZE
//   MPICH/Hydra, PMI      PMI_RANK / PMI_SIZE
//   PMIx                  PMIX_RANK (size from SLURM_NTASKS, OMPI_COMM_WORLD_SIZE or --world)
//   srun (Slurm)          SLURM_PROCID / SLURM_NTASKS
//   Kubernetes Indexed Job  JOB_COMPLETION_INDEX (size from --world)
// fabcheck's own and torchrun's come first: children of
// `srun ... coll --nprocs N` inherit SLURM_PROCID. The two count only when
// both their rank and size variables are set (RANK alone is too common a name).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "base/status.h"

namespace fabcheck::net {

struct LaunchRank {
  int rank = 0;
  int size = 1;
  int local_rank = -1;  // -1: the launcher did not say (the rendezvous derives it from host names)
  std::string source;   // which variables said so, e.g. "OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE"
};

using EnvLookup = std::function<std::optional<std::string>(const char*)>;
// The process environment (an empty value counts as unset).
EnvLookup ProcessEnv();

// nullopt when no launcher variables are set. `world` is the caller's --world
// (0 = not given): it supplies the size where the launcher exports none, and
// must agree with the launcher's size otherwise. InvalidArgument naming the
// variable when a value is garbage, or the rank is not below the size.
Result<std::optional<LaunchRank>> DetectLaunchRank(const EnvLookup& env, int world);

}  // namespace fabcheck::net
