// gdr.no-peer-memory: neither nvidia_peermem (or the legacy nv_peer_mem) nor
// the dma-buf path is available, so the NIC cannot DMA into GPU memory.
#include <fmt/format.h>

#include "checks/check.h"
#include "checks/facts.h"
#include "checks/proc.h"
#include "sys/procfs.h"

namespace fabcheck::checks {
namespace {

void Run(const Context& ctx, Reporter& out) {
  if (!out.NeedInventory(ctx)) return;
  const auto& root = *ctx.root;
  std::vector<std::string> ev;
  // What NCCL itself probes (net_ib.cc ibGdrSupportInitOnce), then /proc/modules.
  for (std::string_view file : sys::procfs::kPeerMemoryVersionFiles) {
    const std::string path(file);
    if (root.Exists(path)) {
      auto v = root.ReadAttribute(path);
      ev.push_back(Evidence(path, v.ok() ? *v : "(present)"));
    }
  }
  bool peermem = !ev.empty() || root.IsDirectory(sys::procfs::ModuleDir("nvidia_peermem"));
  if (!peermem) {
    const std::string modules_file(sys::procfs::kModules);
    if (auto modules = root.ReadFile(modules_file); modules.ok()) {
      auto names = ParseModules(*modules);
      peermem = names.count("nvidia_peermem") || names.count("nv_peer_mem");
      ev.push_back(modules_file + ": " + std::string(peermem ? "lists" : "does not list") + " nvidia_peermem/nv_peer_mem");
    } else {
      ev.push_back(modules_file + ": " + modules.status().message());
    }
  }
  if (!ctx.HasGpus() || !ctx.HasRdma()) {
    out.Info("node", std::string("GPUDirect RDMA needs a GPU and an RDMA NIC; this node has ") +
                         (ctx.HasGpus() ? "no RDMA NIC" : "no GPU") +
                         (peermem ? " (nvidia_peermem is loaded)" : ""),
             ev);
    return;
  }
  if (peermem) {
    out.Pass("node", "GPU peer memory available through nvidia_peermem", ev);
    return;
  }
  if (!ctx.evidence_complete) {
    out.Unknown("node", "peer-memory state unknown: " + root.Describe() +
                            " was taken without the doctor's evidence (/proc/modules, /sys/module); re-take it with "
                            "`fabcheck snapshot`", ev);
    return;
  }
  // dma-buf: Linux >= 5.12 and NVIDIA's open kernel modules (R515+); NCCL >= 2.19 uses it by default.
  std::string release = ctx.inventory->host.kernel;
  if (release.empty()) {
    if (auto r = root.ReadAttribute(sys::procfs::kOsRelease); r.ok()) release = *r;
  }
  auto kernel = ParseKernelVersion(release);
  ev.push_back("kernel " + (release.empty() ? std::string("(unknown)") : release));
  const std::string driver_file(sys::procfs::kNvidiaDriverVersion);
  auto driver = root.ReadFile(driver_file);
  std::string first_line = driver.ok() ? std::string(Trim(Split(*driver, '\n').front())) : "";
  ev.push_back(driver.ok() ? driver_file + ": " + first_line : driver_file + ": " + driver.status().message());
  bool kernel_ok = kernel && (kernel->first > 5 || (kernel->first == 5 && kernel->second >= 12));
  bool open_modules = first_line.find("Open Kernel Module") != std::string::npos;
  std::string remedy =
      "load the peer-memory module: modprobe nvidia_peermem (shipped with the NVIDIA driver; in the GPU operator set "
      "driver.rdma.enabled=true), or use the dma-buf path: Linux >= 5.12 with NVIDIA open kernel modules";
  if (kernel_ok && open_modules) {
    out.Pass("node", "GPU memory can be registered through dma-buf (kernel >= 5.12, NVIDIA open kernel modules)", ev);
  } else if (kernel && !kernel_ok) {
    out.Add(model::Severity::kFail, "node",
            "no GPU peer memory: nvidia_peermem is not loaded and the kernel is too old for dma-buf (< 5.12); NCCL "
            "will not use GPUDirect RDMA and stages every transfer through host memory",
            ev, remedy);
  } else if (!driver.ok() && !root.live()) {
    out.Unknown("node", "nvidia_peermem is not loaded and the NVIDIA driver version (for dma-buf) is not in " +
                            root.Describe(), ev, remedy);
  } else {
    out.Add(model::Severity::kFail, "node",
            "no GPU peer memory: nvidia_peermem is not loaded and the NVIDIA driver is not the open kernel module "
            "flavour dma-buf needs; NCCL will not use GPUDirect RDMA",
            ev, remedy);
  }
}

}  // namespace

extern const Check kGdrNoPeerMemory = {
    "gdr.no-peer-memory", Rung::kGdr, "Neither nvidia_peermem nor dma-buf support is available",
    "GPUDirect RDMA needs the NIC to register GPU memory: through the nvidia_peermem module or the kernel's dma-buf "
    "mechanism. Without either, NCCL silently copies through host memory (no /GDRDMA in its log) at a fraction "
    "of the bandwidth.",
    "modprobe nvidia_peermem (make it load at boot), or run Linux >= 5.12 with NVIDIA's open kernel modules for "
    "dma-buf.",
    &Run};

}  // namespace fabcheck::checks
