// The registered memory region of a verbs test: host memory, or GPU memory
// registered for GPUDirect RDMA through dma-buf (ibv_reg_dmabuf_mr) with a
// fallback to the peer-memory path (nvidia-peermem: ibv_reg_mr on a device
// pointer). The path used is always recorded; GPU memory is never staged
// through the host silently here: when neither path works, it is an error.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/status.h"
#include "dl/cuda.h"
#include "perf/transport.h"
#include "perf/verbs/objects.h"

namespace fabcheck::perf::verbs {

class Region {
 public:
  // Allocates `bytes` (page aligned, zeroed) of `mem` and registers it on `pd`.
  static Result<Region> Allocate(ibv_pd* pd, uint64_t bytes, const MemorySpec& mem, int access);

  uint8_t* data() const { return static_cast<uint8_t*>(ptr_); }
  uint64_t bytes() const { return bytes_; }
  ibv_mr* mr() const { return mr_.get(); }
  bool on_gpu() const { return gpu_.has_value(); }
  // "host", "dmabuf" or "peermem".
  const std::string& registration() const { return registration_; }
  const std::string& note() const { return note_; }

  // Host-side access that works for GPU memory too (through cudaMemcpy).
  Status Fill(uint64_t offset, uint64_t size, uint32_t seed, int qp);
  Status Set(uint64_t offset, uint64_t size, uint8_t value);
  // The first pattern mismatch in [offset, offset+size), or nullopt.
  Result<std::optional<std::string>> Check(uint64_t offset, uint64_t size, uint32_t seed, int qp) const;

 private:
  // Declared before mr_: the memory must outlive its registration.
  HostMemPtr host_;
  std::optional<dl::DeviceBuffer> gpu_;
  const dl::CudaApi* cuda_ = nullptr;
  void* ptr_ = nullptr;
  uint64_t bytes_ = 0;
  std::string registration_;
  std::string note_;
  MrPtr mr_;
};

}  // namespace fabcheck::perf::verbs
