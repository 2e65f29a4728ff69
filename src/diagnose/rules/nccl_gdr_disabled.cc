// nccl.gdr.disabled: NCCL decided against GPUDirect RDMA for a GPU / NIC pair (PCIe distance).
#include <fmt/format.h>

#include "diagnose/rule.h"

namespace fabcheck::diagnose {
namespace {
void Run(const Evidence& ev, std::vector<model::Diagnosis>* out);
}  // namespace

extern const Rule kNcclGdrDisabled = {
    "nccl.gdr.disabled", "NCCL", "GPUDirect RDMA disabled for a GPU / NIC pair because of their PCIe distance",
    "Without GPUDirect every NET transfer is staged through host memory: lower bandwidth, more CPU and PCIe load.",
    "Place the GPU and NIC under one PCIe switch, or raise NCCL_NET_GDR_LEVEL to the distance NCCL printed if the "
    "platform supports peer-to-peer through that path.",
    &Run};

namespace {

void Run(const Evidence& ev, std::vector<model::Diagnosis>* out) {
  if (!ev.nccl) return;
  for (const auto& g : ev.nccl->gdr) {
    if (g.enabled) continue;
    std::string nic = g.hca_name.empty() ? "HCA " + g.hca : g.hca_name;
    auto d = Make(kNcclGdrDisabled, model::Severity::kWarn, model::Confidence::kHigh,
                  fmt::format("{}: GPU {} / NIC {}", g.host, g.gpu, nic),
                  fmt::format("GPUDirect disabled for GPU {} / NIC {} (distance {} > {})", g.gpu, nic, g.distance_name,
                              g.limit_name));
    d.evidence.push_back(fmt::format("GPU Direct RDMA Disabled for GPU {} / HCA {} (distance {} > {})", g.gpu, g.hca,
                                     g.distance, g.limit));
    d.causes = {fmt::format("the GPU and NIC are {} apart (NCCL allows up to {} by default)", g.distance_name,
                            g.limit_name),
                "NCCL_NET_GDR_LEVEL set lower than the platform needs"};
    d.fix = fmt::format("place the GPU and NIC under one PCIe switch, or raise NCCL_NET_GDR_LEVEL to {} if the platform "
                        "supports peer-to-peer through that path",
                        g.distance_name);
    d.next = fmt::format("fabcheck inventory on {} (GPU-NIC topology); fabcheck doctor --only L1,GDR", g.host);
    out->push_back(std::move(d));
  }
}

}  // namespace
}  // namespace fabcheck::diagnose
