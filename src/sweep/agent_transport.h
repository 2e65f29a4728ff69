// The real transport: fabcheck agents over the control API. Each pair of a
// round runs in parallel (up to max_parallel_pairs), one direction after the
// other, every rail of a direction at once, so no NIC carries two tests.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "control/api.h"
#include "control/client.h"
#include "net/tls.h"
#include "sweep/transport.h"

namespace fabcheck::sweep {

struct AgentTransportOptions {
  control::PeerTestRequest test;   // sizes, durations, what to measure (peer fields filled per test)
  std::optional<std::string> token;
  std::optional<net::TlsFiles> tls;  // the agents' API over HTTPS
  std::chrono::milliseconds connect_timeout{3000};
  std::chrono::milliseconds info_timeout{5000};
  int max_parallel_pairs = 256;
  bool rails = false;              // use every rail the agents list (else rail 0 only)
  // Multi-flow tests on a rail whose spines list router addresses: each flow's
  // routers are traced with TTLs 1..path_hops on its own 5-tuple, and the hop
  // that is a spine's address says which spine it crossed (0 = never).
  int path_hops = 2;
  const std::atomic<bool>* stop = nullptr;
};

class AgentTransport : public Transport {
 public:
  AgentTransport(std::vector<control::HostPort> endpoints, AgentTransportOptions options);
  ~AgentTransport() override;

  std::vector<model::SweepMember> Discover() override;
  int rails() const override { return rails_; }
  std::vector<std::optional<model::SweepPairResult>> RunRound(const std::vector<TestSpec>& specs,
                                                              int round) override;
  bool Reachable(int member) const override;
  double ElapsedSeconds() const override;
  std::string TransportName() const override { return options_.test.transport; }
  void UseFabric(const fabric::FabricIndex& fabric) override { fabric_ = &fabric; }
  // Why a member is unreachable (empty when it answers).
  std::string Error(int member) const;
  std::chrono::milliseconds test_timeout() const { return timeout_; }

 private:
  struct Agent;
  // nullopt when the sender itself is gone: its pairs are its problem, not links.
  std::optional<model::SweepPairResult> Direction(const TestSpec& spec, int round);

  std::vector<std::unique_ptr<Agent>> agents_;
  AgentTransportOptions options_;
  control::ClientOptions client_options_;
  std::chrono::milliseconds timeout_;
  std::chrono::steady_clock::time_point start_;
  std::vector<std::string> names_;
  int rails_ = 1;
  const fabric::FabricIndex* fabric_ = nullptr;
};

// Gives every member its display name: the name, or name@host when another
// member has the same name.
void AssignDisplayNames(std::vector<model::SweepMember>* members);

}  // namespace fabcheck::sweep
