// iommu.translating: the IOMMU translates DMA of a GPU or RDMA NIC (not passthrough).
#include <map>

#include "checks/check.h"
#include "checks/facts.h"
#include "sys/pci.h"
#include "sys/procfs.h"

namespace fabcheck::checks {
namespace {

void Run(const Context& ctx, Reporter& out) {
  if (!out.NeedInventory(ctx)) return;
  const auto& root = *ctx.root;
  std::vector<std::pair<std::string, std::string>> devices;  // label, bdf
  for (const auto& g : ctx.inventory->gpus) devices.push_back({"GPU" + std::to_string(g.index), g.pci.bdf});
  for (const auto& nic : ctx.inventory->nics) {
    if (IsCheckedRdmaNic(ctx, nic)) devices.push_back({nic.label, nic.pci.bdf});
  }
  std::string cmdline;
  if (auto c = root.ReadAttribute(sys::procfs::kCmdline); c.ok()) cmdline = *c;
  std::vector<std::string> cmd_ev;
  if (!cmdline.empty()) cmd_ev.push_back(std::string(sys::procfs::kCmdline) + " = " + cmdline);
  if (devices.empty()) {
    out.Info("node", "no GPU and no RDMA NIC: IOMMU mode does not matter here", cmd_ev);
    return;
  }
  std::map<std::string, std::vector<std::string>> by_type;
  for (const auto& [label, bdf] : devices) {
    std::string link = sys::pci::Function(bdf).IommuGroup();
    if (!root.Exists(link)) {
      if (!ctx.evidence_complete) {
        out.Unknown(label + " (" + bdf + ")", "IOMMU mode unknown: " + root.Describe() +
                                                  " was taken without the doctor's evidence (no iommu_group read)");
        continue;
      }
      by_type["no IOMMU group"].push_back(label);
      continue;
    }
    auto type = root.ReadAttribute(link + "/type");
    if (!type.ok()) {
      // Kernels before 5.11 have no type file; iommu=pt on the command line means passthrough.
      if (cmdline.find("iommu=pt") != std::string::npos) {
        by_type["identity"].push_back(label);
      } else {
        out.Unknown(label + " (" + bdf + ")", "IOMMU mode unknown: " + type.status().message(), cmd_ev);
      }
      continue;
    }
    by_type[*type].push_back(label);
    if (*type == "DMA" || *type == "DMA-FQ") {
      std::vector<std::string> ev = {Evidence(link + "/type", *type)};
      ev.insert(ev.end(), cmd_ev.begin(), cmd_ev.end());
      out.Add(model::Severity::kWarn, label + " (" + bdf + ")",
              "the IOMMU translates this device's DMA (" + *type +
                  "): RDMA and peer-to-peer transfers pay for address translation (IOTLB misses), and GPUDirect "
                  "peer-to-peer may be redirected or blocked",
              ev,
              "use passthrough for bare-metal GPU nodes: add iommu=pt (intel_iommu=on iommu=pt / amd_iommu=on "
              "iommu=pt) to the kernel command line, or disable the IOMMU if nothing needs it");
    }
  }
  if (out.count() == 0) {
    std::vector<std::string> summary;
    for (const auto& [type, labels] : by_type) summary.push_back(type + ": " + JoinLimited(labels, 4));
    out.Pass("node", "no GPU or RDMA NIC under a translating IOMMU (" + Join(summary, "; ") + ")", cmd_ev);
  }
}

}  // namespace

extern const Check kIommuTranslating = {
    "iommu.translating", Rung::kGdr, "The IOMMU translates DMA of a GPU or RDMA NIC (not passthrough)",
    "In translation mode every DMA of the NIC goes through IOMMU page tables: registration is slower, IOTLB "
    "misses cost bandwidth at high message rates, and peer-to-peer GPU-NIC traffic may be routed through the root "
    "complex.",
    "Boot with iommu=pt (passthrough) on bare-metal GPU nodes; keep translation only where isolation needs it "
    "(VMs with device assignment).",
    &Run};

}  // namespace fabcheck::checks
