// What an agent does for the ladder's L4 rung: run this node's ranks of one
// `fabcheck coll` job across the members, and hand back what they printed and
// what NCCL logged.
//
//   POST /v1/coll  {"first_rank": 8, "world": 16, "nprocs": 8, "coordinator": "host:port",
//                   "token": "...", "ops": "all_reduce,all_gather,alltoall", "sizes": "8:1G",
//                   "iters": 20, "warmup": 5, "timeout_s": 1800,
//                   "gdr_level": "LOC", "ib_hca": "=mlx5_0"}   (both optional: baseline groups)
//              ->  {"exit_codes": [...], "report": fabcheck.coll/v1 (rank 0's node only),
//                   "nccl_logs": {"nccl.host.pid.log": "..."}, "errors": ["rank 9: exit 3: ..."],
//                   "stopped": [ranks stopped because a rank beside them failed], "timed_out": b, "elapsed_s": s}
//
// The ranks are this executable started as `fabcheck coll` children (one per
// GPU: local rank i drives GPU i), so a crash in CUDA or NCCL ends a child,
// never the agent. The request is checked field by field and the command line
// is built here from the checked values: a client can choose what to
// measure, never what to run. The token travels to the ranks in their
// environment, never on a command line.
#pragma once

#include <nlohmann/json.hpp>

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "net/tls.h"

namespace fabcheck::agent {

struct CollRankRequest {
  int first_rank = 0;
  int world = 1;
  int nprocs = 1;
  std::string coordinator;  // host:port where rank 0 serves the rendezvous
  std::string token;        // the ranks' shared rendezvous token
  std::string ops = "all_reduce,all_gather,alltoall";
  std::string sizes = "8:1G";
  int iters = 20;
  int warmup = 5;
  double timeout_s = 1800;
  // What a baseline group changes in NCCL (ladder/baselines.h); "" leaves
  // NCCL's own choice. Checked against NCCL's spellings, never passed raw.
  std::string gdr_level;  // NCCL_NET_GDR_LEVEL: LOC (GPUDirect RDMA off), PIX, PXB, PHB or SYS
  std::string ib_hca;     // NCCL_IB_HCA: "=mlx5_0", "mlx5_0:1,mlx5_1", "^mlx5_3"
};

// What of the agent its ranks inherit: the board binds the agent's address
// (never wider than the agent itself listens) and speaks the agent's TLS, so
// the job's token and results never cross the network in clear text from a
// TLS agent.
struct CollAgentSide {
  std::string bind;                  // the agent's --listen host ("" or 0.0.0.0: every address)
  std::optional<net::TlsFiles> tls;  // the agent's --tls-cert/--tls-key/--tls-ca
};

// The request's fields, checked (InvalidArgument naming the field and the
// fix: wrong type, out of range, an op or size list `coll` refuses).
Result<CollRankRequest> ParseCollRankRequest(const nlohmann::json& request);
nlohmann::json ToJson(const CollRankRequest& request);

// The ranks' command line (argv[0] = "fabcheck"), from checked values only.
std::vector<std::string> CollRankArgv(const CollRankRequest& request, const CollAgentSide& side = {});
// The ranks' environment beyond the launcher's: the token, the board's bind
// address, NCCL's logging into `log_dir`, and a baseline group's
// NCCL_NET_GDR_LEVEL / NCCL_IB_HCA.
std::vector<std::pair<std::string, std::string>> CollRankEnv(const CollRankRequest& request, const CollAgentSide& side,
                                                             const std::string& log_dir);

// At most this much of each NCCL log and each rank's stderr comes back.
inline constexpr uint64_t kMaxCollLogBytes = 8ull << 20;

// Runs the ranks and waits for them (up to timeout_s, then they are killed).
// One job at a time per agent: a second request while one runs is
// Unavailable ("busy"). Errors are for what stopped the ranks from starting;
// ranks that ran and failed are in "exit_codes" and "errors".
class CollService {
 public:
  // `executable`: the fabcheck binary the ranks run ("" = this process's).
  explicit CollService(std::string executable = "", CollAgentSide side = {})
      : executable_(std::move(executable)), side_(std::move(side)) {}
  Result<nlohmann::json> Run(const nlohmann::json& request);

 private:
  std::string executable_;
  CollAgentSide side_;
  std::atomic<bool> busy_{false};
};

}  // namespace fabcheck::agent
