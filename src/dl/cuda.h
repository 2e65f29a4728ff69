// The CUDA runtime (libcudart) and the few driver (libcuda) entry points
// fabcheck needs, loaded at run time behind function tables.
//
// No CUDA header exists on the build machines, so the types and prototypes
// below are declared here, with the values of CUDA's own headers (stable ABI
// since CUDA 11). Only what fabcheck calls is declared.
//
//   ASSIGN_OR_RETURN(const dl::CudaApi* cuda, dl::LoadCuda());
//   ASSIGN_OR_RETURN(auto buffer, dl::DeviceBuffer::Allocate(*cuda, 0, 1 << 30));
//   RETURN_IF_ERROR(dl::CudaCheck(*cuda, cuda->cudaMemset(buffer.get(), 0, buffer.size()), "cudaMemset"));
//
// Library names tried: $FABCHECK_CUDART (a path) first, then libcudart.so.13,
// .12, .11.0, libcudart.so, and the same under /usr/local/cuda/lib64.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"
#include "dl/library.h"

namespace fabcheck::dl {

// ---- CUDA runtime types (driver_types.h) ----
using cudaError_t = int;
inline constexpr cudaError_t cudaSuccess = 0;
inline constexpr cudaError_t cudaErrorNoDevice = 100;
inline constexpr cudaError_t cudaErrorInsufficientDriver = 35;
inline constexpr cudaError_t cudaErrorPeerAccessAlreadyEnabled = 704;

using cudaStream_t = struct CUstream_st*;
using cudaEvent_t = struct CUevent_st*;

enum cudaMemcpyKind : int {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4,
};

inline constexpr unsigned cudaStreamNonBlocking = 0x01;
inline constexpr unsigned cudaEventDefault = 0x00;
inline constexpr unsigned cudaHostRegisterDefault = 0x00;
inline constexpr unsigned cudaHostRegisterPortable = 0x01;
inline constexpr unsigned cudaHostAllocDefault = 0x00;
inline constexpr unsigned cudaHostAllocPortable = 0x01;

// cudaDeviceAttr values used by fabcheck.
enum cudaDeviceAttr : int {
  cudaDevAttrMultiProcessorCount = 16,
  cudaDevAttrPciBusId = 33,
  cudaDevAttrPciDeviceId = 34,
  cudaDevAttrPciDomainId = 50,
  cudaDevAttrComputeCapabilityMajor = 75,
  cudaDevAttrComputeCapabilityMinor = 76,
};

// ---- CUDA driver types (cuda.h) ----
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
inline constexpr CUresult CUDA_SUCCESS = 0;
inline constexpr int CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED = 124;
inline constexpr int CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD = 0x1;

struct CudaApi {
  std::shared_ptr<Library> runtime;  // libcudart
  std::shared_ptr<Library> driver;   // libcuda; null when it could not be loaded
  int runtime_version = 0;           // 12040 = 12.4
  int driver_version = 0;            // the CUDA version the driver supports (0 without a driver)

  // Runtime.
  cudaError_t (*cudaRuntimeGetVersion)(int*);
  cudaError_t (*cudaDriverGetVersion)(int*);
  const char* (*cudaGetErrorString)(cudaError_t);
  const char* (*cudaGetErrorName)(cudaError_t);
  cudaError_t (*cudaGetLastError)();
  cudaError_t (*cudaGetDeviceCount)(int*);
  cudaError_t (*cudaSetDevice)(int);
  cudaError_t (*cudaGetDevice)(int*);
  cudaError_t (*cudaDeviceGetPCIBusId)(char*, int, int);
  cudaError_t (*cudaDeviceGetAttribute)(int*, cudaDeviceAttr, int);
  cudaError_t (*cudaDeviceSynchronize)();
  cudaError_t (*cudaDeviceCanAccessPeer)(int*, int, int);
  cudaError_t (*cudaDeviceEnablePeerAccess)(int, unsigned);
  cudaError_t (*cudaMalloc)(void**, size_t);
  cudaError_t (*cudaFree)(void*);
  cudaError_t (*cudaMallocHost)(void**, size_t);
  cudaError_t (*cudaHostAlloc)(void**, size_t, unsigned);
  cudaError_t (*cudaFreeHost)(void*);
  cudaError_t (*cudaHostRegister)(void*, size_t, unsigned);
  cudaError_t (*cudaHostUnregister)(void*);
  cudaError_t (*cudaMemGetInfo)(size_t*, size_t*);
  cudaError_t (*cudaMemcpy)(void*, const void*, size_t, cudaMemcpyKind);
  cudaError_t (*cudaMemcpyAsync)(void*, const void*, size_t, cudaMemcpyKind, cudaStream_t);
  cudaError_t (*cudaMemcpyPeerAsync)(void*, int, const void*, int, size_t, cudaStream_t);
  cudaError_t (*cudaMemset)(void*, int, size_t);
  cudaError_t (*cudaMemsetAsync)(void*, int, size_t, cudaStream_t);
  cudaError_t (*cudaStreamCreate)(cudaStream_t*);
  cudaError_t (*cudaStreamCreateWithFlags)(cudaStream_t*, unsigned);
  cudaError_t (*cudaStreamDestroy)(cudaStream_t);
  cudaError_t (*cudaStreamSynchronize)(cudaStream_t);
  cudaError_t (*cudaStreamQuery)(cudaStream_t);
  cudaError_t (*cudaEventCreate)(cudaEvent_t*);
  cudaError_t (*cudaEventCreateWithFlags)(cudaEvent_t*, unsigned);
  cudaError_t (*cudaEventDestroy)(cudaEvent_t);
  cudaError_t (*cudaEventRecord)(cudaEvent_t, cudaStream_t);
  cudaError_t (*cudaEventSynchronize)(cudaEvent_t);
  cudaError_t (*cudaEventElapsedTime)(float*, cudaEvent_t, cudaEvent_t);

