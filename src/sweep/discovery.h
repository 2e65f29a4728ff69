// Who takes part in a sweep.
//
//  * --agents host:port,... or --agents-file F (one per line, # comments):
//    agents already running (the DaemonSet), one coordinator.
//  * SPMD: every rank runs `fabcheck sweep`; rank 0 coordinates. Rank and size
//    come from the launcher's environment (net/rank.h: mpirun, PMI, PMIx,
//    srun, Kubernetes Indexed Job with --world N), and the ranks meet at
//    --coordinator HOST:PORT (rank 0 serves its AgentRegistry there; in
//    Kubernetes a headless Service name). Every rank starts an agent; the
//    others register it, wait for rank 0 to finish, and exit.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "control/api.h"
#include "net/rank.h"

namespace fabcheck::sweep {

// "a:1,b:2" -> endpoints (default port when left out); duplicates are an error.
Result<std::vector<control::HostPort>> ParseAgentList(std::string_view list, int default_port);
// One endpoint per line; blank lines and # comments ignored. Errors name file:line.
Result<std::vector<control::HostPort>> ReadAgentsFile(const std::string& path, int default_port);

// The launcher's rank for a sweep: nullopt without launcher variables;
// InvalidArgument when they are garbage, or name a world of fewer than two.
Result<std::optional<net::LaunchRank>> DetectSweepRank(const net::EnvLookup& env, int world);

// Rank 0's side of the SPMD rendezvous: an HTTP endpoint where the ranks
// register the port of their agent, and later learn that the sweep is over.
//   POST /v1/rendezvous/join  {"rank": r, "size": n, "agent_port": p}   (auth as the agent API)
//   GET  /v1/rendezvous/state -> {"state": "waiting"|"running"|"done", "joined": k, "size": n}
class AgentRegistry {
 public:
  static Result<std::unique_ptr<AgentRegistry>> Start(const std::string& bind, int port, int size,
                                                      std::optional<std::string> token);
  ~AgentRegistry();
  int port() const { return port_; }
  // Records rank 0 itself (it does not call join).
  void AddSelf(int rank, control::HostPort agent);
  // Waits for every rank; DeadlineExceeded naming the missing ranks, Cancelled on stop.
  Result<std::vector<control::HostPort>> WaitForAll(std::chrono::milliseconds timeout,
                                                    const std::atomic<bool>* stop);
  void SetState(std::string state);

 private:
  AgentRegistry() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
};

// Other ranks: register (retrying while rank 0 comes up, within `timeout`).
Status JoinRendezvous(const control::HostPort& coordinator, const net::LaunchRank& me, int agent_port,
                      const std::optional<std::string>& token, std::chrono::milliseconds timeout,
                      const std::atomic<bool>* stop);
// Other ranks: wait until rank 0 says done (or disappears after running), within `timeout`.
Status WaitForFinish(const control::HostPort& coordinator, const std::optional<std::string>& token,
                     std::chrono::milliseconds timeout, const std::atomic<bool>* stop);

}  // namespace fabcheck::sweep
