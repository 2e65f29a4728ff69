// How the ranks of one `fabcheck coll` run find each other: the rank and
// world size come from the environment (fabcheck's own launcher, Slurm, Open
// MPI, torchrun), and rank 0's NCCL unique id reaches every rank through a
// Rendezvous. A file on a shared path works for local processes (and across
// nodes on a shared file system); the sweep coordinator can hand the id out
// later through the same interface.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "dl/nccl.h"

namespace fabcheck::coll {

struct RankEnv {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  std::string source;  // "FABCHECK_RANK", "SLURM_PROCID", ... ("" when not launched as ranks)
};

// Reads FABCHECK_RANK/FABCHECK_WORLD_SIZE/FABCHECK_LOCAL_RANK, else Open MPI's
// OMPI_COMM_WORLD_*, Slurm's SLURM_PROCID/SLURM_NTASKS/SLURM_LOCALID, or
// torchrun's RANK/WORLD_SIZE/LOCAL_RANK. nullopt-like: source empty when none.
// InvalidArgument when a variable is set but not a valid number.
Result<RankEnv> RankFromEnvironment();

class Rendezvous {
 public:
  virtual ~Rendezvous() = default;
  // Rank 0 publishes `id`; every other rank waits (up to the timeout) and
  // returns the published one.
  virtual Result<dl::ncclUniqueId> Exchange(int rank, const dl::ncclUniqueId& id) = 0;
  virtual std::string Describe() const = 0;
};

// "file:/shared/path/id" (rank 0 writes it atomically; others poll it).
// Parses the --rendezvous argument; InvalidArgument for other schemes.
Result<std::unique_ptr<Rendezvous>> MakeRendezvous(const std::string& spec, double timeout_seconds);

}  // namespace fabcheck::coll
