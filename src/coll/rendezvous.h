// How the ranks of one `fabcheck coll` run find each other. The rank and
// world size come from the launcher's environment (net/rank.h). Rank 0's NCCL unique id
// reaches every rank through a RankExchange, and every rank's outcome goes back
// to rank 0 through the same one, so rank 0's report lists all ranks.
//
//   file:/shared/path        rank 0 writes the id atomically, the others poll
//                            (local ranks, or nodes sharing a file system)
//   tcp:HOST:PORT            rank 0 serves the rendezvous on PORT (every
//                            address), every rank joins HOST:PORT (tcp_rendezvous.h)
//   join:HOST:PORT           a rendezvous already serves there (the --nprocs
//                            launcher); rank 0 only joins it
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "dl/nccl.h"
#include "net/tls.h"

namespace fabcheck::coll {

// What a rank learns at the rendezvous.
struct Meeting {
  dl::ncclUniqueId id{};
  int local_rank = -1;             // -1: the rendezvous cannot tell (file)
  int local_size = 0;
  std::vector<std::string> hosts;  // host of every rank, by rank; empty when unknown
};

// What a rank hands back to rank 0 after its run.
struct RankOutcome {
  int rank = 0;
  std::string host;
  int cuda_device = -1;
  std::string pci_bus_id;
  std::string name;
  std::string error;  // empty: the rank ran; else why not (or "never reported ...")
};

class RankExchange {
 public:
  virtual ~RankExchange() = default;
  // Rank 0 publishes `id`; every rank (rank 0 too) waits, up to the timeout,
  // until all have arrived, and gets rank 0's id.
  virtual Result<Meeting> Exchange(int rank, const std::string& host, const dl::ncclUniqueId& id) = 0;
  // Ranks other than 0: hand the outcome to rank 0. Also called when a rank
  // fails before Exchange, so the others stop waiting for it.
  virtual Status Report(const RankOutcome& outcome) = 0;
  // Rank 0: every rank's outcome by rank (`own` included), waiting up to the
  // timeout; a rank that never reported has `error` saying so.
  virtual Result<std::vector<RankOutcome>> Gather(const RankOutcome& own) = 0;
  virtual std::string Describe() const = 0;
};

struct RankExchangeConfig {
  int rank = 0;
  int world_size = 1;
  double timeout_seconds = 300;      // every wait
  std::optional<std::string> token;  // tcp: the shared token (Bearer), as sweep and agent
  // tcp: HTTPS. Rank 0 serves with cert/key (and with ca requires the ranks'
  // certificates of that CA); every rank verifies rank 0's certificate
  // against ca and the rendezvous host name (docs/tls.md).
  std::optional<net::TlsFiles> tls;
  // tcp, rank 0: the address its board listens on ("" = every address). An
  // agent's ranks get the agent's own --listen address, so the board is
  // never reachable where the agent is not.
  std::string bind;
};

// Parses the --rendezvous spec (see above); InvalidArgument for other
// schemes. tcp: on rank 0 starts serving before returning.
Result<std::unique_ptr<RankExchange>> MakeRankExchange(const std::string& spec, const RankExchangeConfig& config);

}  // namespace fabcheck::coll
