// NCCL (libnccl.so.2) loaded at run time behind a function table.
//
// No NCCL header exists on the build machines, so the few types and
// prototypes fabcheck calls are declared here with nccl.h's values (stable
// since NCCL 2.7; fp8 types since 2.24).
//
// Library names tried: $FABCHECK_NCCL (a path) first, then libnccl.so.2 and
// libnccl.so, then the same under /usr/local/cuda/lib64.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"
#include "dl/cuda.h"
#include "dl/library.h"

namespace fabcheck::dl {

using ncclResult_t = int;
inline constexpr ncclResult_t ncclSuccess = 0;
inline constexpr ncclResult_t ncclInProgress = 7;
using ncclComm_t = struct ncclComm*;

inline constexpr size_t kNcclUniqueIdBytes = 128;
struct ncclUniqueId {
  char internal[kNcclUniqueIdBytes];
};

enum ncclRedOp_t : int { ncclSum = 0, ncclProd = 1, ncclMax = 2, ncclMin = 3, ncclAvg = 4 };

enum ncclDataType_t : int {
  ncclInt8 = 0,
  ncclUint8 = 1,
  ncclInt32 = 2,
  ncclUint32 = 3,
  ncclInt64 = 4,
  ncclUint64 = 5,
  ncclFloat16 = 6,
  ncclFloat32 = 7,
  ncclFloat64 = 8,
  ncclBfloat16 = 9,
  ncclFloat8e4m3 = 10,
  ncclFloat8e5m2 = 11,
};

struct NcclApi {
  std::shared_ptr<Library> library;
  int version = 0;  // 22803 = 2.28.3

  ncclResult_t (*ncclGetVersion)(int*);
  const char* (*ncclGetErrorString)(ncclResult_t);
  ncclResult_t (*ncclGetUniqueId)(ncclUniqueId*);
  ncclResult_t (*ncclCommInitRank)(ncclComm_t*, int, ncclUniqueId, int);
  ncclResult_t (*ncclCommInitAll)(ncclComm_t*, int, const int*);
  ncclResult_t (*ncclCommDestroy)(ncclComm_t);
  ncclResult_t (*ncclCommAbort)(ncclComm_t);
  ncclResult_t (*ncclCommGetAsyncError)(ncclComm_t, ncclResult_t*);
  ncclResult_t (*ncclCommCount)(ncclComm_t, int*);
  ncclResult_t (*ncclCommCuDevice)(ncclComm_t, int*);
  ncclResult_t (*ncclCommUserRank)(ncclComm_t, int*);
  ncclResult_t (*ncclAllReduce)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t);
  ncclResult_t (*ncclBroadcast)(const void*, void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
  ncclResult_t (*ncclReduce)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, int, ncclComm_t, cudaStream_t);
  ncclResult_t (*ncclAllGather)(const void*, void*, size_t, ncclDataType_t, ncclComm_t, cudaStream_t);
  ncclResult_t (*ncclReduceScatter)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t);
  ncclResult_t (*ncclSend)(const void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
  ncclResult_t (*ncclRecv)(void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
  ncclResult_t (*ncclGroupStart)();
  ncclResult_t (*ncclGroupEnd)();
  // Optional (null when the library lacks them).
  const char* (*ncclGetLastError)(ncclComm_t) = nullptr;  // 2.13+
  ncclResult_t (*ncclAlltoAll)(const void*, void*, size_t, ncclDataType_t, ncclComm_t, cudaStream_t) = nullptr;  // 2.28+
};

// Loads libnccl once and caches the table; checks the version first (>= 2.12,
// for ncclGetLastError-era error reporting and send/recv groups).
Result<const NcclApi*> LoadNccl();

// "2.28.3" from 22803 (and from the pre-2.9 code 2708).
std::string NcclVersionString(int version);

// Ok for ncclSuccess; otherwise an error naming `what`, NCCL's string and,
// when available, ncclGetLastError's detail.
Status NcclCheck(const NcclApi& api, ncclResult_t result, std::string_view what, ncclComm_t comm = nullptr);

// Size in bytes of one element of `type`; 0 for an unknown type.
size_t NcclTypeSize(ncclDataType_t type);

// RAII owner of a communicator: destroyed (or aborted, after an error) on its device.
class NcclComm {
 public:
  NcclComm() = default;
  NcclComm(const NcclApi* api, ncclComm_t comm) : api_(api), comm_(comm) {}
  ~NcclComm() { Reset(); }
  NcclComm(NcclComm&& other) noexcept { *this = std::move(other); }
  NcclComm& operator=(NcclComm&& other) noexcept;
  NcclComm(const NcclComm&) = delete;
  NcclComm& operator=(const NcclComm&) = delete;

  ncclComm_t get() const { return comm_; }
  // After a failure a destroy can hang waiting for peers: abort instead.
  void MarkFailed() { failed_ = true; }
  void Reset();

 private:
  const NcclApi* api_ = nullptr;
  ncclComm_t comm_ = nullptr;
  bool failed_ = false;
};

}  // namespace fabcheck::dl
