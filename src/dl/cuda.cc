#include "dl/cuda.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <mutex>
#include <utility>
#include <vector>

namespace fabcheck::dl {
namespace {

constexpr char kCudartHint[] =
    "install the CUDA runtime (Debian/Ubuntu: apt-get install libcudart12, or the CUDA toolkit), add its "
    "directory to LD_LIBRARY_PATH, or point FABCHECK_CUDART at libcudart.so";
constexpr int kMinRuntimeVersion = 11000;

std::vector<std::string> CudartNames() {
  std::vector<std::string> names;
  if (const char* env = std::getenv("FABCHECK_CUDART"); env != nullptr && *env != '\0') names.push_back(env);
  for (const char* dir : {"", "/usr/local/cuda/lib64/"}) {
    for (const char* name : {"libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0", "libcudart.so"}) {
      names.push_back(std::string(dir) + name);
    }
  }
  return names;
}

Status LoadRuntimeSymbols(const Library& lib, CudaApi* api) {
#define FABCHECK_LOAD(name) RETURN_IF_ERROR(lib.Load(#name, &api->name))
  FABCHECK_LOAD(cudaRuntimeGetVersion);
  FABCHECK_LOAD(cudaDriverGetVersion);
  FABCHECK_LOAD(cudaGetErrorString);
  FABCHECK_LOAD(cudaGetErrorName);
  FABCHECK_LOAD(cudaGetLastError);
  FABCHECK_LOAD(cudaGetDeviceCount);
  FABCHECK_LOAD(cudaSetDevice);
  FABCHECK_LOAD(cudaGetDevice);
  FABCHECK_LOAD(cudaDeviceGetPCIBusId);
  FABCHECK_LOAD(cudaDeviceGetAttribute);
  FABCHECK_LOAD(cudaDeviceSynchronize);
  FABCHECK_LOAD(cudaDeviceCanAccessPeer);
  FABCHECK_LOAD(cudaDeviceEnablePeerAccess);
  FABCHECK_LOAD(cudaMalloc);
  FABCHECK_LOAD(cudaFree);
  FABCHECK_LOAD(cudaMallocHost);
  FABCHECK_LOAD(cudaHostAlloc);
  FABCHECK_LOAD(cudaFreeHost);
  FABCHECK_LOAD(cudaHostRegister);
  FABCHECK_LOAD(cudaHostUnregister);
  FABCHECK_LOAD(cudaMemGetInfo);
  FABCHECK_LOAD(cudaMemcpy);
  FABCHECK_LOAD(cudaMemcpyAsync);
  FABCHECK_LOAD(cudaMemcpyPeerAsync);
  FABCHECK_LOAD(cudaMemset);
  FABCHECK_LOAD(cudaMemsetAsync);
  FABCHECK_LOAD(cudaStreamCreate);
  FABCHECK_LOAD(cudaStreamCreateWithFlags);
  FABCHECK_LOAD(cudaStreamDestroy);
  FABCHECK_LOAD(cudaStreamSynchronize);
  FABCHECK_LOAD(cudaStreamQuery);
  FABCHECK_LOAD(cudaEventCreate);
  FABCHECK_LOAD(cudaEventCreateWithFlags);
  FABCHECK_LOAD(cudaEventDestroy);
  FABCHECK_LOAD(cudaEventRecord);
  FABCHECK_LOAD(cudaEventSynchronize);
  FABCHECK_LOAD(cudaEventElapsedTime);
#undef FABCHECK_LOAD
  return Status::Ok();
}

// libcuda is optional: only the dma-buf export and device names need it.
void LoadDriver(CudaApi* api) {
  auto lib = Library::Open({"libcuda.so.1", "libcuda.so"}, "the NVIDIA driver's libcuda.so.1");
  if (!lib.ok()) return;
  const Library& l = **lib;
  if (!l.Load("cuInit", &api->cuInit).ok() || !l.Load("cuDeviceGet", &api->cuDeviceGet).ok() ||
      !l.Load("cuDeviceGetName", &api->cuDeviceGetName).ok() ||
      !l.Load("cuDeviceGetAttribute", &api->cuDeviceGetAttribute).ok() ||
      !l.Load("cuGetErrorString", &api->cuGetErrorString).ok()) {
    api->cuInit = nullptr;
    return;
  }
  l.LoadOptional("cuMemGetHandleForAddressRange", &api->cuMemGetHandleForAddressRange);
  if (api->cuInit(0) != CUDA_SUCCESS) {
    api->cuInit = nullptr;
    return;
  }
  api->driver = std::move(lib).value();
}

Result<std::unique_ptr<CudaApi>> LoadOnce() {
  ASSIGN_OR_RETURN(auto lib, Library::Open(CudartNames(), kCudartHint));
  auto api = std::make_unique<CudaApi>();
  RETURN_IF_ERROR(LoadRuntimeSymbols(*lib, api.get()));
  api->runtime = std::move(lib);
  // Version first: everything below assumes the CUDA 11+ ABI.
  if (api->cudaRuntimeGetVersion(&api->runtime_version) != cudaSuccess ||
      api->runtime_version < kMinRuntimeVersion) {
    return FailedPreconditionError(fmt::format("{} is CUDA {}; fabcheck needs CUDA 11.0 or newer ({})",
                                               api->runtime->path(), CudaVersionString(api->runtime_version),
                                               kCudartHint));
  }
  if (api->cudaDriverGetVersion(&api->driver_version) != cudaSuccess || api->driver_version == 0) {
    return UnavailableError(fmt::format(
        "CUDA runtime {} loaded from {}, but no NVIDIA driver answers (is the nvidia kernel module loaded and "
        "/dev/nvidia* visible? try: nvidia-smi)",
        CudaVersionString(api->runtime_version), api->runtime->path()));
  }
  // A runtime newer than the driver fails every call with
  // cudaErrorInsufficientDriver; say so once, up front.
  if (api->driver_version < api->runtime_version && api->runtime_version / 1000 > api->driver_version / 1000) {
    return FailedPreconditionError(fmt::format(
        "{} is CUDA {} but the NVIDIA driver supports only CUDA {} (upgrade the driver, or use a CUDA {} runtime "
        "through FABCHECK_CUDART)",
        api->runtime->path(), CudaVersionString(api->runtime_version), CudaVersionString(api->driver_version),
        api->driver_version / 1000));
  }
  LoadDriver(api.get());
  return api;
}

}  // namespace

std::string CudaVersionString(int version) { return fmt::format("{}.{}", version / 1000, (version % 1000) / 10); }

Result<const CudaApi*> LoadCuda() {
  static std::once_flag once;
  static Result<std::unique_ptr<CudaApi>>* loaded = nullptr;
  std::call_once(once, [] { loaded = new Result<std::unique_ptr<CudaApi>>(LoadOnce()); });
  if (!loaded->ok()) return loaded->status();
  return static_cast<const CudaApi*>(loaded->value().get());
}

Status CudaCheck(const CudaApi& api, cudaError_t err, std::string_view what) {
  if (err == cudaSuccess) return Status::Ok();
  const char* name = api.cudaGetErrorName ? api.cudaGetErrorName(err) : nullptr;
  const char* text = api.cudaGetErrorString ? api.cudaGetErrorString(err) : nullptr;
  std::string message = fmt::format("{}: {} ({})", what, name ? name : fmt::format("cudaError {}", err),
                                    text ? text : "no description");
  switch (err) {
    case 2:  // cudaErrorMemoryAllocation
      return ResourceExhaustedError(message + " (free GPU memory, or use smaller sizes)");
    case cudaErrorNoDevice:
      return UnavailableError(message + " (no GPU visible: check CUDA_VISIBLE_DEVICES and nvidia-smi)");
    case cudaErrorInsufficientDriver:
      return FailedPreconditionError(message + " (the NVIDIA driver is older than the CUDA runtime)");
    case 101:  // cudaErrorInvalidDevice
      return InvalidArgumentError(message + " (list the GPUs with nvidia-smi -L)");
    default:
      return InternalError(message);
  }
}

Result<std::string> CudaPciBusId(const CudaApi& api, int device) {
  char buffer[64] = {};
  RETURN_IF_ERROR(CudaCheck(api, api.cudaDeviceGetPCIBusId(buffer, sizeof(buffer), device),
                            fmt::format("cudaDeviceGetPCIBusId(GPU {})", device)));
  // CUDA prints "0000:18:00.0" (sometimes with an 8-digit domain, upper case).
  std::string id(buffer);
  std::transform(id.begin(), id.end(), id.begin(), [](unsigned char c) { return std::tolower(c); });
  if (auto colon = id.find(':'); colon != std::string::npos && colon > 4) id = id.substr(colon - 4);
  return id;
}

std::string CudaDeviceName(const CudaApi& api, int device) {
  if (api.cuDeviceGet != nullptr && api.cuInit != nullptr) {
    CUdevice dev = 0;
    char name[256] = {};
    if (api.cuDeviceGet(&dev, device) == CUDA_SUCCESS && api.cuDeviceGetName(name, sizeof(name), dev) == CUDA_SUCCESS) {
      return name;
    }
  }
  return fmt::format("GPU {}", device);
}

Result<int> CudaExportDmaBuf(const CudaApi& api, int device, const void* ptr, size_t size) {
  if (api.cuInit == nullptr) {
    return UnavailableError("dma-buf export needs libcuda.so.1 (the NVIDIA driver library), which did not load");
  }
  if (api.cuMemGetHandleForAddressRange == nullptr) {
    return UnavailableError("cuMemGetHandleForAddressRange is missing: the NVIDIA driver is older than CUDA 11.7 "
                            "(upgrade the driver, or use nvidia-peermem instead of dma-buf)");
  }
  CUdevice dev = 0;
  int supported = 0;
  if (api.cuDeviceGet(&dev, device) != CUDA_SUCCESS ||
      api.cuDeviceGetAttribute(&supported, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, dev) != CUDA_SUCCESS ||
      supported == 0) {
    return UnavailableError(fmt::format(
        "GPU {} does not support dma-buf export (needs the open NVIDIA kernel modules, a 5.12+ kernel and a "
        "data-center GPU; or use nvidia-peermem)",
        device));
  }
  int fd = -1;
  CUresult rc = api.cuMemGetHandleForAddressRange(&fd, reinterpret_cast<CUdeviceptr>(ptr), size,
                                                  CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
  if (rc != CUDA_SUCCESS) {
    const char* text = nullptr;
    api.cuGetErrorString(rc, &text);
    return UnavailableError(fmt::format("cuMemGetHandleForAddressRange(GPU {}, {} bytes): CUresult {} ({}) "
                                        "(address and size must be page aligned)",
                                        device, size, rc, text ? text : "unknown"));
  }
  return fd;
}

// ---- DeviceBuffer ----

Result<DeviceBuffer> DeviceBuffer::Allocate(const CudaApi& api, int device, size_t bytes) {
  RETURN_IF_ERROR(CudaCheck(api, api.cudaSetDevice(device), fmt::format("cudaSetDevice({})", device)));
  void* ptr = nullptr;
  RETURN_IF_ERROR(
      CudaCheck(api, api.cudaMalloc(&ptr, bytes), fmt::format("cudaMalloc({} bytes) on GPU {}", bytes, device)));
  DeviceBuffer buffer;
  buffer.api_ = &api;
  buffer.ptr_ = ptr;
  buffer.size_ = bytes;
  buffer.device_ = device;
  return buffer;
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    Reset();
    api_ = std::exchange(other.api_, nullptr);
    ptr_ = std::exchange(other.ptr_, nullptr);
    size_ = std::exchange(other.size_, 0);
    device_ = std::exchange(other.device_, -1);
  }
  return *this;
}

void DeviceBuffer::Reset() {
  if (ptr_ != nullptr && api_ != nullptr) {
    api_->cudaSetDevice(device_);
    api_->cudaFree(ptr_);
  }
  ptr_ = nullptr;
  size_ = 0;
}

// ---- HostBuffer ----

Result<HostBuffer> HostBuffer::Allocate(const CudaApi& api, size_t bytes) {
  void* ptr = nullptr;
  RETURN_IF_ERROR(CudaCheck(api, api.cudaHostAlloc(&ptr, bytes, cudaHostAllocPortable),
                            fmt::format("cudaHostAlloc({} bytes, pinned)", bytes)));
  HostBuffer buffer;
  buffer.api_ = &api;
  buffer.ptr_ = ptr;
  buffer.size_ = bytes;
  return buffer;
}

Result<HostBuffer> HostBuffer::Register(const CudaApi& api, void* ptr, size_t bytes) {
  RETURN_IF_ERROR(CudaCheck(api, api.cudaHostRegister(ptr, bytes, cudaHostRegisterPortable),
                            fmt::format("cudaHostRegister({} bytes) (is ulimit -l large enough?)", bytes)));
  HostBuffer buffer;
  buffer.api_ = &api;
  buffer.ptr_ = ptr;
  buffer.size_ = bytes;
  buffer.registered_ = true;
  return buffer;
}

HostBuffer& HostBuffer::operator=(HostBuffer&& other) noexcept {
  if (this != &other) {
    Reset();
    api_ = std::exchange(other.api_, nullptr);
    ptr_ = std::exchange(other.ptr_, nullptr);
    size_ = std::exchange(other.size_, 0);
    registered_ = std::exchange(other.registered_, false);
  }
  return *this;
}

void HostBuffer::Reset() {
  if (ptr_ != nullptr && api_ != nullptr) {
    if (registered_) {
      api_->cudaHostUnregister(ptr_);
    } else {
      api_->cudaFreeHost(ptr_);
    }
  }
  ptr_ = nullptr;
  size_ = 0;
  registered_ = false;
}

// ---- Stream ----

Result<Stream> Stream::Create(const CudaApi& api, int device) {
  RETURN_IF_ERROR(CudaCheck(api, api.cudaSetDevice(device), fmt::format("cudaSetDevice({})", device)));
  cudaStream_t stream = nullptr;
  RETURN_IF_ERROR(CudaCheck(api, api.cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
                            fmt::format("cudaStreamCreate on GPU {}", device)));
  Stream s;
  s.api_ = &api;
  s.stream_ = stream;
  return s;
}

Stream& Stream::operator=(Stream&& other) noexcept {
  if (this != &other) {
    Reset();
    api_ = std::exchange(other.api_, nullptr);
    stream_ = std::exchange(other.stream_, nullptr);
  }
  return *this;
}

Status Stream::Synchronize() const { return CudaCheck(*api_, api_->cudaStreamSynchronize(stream_), "cudaStreamSynchronize"); }

void Stream::Reset() {
  if (stream_ != nullptr && api_ != nullptr) api_->cudaStreamDestroy(stream_);
  stream_ = nullptr;
}

// ---- Event ----

Result<Event> Event::Create(const CudaApi& api, int device) {
  RETURN_IF_ERROR(CudaCheck(api, api.cudaSetDevice(device), fmt::format("cudaSetDevice({})", device)));
  cudaEvent_t event = nullptr;
  RETURN_IF_ERROR(
      CudaCheck(api, api.cudaEventCreateWithFlags(&event, cudaEventDefault), fmt::format("cudaEventCreate on GPU {}", device)));
  Event e;
  e.api_ = &api;
  e.event_ = event;
  return e;
}

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    Reset();
    api_ = std::exchange(other.api_, nullptr);
    event_ = std::exchange(other.event_, nullptr);
  }
  return *this;
}

Status Event::Record(cudaStream_t stream) const {
  return CudaCheck(*api_, api_->cudaEventRecord(event_, stream), "cudaEventRecord");
}

Result<double> Event::SecondsSince(const Event& start) const {
  RETURN_IF_ERROR(CudaCheck(*api_, api_->cudaEventSynchronize(event_), "cudaEventSynchronize"));
  float ms = 0;
  RETURN_IF_ERROR(CudaCheck(*api_, api_->cudaEventElapsedTime(&ms, start.event_, event_), "cudaEventElapsedTime"));
  return ms / 1e3;
}

void Event::Reset() {
  if (event_ != nullptr && api_ != nullptr) api_->cudaEventDestroy(event_);
  event_ = nullptr;
}

}  // namespace fabcheck::dl
