// nccl.version.mismatch: several NCCL versions in one job.
#include "base/strings.h"
#include "diagnose/rule.h"

namespace fabcheck::diagnose {
namespace {
void Run(const Evidence& ev, std::vector<model::Diagnosis>* out);
}  // namespace

extern const Rule kNcclVersionMismatch = {
    "nccl.version.mismatch", "NCCL", "Several NCCL versions printed in one job",
    "Ranks with different NCCL builds may disagree on protocols and hang or fail in init.",
    "Use one NCCL build on every node (the container image or the same libnccl2 package).", &Run};

namespace {

void Run(const Evidence& ev, std::vector<model::Diagnosis>* out) {
  if (!ev.nccl || ev.nccl->nccl_versions.size() < 2) return;
  auto d = Make(kNcclVersionMismatch, model::Severity::kWarn, model::Confidence::kMedium, "NCCL",
                "several NCCL versions in one job: " + Join(ev.nccl->nccl_versions, ", "));
  d.causes = {"nodes run different container images or libnccl2 packages",
              "the logs given are from different jobs (then ignore this)"};
  d.fix = kNcclVersionMismatch.fix;
  d.next = "rung L1L2.cluster (nccl_version must agree): fabcheck ladder over the job's nodes";
  out->push_back(std::move(d));
}

}  // namespace
}  // namespace fabcheck::diagnose
