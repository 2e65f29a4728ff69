// nccl.env.p2p-disable: NCCL_P2P_DISABLE=1 moved intra-node traffic off NVLink/PCIe P2P.
#include <fmt/format.h>

#include "base/strings.h"
#include "diagnose/rule.h"

namespace fabcheck::diagnose {
namespace {
void Run(const Evidence& ev, std::vector<model::Diagnosis>* out);
}  // namespace

extern const Rule kNcclEnvP2pDisable = {
    "nccl.env.p2p-disable", "NCCL", "NCCL_P2P_DISABLE=1 was set",
    "GPUs of one node then talk through host memory (SHM) instead of NVLink or PCIe peer-to-peer: several times "
    "slower.",
    "Unset NCCL_P2P_DISABLE unless P2P is broken on this platform (then fix ACS/IOMMU settings: fabcheck doctor "
    "--only GDR).",
    &Run};

namespace {

void Run(const Evidence& ev, std::vector<model::Diagnosis>* out) {
  if (!ev.nccl) return;
  auto it = ev.nccl->env.find("NCCL_P2P_DISABLE");
  if (it == ev.nccl->env.end() || Trim(it->second) != "1") return;
  std::string used;
  for (const auto& [transport, count] : ev.nccl->transport_channels) {
    if (!StartsWith(transport, "NET/")) used += fmt::format("{}{} ({} channels)", used.empty() ? "" : ", ", transport, count);
  }
  auto d = Make(kNcclEnvP2pDisable, model::Severity::kWarn, model::Confidence::kHigh, "NCCL_P2P_DISABLE",
                fmt::format("NCCL_P2P_DISABLE was set: GPUs of one node do not talk over NVLink/PCIe P2P{}",
                            used.empty() ? "" : "; intra-node traffic used " + used));
  d.evidence.push_back("NCCL_P2P_DISABLE set by environment to " + it->second);
  d.causes = {"a workaround for a P2P hang (ACS or IOMMU redirecting peer-to-peer through the root complex) kept "
              "after the platform was fixed",
              "a container image default"};
  d.fix = kNcclEnvP2pDisable.fix;
  d.next = "fabcheck doctor --only GDR,NCCL; fabcheck gpu (P2P bandwidth between the GPUs)";
  out->push_back(std::move(d));
}

}  // namespace
}  // namespace fabcheck::diagnose
