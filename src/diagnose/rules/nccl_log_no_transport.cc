// nccl.log.no-transport: nothing in the log says which transport was used.
#include "base/strings.h"
#include "diagnose/rule.h"

namespace fabcheck::diagnose {
namespace {
void Run(const Evidence& ev, std::vector<model::Diagnosis>* out);
}  // namespace

extern const Rule kNcclLogNoTransport = {
    "nccl.log.no-transport", "NCCL", "The log has no channel lines, so the transports are unknown",
    "Without NCCL_DEBUG=INFO (INIT and NET subsystems) the log cannot show whether RDMA was used.",
    "Rerun with NCCL_DEBUG=INFO (NCCL_DEBUG_SUBSYS=INIT,NET,ENV or unset) and NCCL_DEBUG_FILE=/path/nccl.%h.%p.log, "
    "then pass those files.",
    &Run};

namespace {

void Run(const Evidence& ev, std::vector<model::Diagnosis>* out) {
  if (!ev.nccl || !ev.nccl->connections.empty()) return;
  const auto& s = *ev.nccl;
  const bool single_rank = s.ranks == 1;
  auto d = Make(kNcclLogNoTransport, single_rank ? model::Severity::kInfo : model::Severity::kUnknown,
                model::Confidence::kHigh, Join(s.files, ", "),
                s.nccl_lines == 0 ? "no NCCL INFO lines found in the log"
                : single_rank     ? "one rank: NCCL opened no connections"
                                  : "the log has no channel lines, so the transports are unknown");
  d.fix = kNcclLogNoTransport.fix;
  d.next = "rerun the job with NCCL_DEBUG=INFO NCCL_DEBUG_FILE=/tmp/nccl.%h.%p.log, then fabcheck diagnose /tmp/nccl.*.log";
  out->push_back(std::move(d));
}

}  // namespace
}  // namespace fabcheck::diagnose
