// Who takes part in a sweep.
//
//  * --agents host:port,... or --agents-file F (one per line, # comments):
//    agents already running (the DaemonSet), one coordinator.
//  * SPMD: every rank runs `fabcheck sweep`; rank 0 coordinates. Rank and size
//    come from the launcher's environment (no MPI library needed):
//      mpirun (Open MPI)   OMPI_COMM_WORLD_RANK / OMPI_COMM_WORLD_SIZE
//      MPICH/Hydra, PMI    PMI_RANK / PMI_SIZE
//      PMIx                PMIX_RANK (size from --world, SLURM_NTASKS or OMPI_COMM_WORLD_SIZE)
//      srun                SLURM_PROCID / SLURM_NTASKS
//      Kubernetes Indexed Job  JOB_COMPLETION_INDEX, size from --world N
//    and the ranks meet at --coordinator HOST:PORT (rank 0 listens there; in
//    Kubernetes a headless Service name). Every rank starts an agent; the
//    others join, wait for rank 0 to finish, and exit.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "control/api.h"

namespace httplib {
class Server;
}

namespace fabcheck::sweep {

// "a:1,b:2" -> endpoints (default port when left out); duplicates are an error.
Result<std::vector<control::HostPort>> ParseAgentList(std::string_view list, int default_port);
// One endpoint per line; blank lines and # comments ignored. Errors name file:line.
Result<std::vector<control::HostPort>> ReadAgentsFile(const std::string& path, int default_port);

struct SpmdRank {
  int rank = 0;
  int size = 0;
  std::string source;  // which variables said so, e.g. "OMPI_COMM_WORLD_RANK/SIZE"
};
using EnvLookup = std::function<std::optional<std::string>(const char*)>;
EnvLookup ProcessEnv();
// nullopt when no launcher variables are set. `world` is --world (0 = unset).
// InvalidArgument when the variables are garbage or disagree with --world.
// `min_size`: a sweep needs two ranks; `coll` accepts a launch of one.
Result<std::optional<SpmdRank>> DetectSpmd(const EnvLookup& env, int world, int min_size = 2);

// Rank 0's side of the rendezvous: an HTTP endpoint where ranks register the
// port of their agent, and later learn that the sweep is over.
//   POST /v1/rendezvous/join  {"rank": r, "size": n, "agent_port": p}   (auth as the agent API)
//   GET  /v1/rendezvous/state -> {"state": "waiting"|"running"|"done", "joined": k, "size": n}
class Rendezvous {
 public:
  static Result<std::unique_ptr<Rendezvous>> Start(const std::string& bind, int port, int size,
                                                   std::optional<std::string> token);
  ~Rendezvous();
  int port() const { return port_; }
  // Records rank 0 itself (it does not call join).
  void AddSelf(int rank, control::HostPort agent);
  // Waits for every rank; DeadlineExceeded naming the missing ranks, Cancelled on stop.
  Result<std::vector<control::HostPort>> WaitForAll(std::chrono::milliseconds timeout,
                                                    const std::atomic<bool>* stop);
  void SetState(std::string state);

 private:
  Rendezvous() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
};

// Other ranks: register (retrying while rank 0 comes up, within `timeout`).
Status JoinRendezvous(const control::HostPort& coordinator, const SpmdRank& me, int agent_port,
                      const std::optional<std::string>& token, std::chrono::milliseconds timeout,
                      const std::atomic<bool>* stop);
// Other ranks: wait until rank 0 says done (or disappears after running), within `timeout`.
Status WaitForFinish(const control::HostPort& coordinator, const std::optional<std::string>& token,
                     std::chrono::milliseconds timeout, const std::atomic<bool>* stop);

}  // namespace fabcheck::sweep
