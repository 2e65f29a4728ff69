// nccl.inspector.slow-rank: NCCL Inspector's per-rank bus bandwidth for the
// same collective (communicator, operation, size): a rank well below the
// others' median is the slow one (its GPU, its NIC or its node), joined to
// its member when the cluster's members are known.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "diagnose/rule.h"

namespace fabcheck::diagnose {
namespace {
void Run(const Evidence& ev, std::vector<model::Diagnosis>* out);
}  // namespace

extern const Rule kNcclInspectorSlowRank = {
    "nccl.inspector.slow-rank", "NCCL",
    "NCCL Inspector shows a rank whose bus bandwidth for a collective is well below the other ranks' (under 75% of "
    "their median)",
    "A collective runs at the pace of its slowest rank: one slow GPU, NIC or link slows the whole job.",
    "Check that rank's node: its NIC ports (rate, errors), the GPU-NIC PCIe path, GPU clocks and thermals.", &Run};

namespace {

// Below this share of the median the rank is slow: the spread between healthy
// ranks of one collective stays within a few percent; a degraded link or
// half-rate port shows as 50% or less.
constexpr double kSlowShare = 0.75;

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

void Run(const Evidence& ev, std::vector<model::Diagnosis>* out) {
  for (const auto& insp : ev.inspector) {
    // (comm, coll, bytes) -> rank -> busbw samples; rank -> where it ran.
    std::map<std::tuple<std::string, std::string, uint64_t>, std::map<int, std::vector<double>>> groups;
    std::map<int, std::pair<std::string, int>> where;
    for (const auto& r : insp.file.records) {
      groups[{r.comm_id, r.coll, r.bytes}][r.rank].push_back(r.busbw_gbs);
      where[r.rank] = {r.hostname, r.pid};
    }
    for (const auto& [key, ranks] : groups) {
      if (ranks.size() < 3) continue;  // two ranks cannot say which one is slow
      std::map<int, double> per_rank;
      std::vector<double> all;
      for (const auto& [rank, v] : ranks) {
        per_rank[rank] = Median(v);
        all.push_back(per_rank[rank]);
      }
      double median = Median(all);
      for (const auto& [rank, bw] : per_rank) {
        if (median <= 0 || bw >= kSlowShare * median) continue;
        const auto& [host, pid] = where[rank];
        std::string member = ev.MemberOf(host);
        std::string name = member.empty() ? host : member;
        auto d = Make(kNcclInspectorSlowRank, model::Severity::kWarn, model::Confidence::kHigh,
                      fmt::format("rank {} on {}", rank, name),
                      fmt::format("rank {} on {} (pid {}) reached {:.1f} GB/s bus bandwidth in {} of {} bytes, {:.0f}% "
                                  "of the other ranks' median {:.1f} GB/s",
                                  rank, name, pid, bw, std::get<1>(key), std::get<2>(key), 100 * bw / median,
                                  median));
        d.evidence.push_back(fmt::format("{}: communicator {} {} {} bytes: rank {} median {:.1f} GB/s over {} "
                                         "records; {} ranks' median {:.1f} GB/s",
                                         insp.source, std::get<0>(key), std::get<1>(key), std::get<2>(key), rank, bw,
                                         ranks.at(rank).size(), per_rank.size(), median));
        d.causes = {"that node's NIC port runs below its rate (link width or speed downgraded, errors, a flapping "
                    "cable)",
                    "the GPU-NIC path crosses the CPU (PCIe placement) or GPUDirect RDMA is off on that node",
                    "the GPU itself is throttled (clocks, thermals) or shared with another process"};
        d.fix = kNcclInspectorSlowRank.fix;
        d.next = fmt::format("fabcheck doctor on {}; fabcheck sweep with {} against a healthy node", name, name);
        out->push_back(std::move(d));
      }
    }
  }
}

}  // namespace
}  // namespace fabcheck::diagnose
