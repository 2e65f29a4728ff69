// The TCP rendezvous of `fabcheck coll`: no MPI and no shared file system.
// One process serves a small HTTP/JSON board (rank 0 with --coordinator, or
// the --nprocs launcher); every rank joins it with its rank, the world size
// and its host name, rank 0 adds the NCCL unique id, and once all ranks are
// there each one reads the id and the host list (its local rank is its
// position among the ranks of its host, as nccl-tests derives it). After the
// run the ranks post their outcome and rank 0 collects them.
//
//   POST /v1/coll/join     {"rank", "size", "host", "nccl_id" (rank 0: hex)}
//   GET  /v1/coll/meeting  {"state": "waiting"|"ready"|"failed", "joined", "size",
//                           "missing": [ranks], "problems": [...], "failure",
//                           "nccl_id", "hosts"}
//   POST /v1/coll/result   {"rank", "host", "cuda_device", "pci_bus_id", "name", "error"}
//   GET  /v1/coll/results  {"reported", "size", "results": [...], "missing": [ranks]}
//
// With a token every route needs "Authorization: Bearer <token>" (401
// otherwise), as the sweep rendezvous and the agent API. Every wait has a
// deadline; errors name the missing ranks, and a rank or address that sent
// something malformed.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "coll/rendezvous.h"
#include "dl/nccl.h"

namespace fabcheck::coll {

inline constexpr int kDefaultRendezvousPort = 18523;
// The largest answer a rank reads from the board (every rank's host name at
// 4,096 ranks is about 1 MiB); anything longer ends the call with an error.
inline constexpr size_t kMaxRendezvousAnswer = 4 << 20;

// The NCCL unique id as hex (256 characters) and back; the parse fails on
// anything but exactly that many hex digits.
std::string UniqueIdToHex(const dl::ncclUniqueId& id);
Result<dl::ncclUniqueId> UniqueIdFromHex(std::string_view hex);

// `rank`'s position among the ranks on its own host, and how many ranks that
// host has. hosts[rank] must exist.
int LocalRankOf(const std::vector<std::string>& hosts, int rank, int* local_size);

// The board's state without any networking, so the validation is testable.
// Not thread-safe: the server holds a lock around it.
class RendezvousBoard {
 public:
  explicit RendezvousBoard(int size) : size_(size) {}
  int size() const { return size_; }
  // A join request body from `peer` (the remote address). Errors are the
  // HTTP answer's text: InvalidArgument (400) for a malformed or impossible
  // join, FailedPrecondition (409) for a rank claimed by another host.
  Status Join(std::string_view body, const std::string& peer);
  Status AddResult(std::string_view body, const std::string& peer);
  nlohmann::json Meeting() const;
  nlohmann::json Results() const;
  bool Ready() const;
  std::vector<int> MissingJoins() const;
  std::vector<int> MissingResults() const;
  // Malformed requests seen so far (named by rank when it could be read,
  // else by address), for error messages.
  const std::vector<std::string>& problems() const { return problems_; }
  void NoteProblem(std::string problem);

 private:
  struct Member {
    std::string host;
    std::string peer;
  };
  int size_;
  std::optional<std::string> id_hex_;
  std::vector<std::optional<Member>> members_ = std::vector<std::optional<Member>>(static_cast<size_t>(size_));
  std::vector<std::optional<nlohmann::json>> results_ = std::vector<std::optional<nlohmann::json>>(static_cast<size_t>(size_));
  std::string failure_;  // the first rank that reported an error before the meeting was ready
  std::vector<std::string> problems_;
};

// Serves a RendezvousBoard on a thread.
class RendezvousServer {
 public:
  // port 0: any free port. Errors name the address and the fix.
  static Result<std::unique_ptr<RendezvousServer>> Start(const std::string& bind, int port, int size,
                                                         std::optional<std::string> token,
                                                         std::shared_ptr<const net::TlsContext> tls = nullptr);
  ~RendezvousServer();
  RendezvousServer(const RendezvousServer&) = delete;
  RendezvousServer& operator=(const RendezvousServer&) = delete;
  int port() const { return port_; }
  // A copy of the board's problems (for the launcher's messages).
  std::vector<std::string> Problems() const;
  std::vector<int> MissingResults() const;

 private:
  RendezvousServer() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
};

// One rank's side: joins the board at host:port. When `serve_port` is set
// (rank 0 of tcp:), also serves the board there and talks to it over loopback.
class TcpRankExchange : public RankExchange {
 public:
  static Result<std::unique_ptr<TcpRankExchange>> Create(const std::string& host, int port,
                                                       const RankExchangeConfig& config, bool serve);
  ~TcpRankExchange() override;
  Result<coll::Meeting> Exchange(int rank, const std::string& host, const dl::ncclUniqueId& id) override;
  Status Report(const RankOutcome& outcome) override;
  Result<std::vector<RankOutcome>> Gather(const RankOutcome& own) override;
  std::string Describe() const override;

 private:
  TcpRankExchange() = default;
  Result<nlohmann::json> Call(const std::string& method, const std::string& path, const nlohmann::json* body,
                              std::chrono::steady_clock::time_point deadline, bool* retryable);

  std::string host_;
  int port_ = 0;
  std::string connect_host_;  // rank 0 serving: 127.0.0.1
  RankExchangeConfig config_;
  std::unique_ptr<RendezvousServer> server_;
};

nlohmann::json OutcomeToJson(const RankOutcome& outcome);
// InvalidArgument naming the field for anything malformed.
Result<RankOutcome> OutcomeFromJson(const nlohmann::json& j);

}  // namespace fabcheck::coll
