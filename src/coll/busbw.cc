#include "coll/busbw.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

#include "base/strings.h"

namespace fabcheck::coll {
namespace {

struct OpName {
  CollOp op;
  const char* name;
};
constexpr OpName kOps[] = {
    {CollOp::kAllReduce, "all_reduce"}, {CollOp::kAllGather, "all_gather"}, {CollOp::kReduceScatter, "reduce_scatter"},
    {CollOp::kAlltoAll, "alltoall"},    {CollOp::kBroadcast, "broadcast"},   {CollOp::kReduce, "reduce"},
    {CollOp::kSendRecv, "sendrecv"},
};

struct TypeName {
  dl::ncclDataType_t type;
  const char* name;
};
// nccl-tests' names first; common aliases after.
constexpr TypeName kTypes[] = {
    {dl::ncclInt8, "int8"},         {dl::ncclUint8, "uint8"},       {dl::ncclInt32, "int32"},
    {dl::ncclUint32, "uint32"},     {dl::ncclInt64, "int64"},       {dl::ncclUint64, "uint64"},
    {dl::ncclFloat16, "half"},      {dl::ncclFloat32, "float"},     {dl::ncclFloat64, "double"},
    {dl::ncclBfloat16, "bfloat16"}, {dl::ncclFloat8e4m3, "f8e4m3"}, {dl::ncclFloat8e5m2, "f8e5m2"},
    {dl::ncclInt8, "char"},         {dl::ncclInt32, "int"},         {dl::ncclFloat16, "float16"},
    {dl::ncclFloat16, "fp16"},      {dl::ncclFloat32, "float32"},   {dl::ncclFloat32, "fp32"},
    {dl::ncclFloat64, "float64"},   {dl::ncclBfloat16, "bf16"},
};

constexpr const char* kRedOps[] = {"sum", "prod", "max", "min", "avg"};

}  // namespace

std::string_view CollOpName(CollOp op) {
  for (const auto& o : kOps) {
    if (o.op == op) return o.name;
  }
  return "unknown";
}

std::optional<CollOp> ParseCollOp(std::string_view name) {
  std::string n = ToLower(Trim(name));
  n.erase(std::remove_if(n.begin(), n.end(), [](char c) { return c == '_' || c == '-'; }), n.end());
  for (const auto& o : kOps) {
    std::string candidate = o.name;
    candidate.erase(std::remove(candidate.begin(), candidate.end(), '_'), candidate.end());
    if (candidate == n) return o.op;
  }
  return std::nullopt;
}

const std::vector<CollOp>& AllCollOps() {
  static const std::vector<CollOp> all = {CollOp::kAllReduce, CollOp::kAllGather, CollOp::kReduceScatter,
                                          CollOp::kAlltoAll,  CollOp::kBroadcast, CollOp::kReduce,
                                          CollOp::kSendRecv};
  return all;
}

Result<std::vector<CollOp>> ParseCollOpList(std::string_view text) {
  if (Trim(text) == "all") return AllCollOps();
  std::vector<CollOp> ops;
  for (const auto& part : Split(text, ',', /*skip_empty=*/true)) {
    auto op = ParseCollOp(part);
    if (!op) {
      return InvalidArgumentError(fmt::format(
          "unknown collective '{}' in --op (use all, or a comma list of all_reduce, all_gather, reduce_scatter, "
          "alltoall, broadcast, reduce, sendrecv)",
          part));
    }
    if (std::find(ops.begin(), ops.end(), *op) == ops.end()) ops.push_back(*op);
  }
  if (ops.empty()) return InvalidArgumentError("--op is empty (use all, or e.g. all_reduce,all_gather)");
  return ops;
}

bool CollOpHasRedop(CollOp op) {
  return op == CollOp::kAllReduce || op == CollOp::kReduceScatter || op == CollOp::kReduce ||
         op == CollOp::kSendRecv;
}
bool CollOpHasRoot(CollOp op) { return op == CollOp::kBroadcast || op == CollOp::kReduce; }

std::string_view NcclTypeName(dl::ncclDataType_t type) {
  for (const auto& t : kTypes) {
    if (t.type == type) return t.name;
  }
  return "unknown";
}

Result<dl::ncclDataType_t> ParseNcclType(std::string_view name) {
  std::string n = ToLower(Trim(name));
  for (const auto& t : kTypes) {
    if (n == t.name) return t.type;
  }
  return InvalidArgumentError(fmt::format(
      "unknown --dtype '{}' (use int8, uint8, int32, uint32, int64, uint64, half, float, double, bfloat16)", name));
}

std::string_view NcclRedOpName(dl::ncclRedOp_t op) {
  int i = static_cast<int>(op);
  return i >= 0 && i < 5 ? kRedOps[i] : "unknown";
}

Result<dl::ncclRedOp_t> ParseNcclRedOp(std::string_view name) {
  std::string n = ToLower(Trim(name));
  for (int i = 0; i < 5; ++i) {
    if (n == kRedOps[i]) return static_cast<dl::ncclRedOp_t>(i);
  }
  return InvalidArgumentError(fmt::format("unknown --redop '{}' (use sum, prod, max, min or avg)", name));
}

CollCounts ComputeCollCounts(CollOp op, uint64_t size_bytes, size_t elt_size, int nranks) {
  CollCounts c;
  if (elt_size == 0 || nranks <= 0) return c;
  const size_t count = size_bytes / elt_size;
  const size_t n = static_cast<size_t>(nranks);
  // nccl-tests rounds per-rank counts down to a multiple of 16 bytes.
  const size_t align_mask = ~(16 / elt_size - 1);
  switch (op) {
    case CollOp::kAllGather: {
      size_t base = (count / n) & align_mask;
      c.send_count = base;
      c.recv_count = base * n;
      c.send_inplace_offset = base;
      c.recv_inplace_offset = 0;
      c.param_count = base;
      break;
    }
    case CollOp::kReduceScatter: {
      size_t base = (count / n) & align_mask;
      c.send_count = base * n;
      c.recv_count = base;
      c.send_inplace_offset = 0;
      c.recv_inplace_offset = base;
      c.param_count = base;
      break;
    }
    case CollOp::kAlltoAll: {
      c.param_count = (count / n) & align_mask;
      c.send_count = n * c.param_count;
      c.recv_count = c.send_count;
      break;
    }
    case CollOp::kAllReduce:
    case CollOp::kBroadcast:
    case CollOp::kReduce:
    case CollOp::kSendRecv:
      c.send_count = count;
      c.recv_count = count;
      c.param_count = count;
      break;
  }
  return c;
}

uint64_t PrintedSize(const CollCounts& counts, size_t elt_size) {
  return std::max(counts.send_count, counts.recv_count) * static_cast<uint64_t>(elt_size);
}

double BusBwFactor(CollOp op, int nranks) {
  const double n = nranks;
  switch (op) {
    case CollOp::kAllReduce:
      return 2.0 * (n - 1) / n;
    case CollOp::kAllGather:
    case CollOp::kReduceScatter:
    case CollOp::kAlltoAll:
      return (n - 1) / n;
    case CollOp::kBroadcast:
    case CollOp::kReduce:
    case CollOp::kSendRecv:
      return 1.0;
  }
  return 1.0;
}

Bandwidth ComputeBandwidth(CollOp op, size_t param_count, size_t elt_size, double seconds, int nranks) {
  Bandwidth bw;
  if (seconds <= 0) return bw;
  double bytes = static_cast<double>(param_count) * static_cast<double>(elt_size);
  // AllGather, ReduceScatter and AlltoAll count every rank's share.
  if (op == CollOp::kAllGather || op == CollOp::kReduceScatter || op == CollOp::kAlltoAll) bytes *= nranks;
  bw.algbw_gbps = bytes / 1.0e9 / seconds;
  bw.busbw_gbps = bw.algbw_gbps * BusBwFactor(op, nranks);
  return bw;
}

void MaxBufferBytes(CollOp op, uint64_t max_size, size_t elt_size, int nranks, uint64_t* send_bytes,
                    uint64_t* recv_bytes) {
  CollCounts c = ComputeCollCounts(op, max_size, elt_size, nranks);
  *send_bytes = c.send_count * elt_size;
  *recv_bytes = c.recv_count * elt_size;
}

double AverageBusBw(const std::vector<model::CollRow>& rows) {
  if (rows.empty()) return 0;
  double sum = 0;
  for (const auto& r : rows) sum += r.out_of_place.busbw_gbps + r.in_place.busbw_gbps;
  return sum / (2.0 * static_cast<double>(rows.size()));
}

}  // namespace fabcheck::coll
