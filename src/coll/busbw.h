// The bandwidth arithmetic of nccl-tests, exactly (src/<op>.cu GetCollByteCount
// and GetBw, src/common.cu setupArgs, src/util.cu number formatting), so that a
// fabcheck figure and an nccl-tests figure for the same run are the same number.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "dl/nccl.h"
#include "fabcheck/model/coll.h"

namespace fabcheck::coll {

enum class CollOp { kAllReduce, kAllGather, kReduceScatter, kAlltoAll, kBroadcast, kReduce, kSendRecv };

// "all_reduce" <-> kAllReduce (also accepts "allreduce", "all-reduce").
std::string_view CollOpName(CollOp op);
std::optional<CollOp> ParseCollOp(std::string_view name);
const std::vector<CollOp>& AllCollOps();
// "all" or a comma list; InvalidArgument naming the bad entry.
Result<std::vector<CollOp>> ParseCollOpList(std::string_view text);
bool CollOpHasRedop(CollOp op);
bool CollOpHasRoot(CollOp op);

// nccl-tests' type names ("float", "bfloat16", ...) <-> NCCL types.
std::string_view NcclTypeName(dl::ncclDataType_t type);
Result<dl::ncclDataType_t> ParseNcclType(std::string_view name);
std::string_view NcclRedOpName(dl::ncclRedOp_t op);
Result<dl::ncclRedOp_t> ParseNcclRedOp(std::string_view name);

// Element counts for one size, as nccl-tests' setupArgs computes them.
struct CollCounts {
  size_t send_count = 0;   // elements in each rank's send buffer
  size_t recv_count = 0;   // elements in each rank's receive buffer
  size_t param_count = 0;  // the count passed to NCCL (the table's "count" column)
  size_t send_inplace_offset = 0;  // elements; in-place send pointer = recv + offset * rank
  size_t recv_inplace_offset = 0;
};
CollCounts ComputeCollCounts(CollOp op, uint64_t size_bytes, size_t elt_size, int nranks);
// The table's size column: max(send, recv) bytes.
uint64_t PrintedSize(const CollCounts& counts, size_t elt_size);

// algbw (GB/s, 1e9) and busbw for `param_count` elements in `seconds`.
struct Bandwidth {
  double algbw_gbps = 0;
  double busbw_gbps = 0;
};
Bandwidth ComputeBandwidth(CollOp op, size_t param_count, size_t elt_size, double seconds, int nranks);
// busbw / algbw: 2(n-1)/n, (n-1)/n or 1.
double BusBwFactor(CollOp op, int nranks);

// Buffer bytes each rank needs for the largest size (nccl-tests getBuffSize).
void MaxBufferBytes(CollOp op, uint64_t max_size, size_t elt_size, int nranks, uint64_t* send_bytes,
                    uint64_t* recv_bytes);

// Mean busbw over rows x {out-of-place, in-place} (nccl-tests "Avg bus bandwidth").
double AverageBusBw(const std::vector<model::CollRow>& rows);

}  // namespace fabcheck::coll
