// Judging pairs (rungs L2.path and L3): what a pair should reach, whether it
// did, and which members the failures point at.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "control/api.h"
#include "fabcheck/model/inventory.h"
#include "fabcheck/model/ladder.h"

namespace fabcheck::ladder {

inline constexpr double kDefaultVerbsPassFraction = 0.9;
// TCP has no line-rate expectation worth the name (kernel, copies, one
// stream): a TCP pair is judged against the best pair of its rung. Not the
// median: one slow member of three is in two thirds of the directions. A
// quarter leaves room for scheduler noise on shared hosts; a shaped or
// broken path is 10x to 100x below.
inline constexpr double kTcpBestFraction = 0.25;

// One side of a pair on one rail: what limits it.
struct RailCapacity {
  std::string device;                 // "mlx5_0" ("" when the rail has no RDMA device)
  std::optional<double> port_gbps;    // the port's rate
  std::optional<double> pcie_gbps;    // the NIC's PCIe link after encoding
  std::string pcie_text;              // "PCIe Gen4 x8"
};
// Rail `rail` of a member: the RDMA device behind its data interface, or the
// rail-th RDMA device when the rails name no interface.
RailCapacity CapacityOf(const model::Inventory& inv, const std::vector<control::RailInfo>& rails, int rail);

// The verbs expectation of a pair: the slowest of both ports and both PCIe
// links, times the pass fraction. nullopt when neither side knows a figure.
struct Expectation {
  std::optional<double> gbps;
  std::string basis;  // "min(port 400 Gb/s, PCIe Gen5 x16 504 Gb/s) x 90%"
};
Expectation VerbsExpectation(const RailCapacity& a, const RailCapacity& b, double pass_fraction);

// L3: fills pair.verdict/reason from the measured figures. `transport_asked`
// is --transport ("auto", "verbs", "tcp"); `tcp_best` the best TCP
// bandwidth of the rung (for the TCP pass line). A TCP result is never an
// RDMA pass: with --transport tcp a good figure is "warn: RDMA not used".
void JudgePerfPair(model::PairTest& pair, const std::string& transport_asked, std::optional<double> tcp_best);

// L2.path: reachability and path MTU against what the sender believes.
void JudgePathPair(model::PairTest& pair);

// Which members the failing pairs point at. A member is blamed when pairs
// with two or more distinct peers failed and they are more than half of its
// peers (a slow node fails with everyone); a failing pair that no blamed end
// explains blames both ends (a bad link: neither can be trusted above it),
// or only its suspect when the pair's counters name one (a port that counted
// link errors while the pair failed).
// So the neighbour of a slow node, or of a member that died, is not blamed
// for the one pair it shares with it. Returns member IDs, sorted.
std::vector<std::string> BlameMembers(const std::vector<model::PairTest>& pairs);

// The rung verdict from its pairs: fail if any failed, warn if any warned,
// pass if all passed, not_run if none ran.
model::RungVerdict PairsVerdict(const std::vector<model::PairTest>& pairs);

double Median(std::vector<double> values);

}  // namespace fabcheck::ladder
