#include "coll/gpu_copy.h"

#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <functional>

#include "base/stats.h"
#include "base/strings.h"
#include "base/units.h"
#include "dl/cuda.h"
#include "sys/numa.h"
#include "sys/pci.h"

namespace fabcheck::coll {
namespace {

// Anonymous memory bound to one NUMA node (mbind), registered with CUDA.
class NumaHostMemory {
 public:
  ~NumaHostMemory() {
    registered_.Reset();
    if (ptr_ != nullptr) ::munmap(ptr_, bytes_);
  }
  Status Allocate(const dl::CudaApi& cuda, size_t bytes, int node) {
    bytes_ = bytes;
    ptr_ = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (ptr_ == MAP_FAILED) {
      ptr_ = nullptr;
      return ErrnoError(errno, fmt::format("mmap {} bytes for NUMA node {}", bytes, node));
    }
    if (node >= 0) {
      unsigned long mask[16] = {};
      if (node >= static_cast<int>(sizeof(mask) * 8)) return InvalidArgumentError("NUMA node number too large");
      mask[node / 64] |= 1ul << (node % 64);
      constexpr int kMpolBind = 2;
      constexpr unsigned kMpolMfMove = 2;
      if (::syscall(SYS_mbind, ptr_, bytes, kMpolBind, mask, sizeof(mask) * 8, kMpolMfMove) != 0) {
        return ErrnoError(errno, fmt::format("mbind to NUMA node {}", node), " (is the node online?)");
      }
    }
    std::memset(ptr_, 1, bytes);  // fault the pages in on that node
    ASSIGN_OR_RETURN(registered_, dl::HostBuffer::Register(cuda, ptr_, bytes));
    return Status::Ok();
  }
  void* get() const { return ptr_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
  dl::HostBuffer registered_;
};

// Median GB/s of `iterations` timed copies.
Result<double> TimeCopies(const dl::CudaApi& cuda, int device, int iterations, uint64_t bytes,
                          const std::function<dl::cudaError_t(dl::cudaStream_t)>& copy) {
  ASSIGN_OR_RETURN(auto stream, dl::Stream::Create(cuda, device));
  ASSIGN_OR_RETURN(auto start, dl::Event::Create(cuda, device));
  ASSIGN_OR_RETURN(auto stop, dl::Event::Create(cuda, device));
  // One untimed copy: first-touch mappings and clocks.
  RETURN_IF_ERROR(dl::CudaCheck(cuda, copy(stream.get()), "warm-up copy"));
  RETURN_IF_ERROR(stream.Synchronize());
  std::vector<double> rates;
  for (int i = 0; i < iterations; ++i) {
    RETURN_IF_ERROR(start.Record(stream.get()));
    RETURN_IF_ERROR(dl::CudaCheck(cuda, copy(stream.get()), "timed copy"));
    RETURN_IF_ERROR(stop.Record(stream.get()));
    ASSIGN_OR_RETURN(double seconds, stop.SecondsSince(start));
    if (seconds > 0) rates.push_back(static_cast<double>(bytes) / seconds / 1e9);
  }
  auto median = stats::Median(rates);
  if (!median) return InternalError("no copy could be timed");
  return *median;
}

double PcieGBps(double gts, int width) { return gts > 0 && width > 0 ? PcieLinkGbps(gts, width) / 8.0 : 0; }

std::string PcieName(double gts, int width) {
  int generation = PcieGeneration(gts);
  return generation > 0 ? fmt::format("PCIe Gen{} x{}", generation, width) : fmt::format("PCIe {} GT/s x{}", gts, width);
}

}  // namespace

void ReadPcieLink(const sys::SysRoot& root, const std::string& bdf, model::GpuInfo* gpu) {
  const sys::pci::FunctionFiles files = sys::pci::Function(bdf);
  auto number = [&](const char* name) -> int {
    auto text = root.ReadAttribute(files.Attribute(name));
    if (!text.ok()) return -1;
    return static_cast<int>(ParseInt(*text).value_or(-1));
  };
  auto speed = [&](const char* name) -> double {
    auto text = root.ReadAttribute(files.Attribute(name));
    if (!text.ok()) return 0;
    return ParsePcieSpeedGts(*text).value_or(0);
  };
  gpu->numa_node = number("numa_node");
  gpu->pcie_gts = speed("current_link_speed");
  gpu->pcie_width = std::max(0, number("current_link_width"));
  gpu->pcie_max_gts = speed("max_link_speed");
  gpu->pcie_max_width = std::max(0, number("max_link_width"));
}

std::vector<model::Finding> GpuCopyFindings(const model::GpuCopyReport& report, double low_ratio) {
  using model::Finding;
  using model::Severity;
  std::vector<Finding> out;
  for (const auto& g : report.gpus) {
    if (g.pcie_gts > 0 && g.pcie_max_gts > 0 && (g.pcie_gts < g.pcie_max_gts || g.pcie_width < g.pcie_max_width)) {
      Finding f{"gpu.pcie.downgraded", Severity::kWarn, "PCIe", fmt::format("GPU {} ({})", g.index, g.pci_bus_id),
                fmt::format("the PCIe link runs at {} but can do {}", PcieName(g.pcie_gts, g.pcie_width),
                            PcieName(g.pcie_max_gts, g.pcie_max_width)),
                {fmt::format("{} = {} GT/s, current_link_width = {}",
                             sys::pci::Function(g.pci_bus_id).Attribute("current_link_speed"), g.pcie_gts,
                             g.pcie_width)},
                "reseat the GPU or its riser, check BIOS PCIe settings; some GPUs lower the speed when idle, so "
                "read it again under load",
                std::nullopt, "", "gpu", std::nullopt, ""};
      out.push_back(std::move(f));
    }
  }
  for (const auto& m : report.measurements) {
    if (m.expected_gbps <= 0) continue;
    double ratio = m.gbps / m.expected_gbps;
    Finding f;
    f.id = "gpu.copy." + m.kind;
    f.group = "PCIe";
    f.object = m.peer_gpu >= 0 ? fmt::format("GPU {} -> GPU {}", m.gpu, m.peer_gpu) : fmt::format("GPU {}", m.gpu);
    f.evidence.push_back(fmt::format("{} {:.1f} GB/s over {} bytes; {} allows {:.1f} GB/s", m.kind, m.gbps, m.bytes,
                                     m.link, m.expected_gbps));
    if (ratio < low_ratio) {
      f.severity = m.numa_local ? Severity::kWarn : Severity::kInfo;
      f.message = fmt::format("{} copy reaches {:.0f}% of the {} link{}", m.kind, ratio * 100, m.link,
                              m.numa_local ? "" : " (host memory on a remote NUMA node)");
      f.remedy = "check the link (lspci -vv LnkSta), the GPU's NUMA placement, IOMMU/ACS settings, and that nothing "
                 "else uses the GPU";
    } else {
      f.severity = Severity::kPass;
      f.message = fmt::format("{} copy reaches {:.0f}% of the {} link", m.kind, ratio * 100, m.link);
    }
    out.push_back(std::move(f));
  }
  return out;
}

Result<model::GpuCopyReport> MeasureGpuCopies(const sys::SysRoot& root, const GpuCopyOptions& options) {
  ASSIGN_OR_RETURN(const dl::CudaApi* cuda, dl::LoadCuda());
  model::GpuCopyReport report;
  report.cuda_runtime_version = dl::CudaVersionString(cuda->runtime_version);
  report.cuda_driver_version = cuda->driver_version;
  int count = 0;
  RETURN_IF_ERROR(dl::CudaCheck(*cuda, cuda->cudaGetDeviceCount(&count), "cudaGetDeviceCount"));
  std::vector<int> gpus = options.gpus;
  if (gpus.empty()) {
    for (int d = 0; d < count; ++d) gpus.push_back(d);
  }
  for (int d : gpus) {
    if (d < 0 || d >= count) return InvalidArgumentError(fmt::format("GPU {} does not exist: CUDA sees {}", d, count));
  }
  const auto numa_nodes = sys::numa::ListNodes(root);
  const uint64_t bytes = options.bytes;

  std::vector<dl::DeviceBuffer> device_buffers;
  for (int d : gpus) {
    model::GpuInfo info;
    info.index = d;
    info.name = dl::CudaDeviceName(*cuda, d);
    ASSIGN_OR_RETURN(info.pci_bus_id, dl::CudaPciBusId(*cuda, d));
    ReadPcieLink(root, info.pci_bus_id, &info);
    report.gpus.push_back(info);
    const double link = PcieGBps(info.pcie_gts, info.pcie_width);
    const std::string link_name = info.pcie_gts > 0 ? PcieName(info.pcie_gts, info.pcie_width) : "PCIe (unknown)";

    ASSIGN_OR_RETURN(auto a, dl::DeviceBuffer::Allocate(*cuda, d, bytes));
    ASSIGN_OR_RETURN(auto b, dl::DeviceBuffer::Allocate(*cuda, d, bytes));
    // Host memory: one placement per NUMA node when there are several,
    // else cudaHostAlloc (what nvbandwidth and PyTorch's pin_memory use).
    std::vector<int> placements = numa_nodes.size() > 1 ? numa_nodes : std::vector<int>{-1};
    for (int node : placements) {
      NumaHostMemory numa_memory;
      dl::HostBuffer pinned;
      void* host = nullptr;
      if (node >= 0) {
        RETURN_IF_ERROR(numa_memory.Allocate(*cuda, bytes, node));
        host = numa_memory.get();
      } else {
        ASSIGN_OR_RETURN(pinned, dl::HostBuffer::Allocate(*cuda, bytes));
        host = pinned.get();
      }
      const bool local = node < 0 || info.numa_node < 0 || node == info.numa_node;
      for (const char* kind : {"h2d", "d2h"}) {
        bool h2d = std::string_view(kind) == "h2d";
        ASSIGN_OR_RETURN(double gbps, TimeCopies(*cuda, d, options.iterations, bytes, [&](dl::cudaStream_t s) {
                           return h2d ? cuda->cudaMemcpyAsync(a.get(), host, bytes, dl::cudaMemcpyHostToDevice, s)
                                      : cuda->cudaMemcpyAsync(host, a.get(), bytes, dl::cudaMemcpyDeviceToHost, s);
                         }));
        model::GpuCopyMeasurement m;
        m.kind = kind;
        m.gpu = d;
        m.numa_node = node >= 0 ? node : info.numa_node;
        m.numa_local = local;
        m.bytes = bytes;
        m.iterations = options.iterations;
        m.gbps = gbps;
        m.expected_gbps = link;
        m.link = link_name;
        report.measurements.push_back(m);
      }
    }
    ASSIGN_OR_RETURN(double d2d, TimeCopies(*cuda, d, options.iterations, bytes, [&](dl::cudaStream_t s) {
                       return cuda->cudaMemcpyAsync(b.get(), a.get(), bytes, dl::cudaMemcpyDeviceToDevice, s);
                     }));
    model::GpuCopyMeasurement m;
    m.kind = "d2d";
    m.gpu = d;
    m.bytes = bytes;
    m.iterations = options.iterations;
    m.gbps = d2d;
    m.link = "device memory";
    report.measurements.push_back(m);
    device_buffers.push_back(std::move(a));
  }

  // Peer writes, every ordered pair that CUDA lets talk directly.
  if (options.peer && gpus.size() > 1) {
    for (size_t i = 0; i < gpus.size(); ++i) {
      for (size_t j = 0; j < gpus.size(); ++j) {
        if (i == j) continue;
        int can = 0;
        RETURN_IF_ERROR(dl::CudaCheck(*cuda, cuda->cudaDeviceCanAccessPeer(&can, gpus[i], gpus[j]), "cudaDeviceCanAccessPeer"));
        model::GpuCopyMeasurement m;
        m.kind = "p2p";
        m.gpu = gpus[i];
        m.peer_gpu = gpus[j];
        m.bytes = bytes;
        m.iterations = options.iterations;
        m.link = can ? "peer (NVLink or PCIe P2P)" : "no peer access: staged through the host";
        RETURN_IF_ERROR(dl::CudaCheck(*cuda, cuda->cudaSetDevice(gpus[i]), "cudaSetDevice"));
        if (can) {
          dl::cudaError_t rc = cuda->cudaDeviceEnablePeerAccess(gpus[j], 0);
          if (rc != dl::cudaSuccess && rc != dl::cudaErrorPeerAccessAlreadyEnabled) {
            RETURN_IF_ERROR(dl::CudaCheck(*cuda, rc, fmt::format("cudaDeviceEnablePeerAccess({} -> {})", gpus[i], gpus[j])));
          }
          cuda->cudaGetLastError();  // clear "already enabled"
        }
        void* src = device_buffers[i].get();
        void* dst = device_buffers[j].get();
        ASSIGN_OR_RETURN(m.gbps, TimeCopies(*cuda, gpus[i], options.iterations, bytes, [&](dl::cudaStream_t s) {
                           return cuda->cudaMemcpyPeerAsync(dst, gpus[j], src, gpus[i], bytes, s);
                         }));
        report.measurements.push_back(m);
      }
    }
  }
  report.findings = GpuCopyFindings(report, options.low_ratio);
  return report;
}

}  // namespace fabcheck::coll
