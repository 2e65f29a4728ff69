// `fabcheck gpu`: copy bandwidth per GPU as nvbandwidth measures it (copy
// engine, cudaMemcpyAsync timed with CUDA events): host->device and
// device->host from pinned memory (placed on the GPU's NUMA node and on the
// others when there are several), device->device, and GPU->GPU peer writes;
// each compared with what the GPU's PCIe link (speed x width, read through
// SysRoot) allows.
#pragma once

#include <vector>

#include "base/status.h"
#include "fabcheck/model/coll.h"
#include "sys/sysroot.h"

namespace fabcheck::coll {

struct GpuCopyOptions {
  uint64_t bytes = 256ull << 20;
  int iterations = 10;
  std::vector<int> gpus;  // empty: all
  bool peer = true;
  double low_ratio = 0.7;  // flag a copy below this fraction of its link
};

// Fills `gpu` with the PCIe link and NUMA node of `pci_bus_id` ("0000:18:00.0").
void ReadPcieLink(const sys::SysRoot& root, const std::string& pci_bus_id, model::GpuInfo* gpu);

// Findings for measured copies against their link (pure: unit-tested).
std::vector<model::Finding> GpuCopyFindings(const model::GpuCopyReport& report, double low_ratio);

Result<model::GpuCopyReport> MeasureGpuCopies(const sys::SysRoot& root, const GpuCopyOptions& options);

}  // namespace fabcheck::coll
