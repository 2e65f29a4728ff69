// nccl.gdr.hca-disabled: NCCL found no GPUDirect RDMA support (nvidia-peermem / dma-buf) for an HCA.
#include "diagnose/nccl_util.h"
#include "diagnose/rule.h"

namespace fabcheck::diagnose {
namespace {
void Run(const Evidence& ev, std::vector<model::Diagnosis>* out);
}  // namespace

extern const Rule kNcclGdrHcaDisabled = {
    "nccl.gdr.hca-disabled", "NCCL", "NCCL found no GPUDirect RDMA support for an HCA (no nvidia-peermem, no dma-buf)",
    "Traffic through that NIC is staged through host memory. A warning only when NET channels exist; on one node it "
    "is information.",
    "Load nvidia-peermem (modprobe nvidia_peermem) or use a dma-buf capable kernel and driver (open kernel modules).",
    &Run};

namespace {

void Run(const Evidence& ev, std::vector<model::Diagnosis>* out) {
  if (!ev.nccl) return;
  NetworkNeed need = NetworkNeedOf(*ev.nccl);
  bool needed = need != NetworkNeed::kNotNeeded;
  for (const auto* e : EventsOf(*ev.nccl, "hca-gdr-off")) {
    auto d = Make(kNcclGdrHcaDisabled, needed ? model::Severity::kWarn : model::Severity::kInfo,
                  need == NetworkNeed::kUnknown ? model::Confidence::kMedium : model::Confidence::kHigh, e->host,
                  "NCCL found no GPUDirect RDMA support for an HCA: traffic is staged through host memory");
    d.evidence.push_back(Field(*e, "line"));
    d.causes = {"nvidia-peermem not loaded (lsmod | grep peermem)",
                "the kernel or GPU driver lacks dma-buf support (open kernel modules, kernel >= 5.12)",
                "a container without access to the peer-memory module's sysfs files"};
    if (!needed) d.causes.insert(d.causes.begin(), "one node: no NET channels, so this costs nothing here");
    if (need == NetworkNeed::kUnknown) {
      d.causes.push_back("the log does not say how many nodes the job spans (no channel lines, no nNodes): if it "
                         "spans several, every inter-node transfer is staged through host memory");
    }
    d.fix = kNcclGdrHcaDisabled.fix;
    d.next = "fabcheck doctor --only GDR on " + (e->host.empty() ? std::string("that host") : e->host);
    out->push_back(std::move(d));
  }
}

}  // namespace
}  // namespace fabcheck::diagnose
