// How the coordinator reaches its members, so that the same scheduler and
// analysis run against real agents (AgentTransport, over the control API) and
// against the fabric simulator (sim/). A transport answers who is there and
// runs one round of directional tests at once; it decides nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fabcheck/model/sweep.h"
#include "fabric/fabric.h"

namespace fabcheck::sweep {

// Member `a` tests member `b` on `rail` with `flows` flows (QPs or
// connections with distinct source ports; `flow_base` varies them from test
// to test so ECMP sees new 5-tuples).
struct TestSpec {
  int a = 0, b = 0, rail = 0;
  int flows = 1;
  uint32_t flow_base = 0;
};

class Transport {
 public:
  virtual ~Transport() = default;
  // Every member, reachable or not (index = position). Called once.
  virtual std::vector<model::SweepMember> Discover() = 0;
  // The rails every reachable member has (after Discover).
  virtual int rails() const = 0;
  // Runs every spec of one round (disjoint pairs; both directions of a pair
  // may be listed) and returns one result per spec, in order: nullopt when
  // the spec did not run (a member of the pair is gone, or the sweep stops).
  // A test that ran and failed has its error set.
  virtual std::vector<std::optional<model::SweepPairResult>> RunRound(const std::vector<TestSpec>& specs,
                                                                      int round) = 0;
  // Whether the member still answers (an agent can die mid-sweep).
  virtual bool Reachable(int member) const = 0;
  // Seconds the sweep has taken so far: wall time for agents, simulated time
  // for the simulator.
  virtual double ElapsedSeconds() const = 0;
  // What the tests were measured with ("tcp", "verbs", "simulated").
  virtual std::string TransportName() const = 0;
  // The fabric matched to the members (after Discover, before the first
  // round; indexed like them, alive for the sweep): a transport that can
  // trace paths maps each flow to the spine it crossed with it.
  virtual void UseFabric(const fabric::FabricIndex& /*fabric*/) {}
};

}  // namespace fabcheck::sweep