  // Driver (all null when libcuda could not be loaded; check before use).
  CUresult (*cuInit)(unsigned) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice*, int) = nullptr;
  CUresult (*cuDeviceGetName)(char*, int, CUdevice) = nullptr;
  CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice) = nullptr;
  CUresult (*cuGetErrorString)(CUresult, const char**) = nullptr;
  // CUDA 11.7+ drivers; null on older ones.
  CUresult (*cuMemGetHandleForAddressRange)(void*, CUdeviceptr, size_t, int, unsigned long long) = nullptr;
};

// Loads libcudart (and libcuda) once and caches the table. Checks the runtime
// version first (>= 11.0) and that a driver is present and new enough for it.
Result<const CudaApi*> LoadCuda();

// "12.4" from 12040.
std::string CudaVersionString(int version);

// Ok for cudaSuccess; otherwise Internal (Unavailable for no device / old
// driver, ResourceExhausted for out of memory) with
// "<what>: cudaErrorMemoryAllocation (out of memory)".
Status CudaCheck(const CudaApi& api, cudaError_t err, std::string_view what);

// The PCI bus id of a CUDA device in sysfs form ("0000:18:00.0", lower case).
Result<std::string> CudaPciBusId(const CudaApi& api, int device);
// "NVIDIA H200" (through the driver; "GPU <n>" when libcuda is absent).
std::string CudaDeviceName(const CudaApi& api, int device);

// Exports [ptr, ptr + size) of device memory as a dma-buf file descriptor (for
// ibv_reg_dmabuf_mr). Unavailable when the driver or device cannot.
// `ptr` and `size` must be aligned to the host page size.
Result<int> CudaExportDmaBuf(const CudaApi& api, int device, const void* ptr, size_t size);

// ---- RAII owners. Each remembers its device and frees on it. ----

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  static Result<DeviceBuffer> Allocate(const CudaApi& api, int device, size_t bytes);
  ~DeviceBuffer() { Reset(); }
  DeviceBuffer(DeviceBuffer&& other) noexcept { *this = std::move(other); }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* get() const { return ptr_; }
  size_t size() const { return size_; }
  int device() const { return device_; }
  void Reset();

 private:
  const CudaApi* api_ = nullptr;
  void* ptr_ = nullptr;
  size_t size_ = 0;
  int device_ = -1;
};

// Pinned host memory: cudaHostAlloc (portable), or host memory the caller
// owns registered with cudaHostRegister (to place it on a NUMA node first).
class HostBuffer {
 public:
  HostBuffer() = default;
  static Result<HostBuffer> Allocate(const CudaApi& api, size_t bytes);
  // Registers [ptr, ptr + bytes) (portable); unregisters on destruction, never frees.
  static Result<HostBuffer> Register(const CudaApi& api, void* ptr, size_t bytes);
  ~HostBuffer() { Reset(); }
  HostBuffer(HostBuffer&& other) noexcept { *this = std::move(other); }
  HostBuffer& operator=(HostBuffer&& other) noexcept;
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;

  void* get() const { return ptr_; }
  size_t size() const { return size_; }
  void Reset();

 private:
  const CudaApi* api_ = nullptr;
  void* ptr_ = nullptr;
  size_t size_ = 0;
  bool registered_ = false;
};

class Stream {
 public:
  Stream() = default;
  // A non-blocking stream on `device` (made current).
  static Result<Stream> Create(const CudaApi& api, int device);
  ~Stream() { Reset(); }
  Stream(Stream&& other) noexcept { *this = std::move(other); }
  Stream& operator=(Stream&& other) noexcept;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  cudaStream_t get() const { return stream_; }
  Status Synchronize() const;
  void Reset();

 private:
  const CudaApi* api_ = nullptr;
  cudaStream_t stream_ = nullptr;
};

class Event {
 public:
  Event() = default;
  static Result<Event> Create(const CudaApi& api, int device);
  ~Event() { Reset(); }
  Event(Event&& other) noexcept { *this = std::move(other); }
  Event& operator=(Event&& other) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  cudaEvent_t get() const { return event_; }
  Status Record(cudaStream_t stream) const;
  // Seconds from `start` to this event (both recorded and complete).
  Result<double> SecondsSince(const Event& start) const;
  void Reset();

 private:
  const CudaApi* api_ = nullptr;
  cudaEvent_t event_ = nullptr;
};

}  // namespace fabcheck::dl
