// nccl.log.incomplete: no communicator reached "Init COMPLETE".
#include "base/strings.h"
#include "diagnose/nccl_util.h"
#include "diagnose/rule.h"

namespace fabcheck::diagnose {
namespace {
void Run(const Evidence& ev, std::vector<model::Diagnosis>* out);
}  // namespace

extern const Rule kNcclLogIncomplete = {
    "nccl.log.incomplete", "NCCL", "No communicator reached \"Init COMPLETE\" in this log",
    "Either the log was cut, or the job hung or died during NCCL's init (bootstrap, connections).",
    "If the job hung, look at the last lines of each rank (nccl.hang.timeout lists them) and at the socket and "
    "completion errors.",
    &Run};

namespace {

void Run(const Evidence& ev, std::vector<model::Diagnosis>* out) {
  if (!ev.nccl || ev.nccl->connections.empty() || ev.nccl->init_complete || ev.nccl->nccl_lines == 0) return;
  auto d = Make(kNcclLogIncomplete, model::Severity::kInfo, model::Confidence::kMedium, Join(ev.nccl->files, ", "),
                "no communicator reached \"Init COMPLETE\" in this log (truncated, or the job hung in init)");
  for (const auto& seen : ev.nccl->ranks_seen) {
    if (d.evidence.size() >= 8) break;
    d.evidence.push_back("rank " + std::to_string(seen.rank) + " last printed at " + seen.file + ":" +
                         std::to_string(seen.last_line));
  }
  d.fix = "if the job hung, look at the last lines of each rank's log";
  out->push_back(std::move(d));
}

}  // namespace
}  // namespace fabcheck::diagnose
