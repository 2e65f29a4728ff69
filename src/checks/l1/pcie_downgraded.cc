// pcie.downgraded: a NIC's or GPU's PCIe link (or a bridge on its path) runs
// below its maximum speed or width, or below the profile's generation/width.
#include <fmt/format.h>

#include "base/units.h"
#include "checks/check.h"
#include "checks/facts.h"
#include "sys/pci.h"

namespace fabcheck::checks {
namespace {

std::string Sysfs(const std::string& bdf, const char* attr) { return sys::pci::Function(bdf).Attribute(attr); }

std::vector<std::string> LinkEvidence(const std::string& bdf, const model::PciLink& l) {
  auto speed = [](const std::optional<double>& v) { return v ? fmt::format("{:g} GT/s", *v) : std::string("(unknown)"); };
  auto width = [](const std::optional<int>& v) { return v ? std::to_string(*v) : std::string("(unknown)"); };
  return {Evidence(Sysfs(bdf, "current_link_speed"), speed(l.current_speed_gts)),
          Evidence(Sysfs(bdf, "max_link_speed"), speed(l.max_speed_gts)),
          Evidence(Sysfs(bdf, "current_link_width"), width(l.current_width)),
          Evidence(Sysfs(bdf, "max_link_width"), width(l.max_width))};
}

struct Device {
  std::string label;  // "GPU0 (0000:18:00.0)"
  const model::PciFunction* pci;
  bool gpu;
  std::optional<int> want_gen, want_width;
};

void CheckDevice(const Device& d, Reporter& out, int& good) {
  const auto& l = d.pci->link;
  if (!l.current_speed_gts || !l.max_speed_gts || !l.current_width || !l.max_width) {
    out.Unknown(d.label, "PCIe link speed/width could not be read", LinkEvidence(d.pci->bdf, l));
    return;
  }
  bool problem = false;
  if (*l.current_width < *l.max_width) {
    out.Add(model::Severity::kFail, d.label,
            fmt::format("PCIe link trained at x{} instead of x{}: bandwidth is cut to {:.0f}%", *l.current_width,
                        *l.max_width, 100.0 * *l.current_width / *l.max_width),
            LinkEvidence(d.pci->bdf, l),
            "reseat the card or riser, check the slot's bifurcation setting in the BIOS; look for AER errors in "
            "dmesg; `lspci -vv -s " + d.pci->bdf + "` shows LnkSta vs LnkCap");
    problem = true;
  }
  if (*l.current_speed_gts + 1e-9 < *l.max_speed_gts) {
    // GPUs lower their link speed when idle (power management); that is not a fault.
    if (d.gpu) {
      out.Info(d.label,
               fmt::format("PCIe link at {:g} GT/s, below its maximum {:g} GT/s: GPUs slow the link down when idle; "
                           "re-check under load",
                           *l.current_speed_gts, *l.max_speed_gts),
               LinkEvidence(d.pci->bdf, l));
    } else {
      out.Add(model::Severity::kFail, d.label,
              fmt::format("PCIe link trained at Gen{} ({:g} GT/s) instead of Gen{} ({:g} GT/s)",
                          PcieGeneration(*l.current_speed_gts), *l.current_speed_gts,
                          PcieGeneration(*l.max_speed_gts), *l.max_speed_gts),
              LinkEvidence(d.pci->bdf, l),
              "reseat the card, check the BIOS PCIe speed setting for the slot and AER errors in dmesg; a riser or "
              "retimer problem often shows as a lower generation");
    }
    problem = true;
  }
  int max_gen = PcieGeneration(*l.max_speed_gts);
  if (d.want_gen && max_gen > 0 && max_gen < *d.want_gen) {
    out.Add(model::Severity::kFail, d.label,
            fmt::format("PCIe link can do at most Gen{}, the profile expects Gen{}", max_gen, *d.want_gen),
            LinkEvidence(d.pci->bdf, l),
            "the card sits in a slower slot or behind a slower switch than the machine type specifies; move it or "
            "fix the profile");
    problem = true;
  }
  if (d.want_width && *l.max_width < *d.want_width) {
    out.Add(model::Severity::kFail, d.label,
            fmt::format("PCIe link is at most x{}, the profile expects x{}", *l.max_width, *d.want_width),
            LinkEvidence(d.pci->bdf, l), "the card sits in a narrower slot than the machine type specifies");
    problem = true;
  }
  // A switch uplink trained low limits every device below it.
  for (const auto& bridge : d.pci->path) {
    const auto& bl = bridge.link;
    if (!bl.current_width || !bl.max_width || !bl.current_speed_gts || !bl.max_speed_gts) continue;
    if (*bl.current_width < *bl.max_width || (!d.gpu && *bl.current_speed_gts + 1e-9 < *bl.max_speed_gts)) {
      out.Add(model::Severity::kFail, d.label,
              fmt::format("the {} {} on its PCIe path runs at x{} {:g} GT/s instead of x{} {:g} GT/s",
                          bridge.role.empty() ? "bridge" : bridge.role, bridge.bdf, *bl.current_width,
                          *bl.current_speed_gts, *bl.max_width, *bl.max_speed_gts),
              LinkEvidence(bridge.bdf, bl), "reseat the switch board or riser; check AER errors in dmesg");
      problem = true;
    }
  }
  if (!problem) ++good;
}

void Run(const Context& ctx, Reporter& out) {
  if (!out.NeedInventory(ctx)) return;
  std::vector<Device> devices;
  for (const auto& gpu : ctx.inventory->gpus) {
    devices.push_back({"GPU" + std::to_string(gpu.index) + " (" + gpu.pci.bdf + ")", &gpu.pci, true,
                       ctx.profile ? ctx.profile->gpu_pcie_gen : std::nullopt,
                       ctx.profile ? ctx.profile->gpu_pcie_width : std::nullopt});
  }
  for (const auto& nic : ctx.inventory->nics) {
    if (!IsCheckedRdmaNic(ctx, nic)) continue;
    devices.push_back({nic.label + " (" + nic.pci.bdf + ")", &nic.pci, false,
                       ctx.profile ? ctx.profile->nic_pcie_gen : std::nullopt,
                       ctx.profile ? ctx.profile->nic_pcie_width : std::nullopt});
  }
  if (devices.empty()) {
    out.Info("node", "no GPU and no RDMA NIC on this node, no PCIe link to check");
    return;
  }
  int good = 0;
  for (const auto& d : devices) CheckDevice(d, out, good);
  if (good > 0) {
    out.Pass("node", fmt::format("{} of {} GPU/RDMA NIC PCIe links at their maximum speed and width", good,
                                 devices.size()));
  }
}

}  // namespace

extern const Check kPcieDowngraded = {
    "pcie.downgraded", Rung::kL1, "A NIC's or GPU's PCIe link runs below its maximum speed or width",
    "A NIC on Gen4 x8 instead of Gen5 x16 delivers a quarter of its bandwidth; no RDMA test can exceed the PCIe "
    "link. The card reports it, but nothing else warns.",
    "Reseat the card or riser, check the BIOS slot settings (speed, bifurcation) and AER errors; `lspci -vv` "
    "shows LnkSta against LnkCap. GPUs lower their link speed when idle; only their width is judged at rest.",
    &Run};

}  // namespace fabcheck::checks
