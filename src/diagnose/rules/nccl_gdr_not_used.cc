// nccl.gdr.not-used: NET channels without /GDRDMA.
#include <fmt/format.h>

#include <set>

#include "base/strings.h"
#include "diagnose/nccl_util.h"
#include "diagnose/rule.h"

namespace fabcheck::diagnose {
namespace {
void Run(const Evidence& ev, std::vector<model::Diagnosis>* out);
}  // namespace

extern const Rule kNcclGdrNotUsed = {
    "nccl.gdr.not-used", "NCCL", "NET (IB/RoCE or plugin) channels ran without GPUDirect RDMA (no /GDRDMA)",
    "The NIC reads and writes host memory and the data is copied to and from the GPU: bandwidth and CPU cost.",
    "Check nvidia-peermem or dma-buf support, NCCL_NET_GDR_LEVEL, and the GPU-NIC PCIe distance (fabcheck "
    "inventory).",
    &Run};

namespace {

void Run(const Evidence& ev, std::vector<model::Diagnosis>* out) {
  if (!ev.nccl) return;
  int off = 0, on = 0;
  std::set<std::string> hosts;
  for (const auto& c : ev.nccl->connections) {
    if (!StartsWith(c.transport, "NET/") || c.transport == "NET/Socket") continue;
    if (c.gdr) {
      on += static_cast<int>(c.channels.size());
    } else {
      off += static_cast<int>(c.channels.size());
      hosts.insert(c.host);
    }
  }
  if (off == 0) return;
  auto d = Make(kNcclGdrNotUsed, model::Severity::kWarn, model::Confidence::kHigh,
                HostList(std::vector<std::string>(hosts.begin(), hosts.end())),
                fmt::format("{} NET channel connections ran without GPUDirect RDMA (no /GDRDMA){}", off,
                            on > 0 ? fmt::format("; {} used it", on) : ""));
  for (const auto* e : EventsOf(*ev.nccl, "channel-no-gdr")) d.evidence.push_back(Field(*e, "line"));
  if (!ev.nccl->gdr.empty()) d.causes.push_back("NCCL's distance rule (see nccl.gdr.disabled)");
  if (!EventsOf(*ev.nccl, "hca-gdr-off").empty()) d.causes.push_back("no peer-memory support (see nccl.gdr.hca-disabled)");
  d.causes.push_back("nvidia-peermem not loaded or dma-buf unavailable");
  d.causes.push_back("NCCL_NET_GDR_LEVEL lower than the GPU-NIC distance");
  d.fix = kNcclGdrNotUsed.fix;
  d.next = "fabcheck doctor --only GDR on " + HostList(std::vector<std::string>(hosts.begin(), hosts.end()));
  out->push_back(std::move(d));
}

}  // namespace
}  // namespace fabcheck::diagnose
