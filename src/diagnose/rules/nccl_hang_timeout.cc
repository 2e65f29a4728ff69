// nccl.hang.timeout: collective watchdog timeouts; which ranks and collective, and who was last heard from.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "base/strings.h"
#include "diagnose/nccl_util.h"
#include "diagnose/rule.h"

namespace fabcheck::diagnose {
namespace {
void Run(const Evidence& ev, std::vector<model::Diagnosis>* out);
}  // namespace

extern const Rule kNcclHangTimeout = {
    "nccl.hang.timeout", "NCCL",
    "A collective timed out (PyTorch's NCCL watchdog \"collective operation timeout\", a stuck watchdog)",
    "A timeout names the ranks that waited, not the rank that caused the wait: the culprit is the rank that did not "
    "time out, or whose last completed work is behind the others, or that stopped printing first.",
    "Look at the rank(s) named as behind or silent: their log, their node (GPU Xid, NIC counters), and the pair "
    "tests between their node and the others.",
    &Run};

namespace {

std::string Ranks(const std::set<int>& ranks, size_t max = 16) {
  std::vector<std::string> out;
  for (int r : ranks) {
    if (out.size() == max) {
      out.push_back(fmt::format("... ({} in all)", ranks.size()));
      break;
    }
    out.push_back(std::to_string(r));
  }
  return Join(out, ", ");
}

void Run(const Evidence& ev, std::vector<model::Diagnosis>* out) {
  if (!ev.nccl) return;
  const auto& s = *ev.nccl;
  auto timeouts = EventsOf(s, "timeout");
  if (timeouts.empty()) return;
  std::set<int> timed_out;
  std::map<std::string, std::set<int>> by_op;  // "ALLREDUCE seq 1580" -> ranks
  for (const auto* e : timeouts) {
    int rank = static_cast<int>(ParseInt(Field(*e, "rank")).value_or(e->rank));
    if (rank >= 0) timed_out.insert(rank);
    std::string op = Field(*e, "op");
    std::string seq = Field(*e, "seq");
    by_op[seq.empty() ? op : fmt::format("{} (SeqNum {}, timeout {} ms)", op, seq, Field(*e, "timeout_ms"))].insert(rank);
  }
  // The world: NCCL's nranks, else the ranks seen.
  int world = s.ranks;
  for (const auto& seen : s.ranks_seen) world = std::max(world, seen.rank + 1);
  std::set<int> silent;
  std::set<int> seen_ranks;
  for (const auto& seen : s.ranks_seen) seen_ranks.insert(seen.rank);
  for (int r = 0; r < world && r < 100000; ++r) {
    if (!timed_out.count(r)) silent.insert(r);
  }
  // Behind: the smallest "last completed NCCL work" among ranks that printed it.
  int64_t min_done = -1, max_done = -1;
  for (const auto& seen : s.ranks_seen) {
    if (seen.last_completed < 0) continue;
    if (min_done < 0 || seen.last_completed < min_done) min_done = seen.last_completed;
    max_done = std::max(max_done, seen.last_completed);
  }
  std::set<int> behind;
  if (min_done >= 0 && max_done > min_done) {
    for (const auto& seen : s.ranks_seen) {
      if (seen.last_completed == min_done) behind.insert(seen.rank);
    }
  }
  std::vector<std::string> ops;
  for (const auto& [op, ranks] : by_op) ops.push_back(op);
  auto d = Make(kNcclHangTimeout, model::Severity::kFail, model::Confidence::kMedium,
                fmt::format("ranks {}", Ranks(timed_out)),
                fmt::format("{} rank(s) timed out in {}", timed_out.size(), Join(ops, "; ")));
  for (const auto* e : timeouts) {
    if (d.evidence.size() >= 4) break;
    d.evidence.push_back(Cite(*e));
  }
  for (const auto& seen : s.ranks_seen) {
    if (d.evidence.size() >= 16) break;
    if (seen.last_completed >= 0 || behind.count(seen.rank)) {
      d.evidence.push_back(fmt::format("rank {}{}: last completed NCCL work {}, last enqueued {} ({}:{})", seen.rank,
                                       seen.host.empty() ? "" : " on " + seen.host, seen.last_completed,
                                       seen.last_enqueued, seen.file, seen.last_line));
    }
  }
  // Last heard from: per rank, the last line it printed (the ones that stopped first are suspects).
  std::vector<const model::NcclRankSeen*> quiet;
  for (const auto& seen : s.ranks_seen) {
    if (!seen.timed_out) quiet.push_back(&seen);
  }
  if (!silent.empty() && world > 0) {
    d.causes.push_back(fmt::format("rank(s) {} did not report the timeout: they are the likely culprits (crashed, "
                                   "hung in a kernel or on their NIC, or never reached the collective)",
                                   Ranks(silent)));
    for (const auto* seen : quiet) {
      if (d.evidence.size() >= 20) break;
      d.evidence.push_back(fmt::format("rank {}{} was last heard from at {}:{}", seen->rank,
                                       seen->host.empty() ? "" : " on " + seen->host, seen->file, seen->last_line));
    }
  }
  if (!behind.empty()) {
    d.causes.push_back(fmt::format("rank(s) {} are behind (last completed work {} while others reached {}): they "
                                   "stalled first",
                                   Ranks(behind), min_done, max_done));
  }
  if (!EventsOf(s, "wc-error").empty() || !EventsOf(s, "socket").empty()) {
    d.causes.push_back("a network failure in the same logs (completion or socket errors above) broke a connection "
                       "the collective needed");
  }
  d.causes.push_back("ranks called collectives in a different order or count (an application bug: one rank skipped "
                     "a collective)");
  d.causes.push_back("one slow or degraded link or node (look at its counters and pair bandwidth)");
  d.fix = kNcclHangTimeout.fix;
  std::set<int> suspects = behind.empty() ? silent : behind;
  std::vector<std::string> hosts;
  for (const auto& seen : s.ranks_seen) {
    if (suspects.count(seen.rank) && !seen.host.empty() &&
        std::find(hosts.begin(), hosts.end(), seen.host) == hosts.end()) {
      hosts.push_back(seen.host);
    }
  }
  d.next = suspects.empty()
               ? "give every rank's log (TORCH_NCCL_TRACE_BUFFER_SIZE / flight recorder helps), then fabcheck diagnose"
               : fmt::format("look at rank(s) {}{}: their own log first; then fabcheck doctor on that node and the "
                             "L3 pair tests from it (fabcheck sweep over the job's nodes)",
                             Ranks(suspects), hosts.empty() ? "" : " on " + HostList(hosts));
  out->push_back(std::move(d));
}

}  // namespace
}  // namespace fabcheck::diagnose
