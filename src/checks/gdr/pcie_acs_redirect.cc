// pcie.acs.redirect: ACS P2P request/completion redirect is enabled on a PCIe
// bridge between a GPU and its NIC, read from the bridges' config space.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "checks/check.h"
#include "checks/facts.h"
#include "sys/pci_config.h"

namespace fabcheck::checks {
namespace {

using sys::AcsInfo;
using sys::FindAcs;
using sys::FormatAcsFlags;

// The bridges below the deepest common bridge of two paths (root first):
// the downstream ports a peer-to-peer transfer passes, where ACS applies.
// Empty when the paths share no bridge (the transfer crosses the host bridge).
std::vector<const model::PciBridge*> BridgesBetween(const model::PciFunction& a, const model::PciFunction& b,
                                                    bool* share) {
  size_t common = 0;
  while (common < a.path.size() && common < b.path.size() && a.path[common].bdf == b.path[common].bdf) ++common;
  *share = common > 0 && a.root_complex == b.root_complex;
  std::vector<const model::PciBridge*> out;
  if (!*share) return out;
  for (size_t i = common; i < a.path.size(); ++i) out.push_back(&a.path[i]);
  for (size_t i = common; i < b.path.size(); ++i) out.push_back(&b.path[i]);
  // The common switch's downstream side: the last shared hop is the upstream
  // port, the ports right below it are already in the lists above.
  return out;
}

void Run(const Context& ctx, Reporter& out) {
  if (!out.NeedInventory(ctx)) return;
  if (!ctx.HasGpus() || !ctx.HasRdma()) {
    out.Info("node", "ACS matters for GPU-NIC peer-to-peer traffic; this node has " +
                         std::to_string(ctx.inventory->gpus.size()) + " GPU(s) and " +
                         std::to_string(ctx.inventory->rdma_devices.size()) + " RDMA device(s)");
    return;
  }
  std::map<std::string, Result<std::optional<AcsInfo>>> cache;
  auto acs = [&](const std::string& bdf) -> const Result<std::optional<AcsInfo>>& {
    auto it = cache.find(bdf);
    if (it != cache.end()) return it->second;
    std::string path = sys::PciConfigPath(bdf);
    auto bytes = sys::ReadPciConfig(*ctx.root, bdf);
    Result<std::optional<AcsInfo>> r =
        bytes.ok() ? FindAcs(*bytes) : Result<std::optional<AcsInfo>>(bytes.status());
    if (!r.ok()) r = Status(r.status().code(), path + ": " + r.status().message());
    return cache.emplace(bdf, std::move(r)).first->second;
  };
  int checked = 0, crossing = 0;
  std::set<std::string> reported;
  std::vector<std::string> unknown;
  std::string first_error;
  for (const auto& n : NearestRdmaNics(ctx)) {
    if (!n.gpu || n.nics.empty()) continue;
    for (const auto* nic : n.nics) {
      bool share = false;
      auto bridges = BridgesBetween(n.gpu->pci, nic->pci, &share);
      std::string pair = "GPU" + std::to_string(n.gpu->index) + " <-> " + nic->label;
      if (!share) {
        ++crossing;
        continue;
      }
      ++checked;
      for (const auto* bridge : bridges) {
        const auto& r = acs(bridge->bdf);
        if (!r.ok()) {
          if (unknown.empty()) first_error = r.status().message();
          if (std::find(unknown.begin(), unknown.end(), bridge->bdf) == unknown.end()) unknown.push_back(bridge->bdf);
          continue;
        }
        if (!r->has_value() || !(*r)->RedirectEnabled()) continue;
        if (!reported.insert(bridge->bdf).second) continue;
        const AcsInfo& info = **r;
        out.Add(model::Severity::kFail, "bridge " + bridge->bdf + " (" + pair + ")",
                "ACS redirect is enabled on a PCIe " + (bridge->role.empty() ? std::string("bridge") : bridge->role) +
                    " between the GPU and its NIC: peer-to-peer traffic is sent up to the root complex instead of "
                    "across the switch, which cripples or breaks GPUDirect RDMA",
                {fmt::format("{}: ACS capability at {:#x}, ACSCtl: {}", sys::PciConfigPath(bridge->bdf),
                             info.offset, FormatAcsFlags(info.control)),
                 "ACSCap: " + FormatAcsFlags(info.capability)},
                "disable ACS redirect on the switch ports (BIOS: 'ACS' / 'PCIe ACS control' off, or at boot: setpci -s " +
                    bridge->bdf + " ECAP_ACS+6.w=0000); not on hosts that need ACS for VM isolation");
      }
    }
  }
  if (!unknown.empty()) {
    out.Unknown("node", "ACS could not be read on " + std::to_string(unknown.size()) + " bridge(s): " +
                            JoinLimited(unknown, 4),
                {"first error: " + first_error},
                "run as root (config space beyond the first 64 bytes is readable only by root); for a capture, take "
                "it as root with `fabcheck snapshot`");
  }
  if (out.count() == 0) {
    if (checked > 0) {
      out.Pass("node", std::to_string(checked) + " GPU-NIC pair(s) behind shared PCIe switches: no ACS redirect");
    } else {
      out.Pass("node", "no GPU shares a PCIe switch with its NIC (" + std::to_string(crossing) +
                           " pair(s) cross the host bridge, where ACS redirect does not change the path)");
    }
  }
}

}  // namespace

extern const Check kPcieAcsRedirect = {
    "pcie.acs.redirect", Rung::kGdr, "ACS redirect is enabled on a PCIe bridge between a GPU and its NIC",
    "ACS P2P request/completion redirect forces peer-to-peer transactions up to the root complex (and through the "
    "IOMMU); GPUDirect RDMA between a GPU and a NIC below the same switch then runs at a fraction of its bandwidth "
    "or fails.",
    "Disable ACS on the PCIe switch downstream ports (BIOS option, or setpci at boot) on bare-metal GPU nodes; "
    "read from /sys/bus/pci/devices/<bdf>/config (needs root).",
    &Run};

}  // namespace fabcheck::checks
