// nccl.ras.unreachable: processes an NCCL RAS report (ncclras) could not
// reach, with their node, pid and GPU, joined to the cluster's members when a
// bundle names them; and the ranks each incomplete communicator misses.
#include <fmt/format.h>

#include <set>

#include "diagnose/rule.h"

namespace fabcheck::diagnose {
namespace {
void Run(const Evidence& ev, std::vector<model::Diagnosis>* out);
}  // namespace

extern const Rule kNcclRasUnreachable = {
    "nccl.ras.unreachable", "NCCL",
    "An NCCL RAS report (ncclras) lists processes that are dead or sent no data, or ranks a communicator misses",
    "The rank that never arrives stops every collective of its communicators: the job hangs until a timeout. RAS "
    "names its node, process and GPU.",
    "Look at that node first: the process's own log and exit status, the GPU (Xid errors), the node's network ports.",
    &Run};

namespace {

void Run(const Evidence& ev, std::vector<model::Diagnosis>* out) {
  for (const auto& ras : ev.ras) {
    const auto& r = ras.report;
    std::set<std::string> seen;
    for (const auto& p : r.unreachable) {
      std::string key = fmt::format("{}|{}", p.node, p.pid);
      if (!seen.insert(key).second) continue;
      std::string member = ev.MemberOf(p.node);
      std::string where = member.empty() ? "node " + p.node : fmt::format("member {} (node {})", member, p.node);
      auto d = Make(kNcclRasUnreachable, model::Severity::kFail, model::Confidence::kHigh,
                    fmt::format("{} GPU {}", member.empty() ? p.node : member, p.gpus),
                    fmt::format("process {} on {} managing GPU {} is {}", p.pid, where, p.gpus,
                                p.state == "dead" ? "dead (unreachable via the RAS network)"
                                                  : "missing (sent no data to RAS)"));
      d.evidence.push_back(fmt::format("{}:{}: Process {} on node {} managing GPU {}", ras.source, p.line, p.pid,
                                       p.node, p.gpus));
      for (const auto& rank : r.missing_ranks) {
        if (rank.pid == p.pid && rank.node == p.node && d.evidence.size() < 6) {
          d.evidence.push_back(fmt::format("{}:{}: communicator {} misses rank {} (GPU {})", ras.source, rank.line,
                                           rank.comm, rank.rank, rank.gpu));
        }
      }
      if (!r.nccl_version.empty()) d.evidence.push_back("NCCL " + r.nccl_version);
      d.causes = {"the process exited or was killed (its own log and exit status say why: OOM, a Python error, "
                  "the scheduler)",
                  "the GPU hit an error (Xid in the node's kernel log) and the process hangs in a CUDA call",
                  "the node lost its network: its ports, cables or switch (RAS talks over the bootstrap network)"};
      d.fix = kNcclRasUnreachable.fix;
      d.next = fmt::format("fabcheck doctor --only L1 on {}; fabcheck gpu on it; the job's log of process {}",
                           member.empty() ? p.node : member, p.pid);
      out->push_back(std::move(d));
    }
    // Ranks missing without a process RAS could place.
    for (const auto& rank : r.missing_ranks) {
      if (!rank.node.empty()) continue;
      auto d = Make(kNcclRasUnreachable, model::Severity::kFail, model::Confidence::kMedium,
                    fmt::format("rank {}", rank.rank),
                    fmt::format("communicator {} misses rank {}; RAS found no process information for it", rank.comm,
                                rank.rank));
      d.evidence.push_back(fmt::format("{}:{}: Rank {} -- [process information not found]", ras.source, rank.line,
                                       rank.rank));
      d.causes = {"the process of that rank never started or exited before RAS met it"};
      d.fix = kNcclRasUnreachable.fix;
      d.next = "the launcher's record of that rank (scheduler logs)";
      out->push_back(std::move(d));
    }
    for (const auto& e : r.comm_errors) {
      auto d = Make(kNcclRasUnreachable, model::Severity::kFail, model::Confidence::kMedium, "communicator",
                    "RAS reports a communicator in error: " + e);
      d.evidence.push_back(ras.source + ": " + e);
      d.causes = {"an NCCL error on those ranks (their logs hold the WARN)"};
      d.fix = "run fabcheck diagnose over the ranks' NCCL logs";
      d.next = "fabcheck diagnose on the job's logs";
      out->push_back(std::move(d));
    }
  }
}

}  // namespace
}  // namespace fabcheck::diagnose
