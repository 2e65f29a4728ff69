// nccl.ib.wc-flush: status 5 (work request flushed), a consequence of an earlier error.
#include <fmt/format.h>

#include "diagnose/nccl_util.h"
#include "diagnose/rule.h"

namespace fabcheck::diagnose {
namespace {
void Run(const Evidence& ev, std::vector<model::Diagnosis>* out);
}  // namespace

extern const Rule kNcclIbWcFlush = {
    "nccl.ib.wc-flush", "NCCL", "Completions with status 5 (IBV_WC_WR_FLUSH_ERR)",
    "A flush is what a QP reports after it already went into the error state: it is a consequence, and the first "
    "error (often status 12 on this or the peer's side) is the one to explain.",
    "Fix the first error; if it is not in these logs, give the peer's log too.", &Run};

namespace {

void Run(const Evidence& ev, std::vector<model::Diagnosis>* out) {
  if (!ev.nccl) return;
  std::vector<const model::NcclEvent*> flushes, firsts;
  for (const auto* e : EventsOf(*ev.nccl, "wc-error")) (Field(*e, "status") == "5" ? flushes : firsts).push_back(e);
  if (flushes.empty()) return;
  int count = 0;
  for (const auto* e : flushes) count += e->count;
  const model::NcclEvent* first = nullptr;
  for (const auto* e : firsts) {
    if (!first || e->file < first->file || (e->file == first->file && e->line < first->line)) first = e;
  }
  for (const char* kind : {"socket", "verbs", "peer-gone"}) {
    for (const auto* e : EventsOf(*ev.nccl, kind)) {
      if (!first && e->file == flushes.front()->file && e->line < flushes.front()->line) first = e;
    }
  }
  std::string peer = Field(*flushes.front(), "peer_ip");
  auto d = Make(kNcclIbWcFlush, first ? model::Severity::kInfo : model::Severity::kWarn, model::Confidence::kHigh,
                flushes.front()->host,
                first ? fmt::format("{} flushed completions (status 5) are consequences of the first error at {}:{}",
                                    count, first->file, first->line)
                      : fmt::format("{} flushed completions (status 5): the first error is not in these logs", count));
  for (const auto* e : flushes) {
    if (d.evidence.size() >= 3) break;
    d.evidence.push_back(Cite(*e));
  }
  if (first) d.evidence.push_back("first error: " + Cite(*first));
  d.causes = {"an earlier completion error on this QP (status 12, 4, 10...) put it in the error state",
              "the peer's QP went into error first (its log has the first error)", "teardown after an abort"};
  d.fix = first ? "explain the first error (its own diagnosis above)"
                : "give the peer's log" + (peer.empty() ? std::string() : " (" + ev.Name(peer) + ")") +
                      ": the first error is there";
  out->push_back(std::move(d));
}

}  // namespace
}  // namespace fabcheck::diagnose
