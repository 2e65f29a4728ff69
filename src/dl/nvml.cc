#include "dl/nvml.h"

#include <mutex>

namespace fabcheck::dl {
namespace {

Result<NvmlApi> Bind() {
  ASSIGN_OR_RETURN(auto library,
                   Library::Open({"libnvidia-ml.so.1", "libnvidia-ml.so"},
                                 "install the NVIDIA driver, or run where it is installed; GPU names and UUIDs "
                                 "stay unknown without it"));
  NvmlApi api;
  RETURN_IF_ERROR(library->Load("nvmlInit_v2", &api.nvmlInit_v2));
  RETURN_IF_ERROR(library->Load("nvmlShutdown", &api.nvmlShutdown));
  RETURN_IF_ERROR(library->Load("nvmlErrorString", &api.nvmlErrorString));
  RETURN_IF_ERROR(library->Load("nvmlDeviceGetHandleByPciBusId_v2", &api.nvmlDeviceGetHandleByPciBusId_v2));
  RETURN_IF_ERROR(library->Load("nvmlDeviceGetName", &api.nvmlDeviceGetName));
  RETURN_IF_ERROR(library->Load("nvmlDeviceGetUUID", &api.nvmlDeviceGetUUID));
  library->LoadOptional("nvmlSystemGetDriverVersion", &api.nvmlSystemGetDriverVersion);
  api.library = std::move(library);
  return api;
}

std::string NvmlError(const NvmlApi& api, NvmlReturn rc) {
  const char* text = api.nvmlErrorString ? api.nvmlErrorString(rc) : nullptr;
  return text ? std::string(text) : "NVML error " + std::to_string(rc);
}

}  // namespace

Result<const NvmlApi*> LoadNvml() {
  static std::once_flag once;
  static Result<NvmlApi>* cached = nullptr;
  std::call_once(once, [] { cached = new Result<NvmlApi>(Bind()); });
  if (!cached->ok()) return cached->status();
  return &cached->value();
}

Result<NvmlReport> QueryNvmlGpus(const std::vector<std::string>& bus_ids) {
  ASSIGN_OR_RETURN(const NvmlApi* api, LoadNvml());
  NvmlReturn rc = api->nvmlInit_v2();
  if (rc != kNvmlSuccess) {
    return UnavailableError("nvmlInit failed: " + NvmlError(*api, rc) + " (is the NVIDIA driver loaded? try nvidia-smi)");
  }
  NvmlReport report;
  report.library_path = api->library->path();
  if (api->nvmlSystemGetDriverVersion) {
    char version[kNvmlVersionBufferSize] = {};
    if (api->nvmlSystemGetDriverVersion(version, sizeof(version)) == kNvmlSuccess) report.driver_version = version;
  }
  for (const auto& bus_id : bus_ids) {
    NvmlDevice device = nullptr;
    if (api->nvmlDeviceGetHandleByPciBusId_v2(bus_id.c_str(), &device) != kNvmlSuccess) continue;
    NvmlGpu gpu;
    gpu.bus_id = bus_id;
    char name[kNvmlNameBufferSize] = {};
    if (api->nvmlDeviceGetName(device, name, sizeof(name)) == kNvmlSuccess) gpu.name = name;
    char uuid[kNvmlUuidBufferSize] = {};
    if (api->nvmlDeviceGetUUID(device, uuid, sizeof(uuid)) == kNvmlSuccess) gpu.uuid = uuid;
    report.gpus.push_back(std::move(gpu));
  }
  api->nvmlShutdown();
  return report;
}

}  // namespace fabcheck::dl
