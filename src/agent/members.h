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
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "control/api.h"
#include "net/rank.h"
#include "net/tls.h"
#include "agent/local_agent.h"

namespace fabcheck::agent {

// The port of rank 0's rendezvous when --coordinator names none.
inline constexpr int kDefaultRendezvousPort = 18522;

// "a:1,b:2" -> endpoints (default port when left out); duplicates are an error.
Result<std::vector<control::HostPort>> ParseAgentList(std::string_view list, int default_port);
// One endpoint per line; blank lines and # comments ignored. Errors name file:line.
Result<std::vector<control::HostPort>> ReadAgentsFile(const std::string& path, int default_port);


// Rank 0's side of the SPMD rendezvous: an HTTP endpoint where the ranks
// register the port of their agent, and later learn that the sweep is over.
//   POST /v1/rendezvous/join  {"rank": r, "size": n, "agent_port": p}   (auth as the agent API)
//   GET  /v1/rendezvous/state -> {"state": "waiting"|"running"|"done", "joined": k, "size": n}
//   With TLS (`tls`, TlsContext::ForServer) it serves HTTPS only; a join may
//   carry "tls_name": the name the rank's certificate answers to.
class AgentRegistry {
 public:
  static Result<std::unique_ptr<AgentRegistry>> Start(const std::string& bind, int port, int size,
                                                      std::optional<std::string> token,
                                                      std::shared_ptr<const net::TlsContext> tls = nullptr);
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

// How a rank reaches rank 0's registry.
struct RendezvousClient {
  control::HostPort coordinator;
  std::optional<std::string> token;
  std::optional<net::TlsFiles> tls = std::nullopt;  // HTTPS, verifying rank 0's certificate names coordinator.host
};

// Other ranks: register (retrying while rank 0 comes up, within `timeout`);
// `tls_name` is the name this rank's agent certificate answers to ("" without TLS).
Status JoinRendezvous(const RendezvousClient& rendezvous, const net::LaunchRank& me, int agent_port,
                      const std::string& tls_name, std::chrono::milliseconds timeout, const std::atomic<bool>* stop);
// Other ranks: wait until rank 0 says done (or disappears after running), within `timeout`.
Status WaitForFinish(const RendezvousClient& rendezvous, std::chrono::milliseconds timeout,
                     const std::atomic<bool>* stop);

// An SPMD launch as `sweep` and `ladder` run it: every rank starts its agent
// and meets the others at rank 0.
struct SpmdOptions {
  net::LaunchRank me;
  control::HostPort coordinator;  // where rank 0 serves the registry
  AgentConfig agent;              // this rank's agent; its TLS is set from `tls`
  std::optional<std::string> token;
  // Mutual TLS among the ranks (CheckSpmdTls): every agent and the registry
  // serve HTTPS with this certificate and require one of this CA; each rank
  // tells rank 0 the name its certificate answers to (net::CertificateName),
  // which rank 0 checks when it dials the rank's address.
  std::optional<net::TlsFiles> tls = std::nullopt;
  std::chrono::milliseconds rendezvous_timeout{std::chrono::minutes(10)};
  const std::atomic<bool>* stop = nullptr;
  bool insecure_no_token = false;  // serve without a token or mutual TLS beyond loopback (--insecure-no-token)
};
// Each rank's agent (and rank 0's rendezvous) answers on the network for the
// whole job: without a token it needs mutual TLS, an all-loopback job (this
// rank's agent and the coordinator on 127.x), or insecure_no_token
// (net::CheckTokenlessListen). Commands call it before the launch to fail as
// a usage error; MeetSpmd checks it again.
Status CheckSpmdListen(const SpmdOptions& options);
struct SpmdMembers {
  std::unique_ptr<LocalAgent> own_agent;
  std::unique_ptr<AgentRegistry> registry;  // rank 0: SetState("running"/"done") through it
  std::vector<control::HostPort> agents;    // rank 0: every rank's agent, in rank order; others: none
};
// Rank 0 returns once every rank joined. The other ranks register, wait until
// rank 0 is done, and return with no agents: their part is over.
Result<SpmdMembers> MeetSpmd(SpmdOptions options);
// TLS in an SPMD launch is mutual (the ranks are servers and clients of each
// other): all of --tls-cert, --tls-key and --tls-ca, and a certificate that names its holder.
Status CheckSpmdTls(const net::TlsFiles& files);

// Who takes part, the one way every coordinator (sweep, ladder, kv) finds
// its members: --agents, --agents-file, or an SPMD launch (net::DetectLaunchRank).
struct MemberOptions {
  std::string command;        // "sweep", "ladder": names the log line
  std::string agents;         // --agents host[:port],...
  std::string agents_file;    // --agents-file F
  std::string coordinator;    // --coordinator HOST[:PORT] (SPMD; port kDefaultRendezvousPort when left out)
  int world = 0;              // --world N (a Kubernetes Indexed Job tells only the index)
  int min_ranks = 1;          // the fewest ranks the command can work with
  std::optional<std::string> token;
  std::optional<net::TlsFiles> tls;  // SPMD: mutual TLS among the ranks (CheckSpmdTls)
  std::chrono::milliseconds rendezvous_timeout{std::chrono::minutes(10)};
  const std::atomic<bool>* stop = nullptr;
  bool insecure_no_token = false;  // SPMD: serve without a token or mutual TLS beyond loopback (CheckSpmdListen)
  // This rank's own agent in an SPMD launch; asked only there.
  std::function<Result<AgentConfig>()> own_agent;
};
struct Members {
  std::vector<control::HostPort> agents;    // in rank order for an SPMD launch
  std::unique_ptr<LocalAgent> own_agent;    // SPMD
  std::unique_ptr<AgentRegistry> registry;  // SPMD rank 0: SetState("done") when finished
  // SPMD ranks other than 0: their agent served until rank 0 finished; they exit 0.
  bool rank_done = false;
};
// InvalidArgument for what the command line must fix (exit 64: two sources,
// a malformed --agents list, launcher variables that make no sense, no
// --coordinator); another code for an --agents-file that cannot be used
// (exit 3) and when the ranks could not meet, prefixed "rank N: ".
Result<Members> FindMembers(const MemberOptions& options, const net::EnvLookup& env);

}  // namespace fabcheck::agent
