#include "perf/verbs/memory.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "perf/verbs/plan.h"

namespace fabcheck::perf::verbs {

Result<Region> Region::Allocate(ibv_pd* pd, uint64_t bytes, const MemorySpec& mem, int access) {
  Region r;
  r.bytes_ = bytes;
  if (!mem.is_cuda()) {
    void* p = nullptr;
    if (int rc = posix_memalign(&p, 4096, bytes); rc != 0) {
      return ErrnoError(rc, fmt::format("allocating {} B of host memory for the verbs buffers", bytes));
    }
    std::memset(p, 0, bytes);
    r.host_.reset(p);
    r.ptr_ = p;
    r.mr_.reset(ibv_reg_mr(pd, p, bytes, access));
    if (!r.mr_) {
      int err = errno;
      return ErrnoError(err, fmt::format("ibv_reg_mr of {} B host memory", bytes),
                        err == ENOMEM || err == EPERM
                            ? " (locked-memory limit too low: ulimit -l unlimited, or CAP_IPC_LOCK in a container)"
                            : "");
    }
    r.registration_ = "host";
    return r;
  }
  auto cuda = dl::LoadCuda();
  if (!cuda.ok()) {
    return UnavailableError(fmt::format("--mem {} needs the CUDA runtime: {}", mem.ToString(), cuda.status().message()));
  }
  r.cuda_ = *cuda;
  ASSIGN_OR_RETURN(dl::DeviceBuffer buf, dl::DeviceBuffer::Allocate(*r.cuda_, mem.cuda_device, bytes));
  r.gpu_ = std::move(buf);
  r.ptr_ = r.gpu_->get();
  RETURN_IF_ERROR(dl::CudaCheck(*r.cuda_, r.cuda_->cudaMemset(r.ptr_, 0, bytes), "cudaMemset"));
  // 1. dma-buf: needs a CUDA 11.7+ driver, a kernel with dma-buf RDMA support and the NIC driver's support.
  std::string dmabuf_why;
  auto fd = dl::CudaExportDmaBuf(*r.cuda_, mem.cuda_device, r.ptr_, bytes);
  if (fd.ok()) {
    r.mr_.reset(ibv_reg_dmabuf_mr(pd, 0, bytes, reinterpret_cast<uint64_t>(r.ptr_), *fd, access));
    int err = errno;
    close(*fd);  // the MR holds its own reference to the dma-buf
    if (r.mr_) {
      r.registration_ = "dmabuf";
      return r;
    }
    dmabuf_why = fmt::format("ibv_reg_dmabuf_mr: {}", ErrnoName(err));
  } else {
    dmabuf_why = fd.status().message();
  }
  // 2. peer memory: ibv_reg_mr on the device pointer, served by nvidia-peermem.
  r.mr_.reset(ibv_reg_mr(pd, r.ptr_, bytes, access));
  if (r.mr_) {
    r.registration_ = "peermem";
    r.note_ = "dma-buf registration failed (" + dmabuf_why + "), used nvidia-peermem";
    return r;
  }
  int err = errno;
  return FailedPreconditionError(fmt::format(
      "cannot register {} B of GPU memory on {} for RDMA: dma-buf: {}; peer memory (ibv_reg_mr): {}. "
      "Load nvidia-peermem (modprobe nvidia-peermem) or use a dma-buf capable driver/kernel; "
      "--mem host measures without GPUDirect",
      bytes, mem.ToString(), dmabuf_why, ErrnoName(err)));
}

Status Region::Fill(uint64_t offset, uint64_t size, uint32_t seed, int qp) {
  if (!gpu_) {
    FillPattern(data() + offset, size, seed, qp);
    return Status::Ok();
  }
  std::vector<uint8_t> tmp(size);
  FillPattern(tmp.data(), size, seed, qp);
  return dl::CudaCheck(*cuda_, cuda_->cudaMemcpy(data() + offset, tmp.data(), size, dl::cudaMemcpyHostToDevice),
                       "cudaMemcpy (pattern to GPU)");
}

Status Region::Set(uint64_t offset, uint64_t size, uint8_t value) {
  if (!gpu_) {
    std::memset(data() + offset, value, size);
    return Status::Ok();
  }
  return dl::CudaCheck(*cuda_, cuda_->cudaMemset(data() + offset, value, size), "cudaMemset");
}

Result<std::optional<std::string>> Region::Check(uint64_t offset, uint64_t size, uint32_t seed, int qp) const {
  const uint8_t* p = data() + offset;
  std::vector<uint8_t> tmp;
  if (gpu_) {
    tmp.resize(size);
    RETURN_IF_ERROR(dl::CudaCheck(*cuda_, cuda_->cudaMemcpy(tmp.data(), p, size, dl::cudaMemcpyDeviceToHost),
                                  "cudaMemcpy (GPU buffer to check)"));
    p = tmp.data();
  }
  auto m = CheckPattern(p, size, seed, qp);
  if (!m) return std::optional<std::string>();
  return std::optional<std::string>(
      fmt::format("byte {}: got 0x{:02x} want 0x{:02x}", m->offset, m->got, m->want));
}

}  // namespace fabcheck::perf::verbs
