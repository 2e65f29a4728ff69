#include "dl/nccl.h"

#include <fmt/format.h>

#include <cstdlib>
#include <mutex>
#include <utility>
#include <vector>

namespace fabcheck::dl {
namespace {

constexpr char kNcclHint[] =
    "install NCCL (Debian/Ubuntu with NVIDIA's repository: apt-get install libnccl2), add its directory to "
    "LD_LIBRARY_PATH, or point FABCHECK_NCCL at libnccl.so.2";
constexpr int kMinVersion = 21200;

std::vector<std::string> NcclNames() {
  std::vector<std::string> names;
  if (const char* env = std::getenv("FABCHECK_NCCL"); env != nullptr && *env != '\0') names.push_back(env);
  for (const char* dir : {"", "/usr/local/cuda/lib64/", "/usr/local/cuda/lib/"}) {
    for (const char* name : {"libnccl.so.2", "libnccl.so"}) names.push_back(std::string(dir) + name);
  }
  return names;
}

Result<std::unique_ptr<NcclApi>> LoadOnce() {
  ASSIGN_OR_RETURN(auto lib, Library::Open(NcclNames(), kNcclHint));
  auto api = std::make_unique<NcclApi>();
  const Library& l = *lib;
  // Version first: the rest of the table assumes a recent ABI.
  RETURN_IF_ERROR(l.Load("ncclGetVersion", &api->ncclGetVersion));
  if (api->ncclGetVersion(&api->version) != ncclSuccess || api->version < kMinVersion) {
    return FailedPreconditionError(fmt::format("{} is NCCL {}; fabcheck needs NCCL 2.12 or newer ({})", l.path(),
                                               NcclVersionString(api->version), kNcclHint));
  }
#define FABCHECK_LOAD(name) RETURN_IF_ERROR(l.Load(#name, &api->name))
  FABCHECK_LOAD(ncclGetErrorString);
  FABCHECK_LOAD(ncclGetUniqueId);
  FABCHECK_LOAD(ncclCommInitRank);
  FABCHECK_LOAD(ncclCommInitAll);
  FABCHECK_LOAD(ncclCommDestroy);
  FABCHECK_LOAD(ncclCommAbort);
  FABCHECK_LOAD(ncclCommGetAsyncError);
  FABCHECK_LOAD(ncclCommCount);
  FABCHECK_LOAD(ncclCommCuDevice);
  FABCHECK_LOAD(ncclCommUserRank);
  FABCHECK_LOAD(ncclAllReduce);
  FABCHECK_LOAD(ncclBroadcast);
  FABCHECK_LOAD(ncclReduce);
  FABCHECK_LOAD(ncclAllGather);
  FABCHECK_LOAD(ncclReduceScatter);
  FABCHECK_LOAD(ncclSend);
  FABCHECK_LOAD(ncclRecv);
  FABCHECK_LOAD(ncclGroupStart);
  FABCHECK_LOAD(ncclGroupEnd);
#undef FABCHECK_LOAD
  l.LoadOptional("ncclGetLastError", &api->ncclGetLastError);
  l.LoadOptional("ncclAlltoAll", &api->ncclAlltoAll);
  api->library = std::move(lib);
  return api;
}

}  // namespace

std::string NcclVersionString(int version) {
  // Since 2.9 the code is major*10000 + minor*100 + patch; before, *1000/*100.
  if (version >= 20900) return fmt::format("{}.{}.{}", version / 10000, (version % 10000) / 100, version % 100);
  return fmt::format("{}.{}.{}", version / 1000, (version % 1000) / 100, version % 100);
}

Result<const NcclApi*> LoadNccl() {
  static std::once_flag once;
  static Result<std::unique_ptr<NcclApi>>* loaded = nullptr;
  std::call_once(once, [] { loaded = new Result<std::unique_ptr<NcclApi>>(LoadOnce()); });
  if (!loaded->ok()) return loaded->status();
  return static_cast<const NcclApi*>(loaded->value().get());
}

Status NcclCheck(const NcclApi& api, ncclResult_t result, std::string_view what, ncclComm_t comm) {
  if (result == ncclSuccess) return Status::Ok();
  std::string message = fmt::format("{}: NCCL error {} ({})", what, result,
                                    api.ncclGetErrorString ? api.ncclGetErrorString(result) : "unknown");
  if (api.ncclGetLastError != nullptr) {
    const char* last = api.ncclGetLastError(comm);
    if (last != nullptr && *last != '\0') message += fmt::format(": {}", last);
  }
  message += " (rerun with NCCL_DEBUG=INFO, or read the NCCL log fabcheck saved)";
  switch (result) {
    case 1:  // ncclUnhandledCudaError
    case 2:  // ncclSystemError
    case 6:  // ncclRemoteError
      return UnavailableError(message);
    case 4:  // ncclInvalidArgument
    case 5:  // ncclInvalidUsage
      // NCCL's arguments come from fabcheck and the environment (a bad
      // NCCL_SOCKET_IFNAME gives ncclInvalidArgument): the job could not run,
      // which is no usage error of fabcheck's command line (exit 3, not 64).
      return FailedPreconditionError(message);
    default:
      return InternalError(message);
  }
}

size_t NcclTypeSize(ncclDataType_t type) {
  switch (type) {
    case ncclInt8:
    case ncclUint8:
    case ncclFloat8e4m3:
    case ncclFloat8e5m2:
      return 1;
    case ncclFloat16:
    case ncclBfloat16:
      return 2;
    case ncclInt32:
    case ncclUint32:
    case ncclFloat32:
      return 4;
    case ncclInt64:
    case ncclUint64:
    case ncclFloat64:
      return 8;
  }
  return 0;
}

NcclComm& NcclComm::operator=(NcclComm&& other) noexcept {
  if (this != &other) {
    Reset();
    api_ = std::exchange(other.api_, nullptr);
    comm_ = std::exchange(other.comm_, nullptr);
    failed_ = std::exchange(other.failed_, false);
  }
  return *this;
}

void NcclComm::Reset() {
  if (comm_ != nullptr && api_ != nullptr) {
    if (failed_) {
      api_->ncclCommAbort(comm_);
    } else {
      api_->ncclCommDestroy(comm_);
    }
  }
  comm_ = nullptr;
}

}  // namespace fabcheck::dl
