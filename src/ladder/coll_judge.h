// Judging rung L4: how the ranks of one collective job are laid out over the
// members, what busbw the members' NICs allow, whether each collective
// reached it, and what NCCL really used on each member (its own log).
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fabcheck/model/coll.h"
#include "fabcheck/model/inventory.h"
#include "fabcheck/model/ladder.h"

namespace fabcheck::ladder {

// NCCL reaches 80-90% of the NICs' line rate in busbw on a healthy fabric
// (protocol headers, the ring's pipeline fill): below 80% is a finding.
inline constexpr double kCollPassFraction = 0.8;
// Smaller messages measure latency, not bandwidth (coll's own threshold).
inline constexpr uint64_t kCollBandwidthBytes = 256ull << 20;

// One member's ranks: first_rank .. first_rank + nprocs - 1 (one per GPU).
struct CollRankBlock {
  std::string member;
  int first_rank = 0;
  int nprocs = 0;
};
// Members in order, each with its GPU count (members with none are left
// out): consecutive rank blocks, so rank 0 is on the first member.
std::vector<CollRankBlock> PlanCollRanks(const std::vector<std::pair<std::string, int>>& gpus_per_member);
int WorldOf(const std::vector<CollRankBlock>& plan);

// Between nodes busbw is bounded by a node's RDMA ports (ACTIVE ones, summed):
// the smallest such sum over the members, in GB/s, times `fraction`. nullopt
// when a member's port rates are unknown.
struct CollExpectationLine {
  std::optional<double> busbw_gbps;  // GB/s, as nccl-tests prints busbw
  std::string basis;
};
CollExpectationLine NicExpectation(const std::vector<const model::Inventory*>& members, double fraction);

// The collectives of rank 0's report (fabcheck.coll/v1 JSON): busbw at the
// largest size (out of place) and over sizes, #wrong, and the verdict against
// `expected` (multi-node) or the report's own NCCL topology estimate (one
// node). A malformed report gives one failing check saying so.
std::vector<model::CollectiveCheck> JudgeCollectives(const nlohmann::json& report, const CollExpectationLine& expected,
                                                     bool multi_node);

// What NCCL used on one member, from its log's summary: transports
// ("NET/IB/GDRDMA", "NET/Socket", "P2P", "SHM"), the HCAs it opened, the
// bootstrap interface, GPUDirect. Between nodes NET/Socket fails (the silent
// TCP fallback); NET/IB without GPUDirect RDMA warns; the log's failing
// diagnose findings fail.
model::NcclTransportCheck CheckNcclTransport(const std::string& member, const model::NcclLogSummary& summary,
                                             const std::vector<model::Finding>& findings, bool multi_node);

}  // namespace fabcheck::ladder
