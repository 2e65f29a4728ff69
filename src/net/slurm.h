// Where rank 0 of an srun step runs, from Slurm's node list, so sweep and
// ladder need no --coordinator under srun (inside sbatch or not).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "net/rank.h"

namespace fabcheck::net {

// The first host of a Slurm node list ("gpu[003-010,012],login1" -> "gpu003",
// "rack[1-2]-n[07-08]" -> "rack1-n07"): where task 0 of an srun step with one
// task per node runs. InvalidArgument naming the list when it cannot be read.
Result<std::string> FirstSlurmHost(std::string_view nodelist);
// Rank 0's host as Slurm knows it (SLURM_STEP_NODELIST, else
// SLURM_JOB_NODELIST), so `--coordinator` can be left out under srun, inside
// sbatch or not; nullopt outside Slurm.
Result<std::optional<std::string>> SlurmFirstHost(const EnvLookup& env);

}  // namespace fabcheck::net
