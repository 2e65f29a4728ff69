// NVML behind a function table, loaded at run time (libnvidia-ml.so.1).
//
// fabcheck uses NVML only to name GPUs it already found in sysfs: model name
// and UUID, looked up by PCI bus id. A node without the library (CPU-only
// machines, CI) gets Unavailable, which callers treat as "fields unknown".
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "dl/library.h"

namespace fabcheck::dl {

// The few NVML types fabcheck needs, declared here so no NVML header is
// required to build (values from nvml.h: NVML_SUCCESS = 0).
using NvmlReturn = int;
using NvmlDevice = struct NvmlDeviceOpaque*;
inline constexpr NvmlReturn kNvmlSuccess = 0;
inline constexpr unsigned kNvmlNameBufferSize = 96;   // NVML_DEVICE_NAME_V2_BUFFER_SIZE
inline constexpr unsigned kNvmlUuidBufferSize = 96;   // larger than NVML_DEVICE_UUID_V2_BUFFER_SIZE (96)
inline constexpr unsigned kNvmlVersionBufferSize = 80;  // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE

struct NvmlApi {
  NvmlReturn (*nvmlInit_v2)() = nullptr;
  NvmlReturn (*nvmlShutdown)() = nullptr;
  const char* (*nvmlErrorString)(NvmlReturn) = nullptr;
  NvmlReturn (*nvmlDeviceGetHandleByPciBusId_v2)(const char* bus_id, NvmlDevice* device) = nullptr;
  NvmlReturn (*nvmlDeviceGetName)(NvmlDevice device, char* name, unsigned length) = nullptr;
  NvmlReturn (*nvmlDeviceGetUUID)(NvmlDevice device, char* uuid, unsigned length) = nullptr;
  // Optional (absent in very old drivers).
  NvmlReturn (*nvmlSystemGetDriverVersion)(char* version, unsigned length) = nullptr;
  std::shared_ptr<Library> library;
};

// Loads libnvidia-ml once and caches the table (or the error).
Result<const NvmlApi*> LoadNvml();

struct NvmlGpu {
  std::string bus_id;  // as asked: "0000:18:00.0"
  std::string name;    // "NVIDIA H200"
  std::string uuid;    // "GPU-6f0c..."
};

struct NvmlReport {
  std::string library_path;
  std::string driver_version;
  std::vector<NvmlGpu> gpus;  // the bus ids NVML knew, in the order asked
};

// Initialises NVML, names the GPUs at `bus_ids` (sysfs form, lower case),
// shuts NVML down. Unavailable when the library is missing or nvmlInit fails
// (no driver); a bus id NVML does not know is just left out.
Result<NvmlReport> QueryNvmlGpus(const std::vector<std::string>& bus_ids);

}  // namespace fabcheck::dl
