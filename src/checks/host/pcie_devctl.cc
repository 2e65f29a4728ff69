// pcie.devctl: the PCIe Device Control of each RDMA NIC and GPU, from config
// space: Max Payload Size against what the device supports, Max Read Request
// Size, Relaxed Ordering, against the profile; ATS where the device has it.
#include <fmt/format.h>

#include "checks/check.h"
#include "checks/facts.h"
#include "sys/pci_config.h"

namespace fabcheck::checks {
namespace {

// A read request this small splits every DMA read of a 400 Gb/s NIC into
// so many requests that the NIC's outstanding-read budget, not the link,
// limits the transmit rate; NVIDIA's tuning guides raise it to 4096.
constexpr int kMinNicReadRequest = 512;

struct Device {
  std::string object;  // "mlx5_0 (0000:18:00.0)", "GPU0 (0000:19:00.0)"
  const model::PciFunction* pci = nullptr;
  bool nic = false;
};

std::string AtsText(const Result<std::optional<sys::AtsInfo>>& ats) {
  if (!ats.ok()) return "ATS: unknown (" + ats.status().message() + ")";
  if (!ats->has_value()) return "ATS: no capability";
  return fmt::format("ATS capability at {:#x}: {}, smallest translation unit {} bytes", (*ats)->offset,
                     (*ats)->enabled() ? "enabled" : "disabled", 4096 << (*ats)->smallest_translation_unit());
}

void Run(const Context& ctx, Reporter& out) {
  if (!out.NeedInventory(ctx)) return;
  std::vector<Device> devices;
  for (const auto* nic : CheckedRdmaNics(ctx)) devices.push_back({nic->label + " (" + nic->pci.bdf + ")", &nic->pci, true});
  for (const auto& gpu : ctx.inventory->gpus) {
    devices.push_back({"GPU" + std::to_string(gpu.index) + " (" + gpu.pci.bdf + ")", &gpu.pci, false});
  }
  if (devices.empty()) {
    out.Info("node", "no RDMA NIC or GPU on this node: no PCIe device control to check");
    return;
  }
  const Profile* p = ctx.profile;
  std::vector<std::string> unknown, good, good_evidence;
  std::string first_error;
  for (const Device& d : devices) {
    std::string path = sys::PciConfigPath(d.pci->bdf);
    auto bytes = sys::ReadPciConfig(*ctx.root, d.pci->bdf);
    Result<std::optional<sys::PcieDeviceControl>> dc =
        bytes.ok() ? sys::FindPcieDeviceControl(*bytes) : Result<std::optional<sys::PcieDeviceControl>>(bytes.status());
    if (!dc.ok()) {
      if (unknown.empty()) first_error = path + ": " + dc.status().message();
      unknown.push_back(d.object);
      continue;
    }
    if (!dc->has_value()) {
      out.Info(d.object, "no PCI Express capability (a conventional PCI or emulated function): no device control to check",
               {path + ": " + std::to_string(bytes->size()) + " bytes, capability list without ID 0x10"});
      continue;
    }
    const sys::PcieDeviceControl& c = **dc;
    std::vector<std::string> ev = {
        fmt::format("{}: PCI Express capability at {:#x}, DevCtl {:#06x}: {}", path, c.offset, c.device_control,
                    sys::FormatDeviceControl(c)),
        fmt::format("DevCap {:#010x}: MaxPayload {} bytes supported", c.device_capabilities, c.max_payload_supported),
        AtsText(sys::FindAts(*bytes))};
    std::vector<std::string> problems, fixes;
    if (d.nic) {
      if (p && p->nic_max_payload && c.max_payload < *p->nic_max_payload) {
        problems.push_back(fmt::format("Max Payload Size {} bytes, the profile expects {}{}", c.max_payload,
                                       *p->nic_max_payload,
                                       c.max_payload_supported < *p->nic_max_payload
                                           ? fmt::format(" (the device supports only {})", c.max_payload_supported)
                                           : std::string()));
        fixes.push_back("MPS is the smallest along the path: set it in the BIOS (PCIe MPS 'Auto'/max) or boot with "
                        "pci=pcie_bus_perf");
      }
      int want_mrrs = p && p->nic_max_read_request ? *p->nic_max_read_request : kMinNicReadRequest;
      if (c.max_read_request < want_mrrs) {
        problems.push_back(fmt::format("Max Read Request Size {} bytes, below {}", c.max_read_request,
                                       p && p->nic_max_read_request
                                           ? fmt::format("the profile's {}", want_mrrs)
                                           : fmt::format("the {} a NIC at line rate needs", want_mrrs)));
        fixes.push_back(fmt::format("raise it (mlxconfig / the BIOS, or setpci -s {} CAP_EXP+8.w; MRRS is bits 14:12: "
                                    "5 = 4096 bytes)", d.pci->bdf));
      }
      if (p && p->nic_relaxed_ordering && *p->nic_relaxed_ordering != c.relaxed_ordering) {
        problems.push_back(std::string("Relaxed Ordering is ") + (c.relaxed_ordering ? "enabled" : "disabled") +
                           ", the profile expects it " + (*p->nic_relaxed_ordering ? "enabled" : "disabled"));
        fixes.push_back("enable it in the NIC's firmware (mlxconfig PCI_WR_ORDERING / the BIOS 'Relaxed Ordering'); "
                        "GPUDirect RDMA writes into GPU memory rely on it on many root complexes");
      }
    }
    if (!problems.empty()) {
      out.Add(model::Severity::kWarn, d.object, Join(problems, "; "), ev, Join(fixes, "; "));
      continue;
    }
    std::string facts = fmt::format("MaxPayload {}/{} supported, MaxReadReq {}, RlxdOrd{}", c.max_payload,
                                    c.max_payload_supported, c.max_read_request, c.relaxed_ordering ? '+' : '-');
    good.push_back(d.object);
    good_evidence.push_back(d.object + ": " + facts + "; " + ev.back());
  }
  if (!unknown.empty()) {
    out.Unknown("node",
                "PCIe device control unknown for " + std::to_string(unknown.size()) + " device(s): " +
                    JoinLimited(unknown, 4),
                {"first error: " + first_error},
                "run as root (beyond the first 64 bytes, config space is readable only by root); for a capture, take "
                "it as root with `fabcheck snapshot`");
  }
  if (!good.empty()) {
    out.Pass("node",
             std::to_string(good.size()) + " device(s) with PCIe device control as expected" +
                 (p && (p->nic_max_payload || p->nic_max_read_request || p->nic_relaxed_ordering)
                      ? " (by the profile's nics: keys)"
                      : fmt::format(" (NIC Max Read Request at least {} bytes)", kMinNicReadRequest)),
             good_evidence);
  }
}

}  // namespace

extern const Check kPcieDevctl = {
    "pcie.devctl", Rung::kHost,
    "A NIC's PCIe Max Read Request or Max Payload Size is below what the profile expects (or the read request far "
    "below line rate's needs), or Relaxed Ordering differs from the profile",
    "The PCIe link can be at full speed and width and still cap the NIC: a small Max Read Request splits every DMA "
    "read into more requests than the NIC may keep in flight, and Max Payload Size sets the per-packet overhead. "
    "Relaxed Ordering lets the root complex reorder the NIC's writes; GPUDirect RDMA into GPU memory depends on it "
    "on many platforms.",
    "Compare with `lspci -vvv` (DevCap/DevCtl); MRRS and MPS come from the BIOS and firmware (mlxconfig), or at boot "
    "pci=pcie_bus_perf; give the profile's nics.max_read_request, nics.max_payload and nics.relaxed_ordering. Read "
    "from /sys/bus/pci/devices/<bdf>/config (beyond 64 bytes needs root; otherwise unknown).",
    &Run};

}  // namespace fabcheck::checks
