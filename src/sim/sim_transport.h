// The simulator behind sweep's Transport. A round's flows on one rail share
// the fabric's links max-min fairly (progressive filling, exact): a NIC's
// flows share its port, a leaf's flows hashed onto one spine share that
// uplink, so ECMP collisions and oversubscription are contention, not
// noise. Loss turns into resent packets (goodput 1 / (1 + 500 x loss), a
// go-back-N stand-in). Every result carries measurement noise: CV
// `noise_cv` and, with probability `tail_probability`, a heavy-tail dip to
// 50-90% (a busy host); a noise decoy has its own CV and dips one test in five.
#pragma once

#include <random>

#include "sim/clos.h"
#include "sim/faults.h"
#include "sweep/transport.h"

namespace fabcheck::sim {

struct SimTransportOptions {
  double noise_cv = 0.02;
  double tail_probability = 0.01;
  uint64_t seed = 1;
  double round_seconds = 10;  // simulated wall time of one round
};

class SimTransport : public sweep::Transport {
 public:
  SimTransport(const Clos& clos, FabricState state, SimTransportOptions options);

  std::vector<model::SweepMember> Discover() override;
  int rails() const override { return clos_.options().rails; }
  std::vector<std::optional<model::SweepPairResult>> RunRound(const std::vector<sweep::TestSpec>& specs,
                                                              int round) override;
  bool Reachable(int) const override { return true; }
  double ElapsedSeconds() const override { return rounds_ * options_.round_seconds; }
  std::string TransportName() const override { return "simulated"; }

  // Max-min fair rates of flows over links (exposed for tests): flow f uses
  // the links links[f] (ids into capacity).
  static std::vector<double> MaxMinRates(const std::vector<double>& capacity, const std::vector<std::vector<int>>& links);

 private:
  void SimulateRail(int rail, const std::vector<sweep::TestSpec>& specs, const std::vector<size_t>& which, int round,
                    std::vector<std::optional<model::SweepPairResult>>* out);

  const Clos& clos_;
  FabricState state_;
  SimTransportOptions options_;
  int rounds_ = 0;
};

}  // namespace fabcheck::sim
