#include "coll/pattern.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace fabcheck::coll {
namespace {

// About 16 MiB of float per chunk, a whole number of periods.
constexpr size_t kChunkPeriods = 4096;

uint16_t FloatToHalfSmallInt(int value) {
  // Exact for integers 0..2048: half has an 11-bit significand.
  if (value == 0) return 0;
  int exponent = 0;
  while ((value >> (exponent + 1)) != 0) ++exponent;
  uint16_t mantissa = static_cast<uint16_t>((value << (10 - exponent)) & 0x3ff);
  return static_cast<uint16_t>(((exponent + 15) << 10) | mantissa);
}

template <typename T>
void Put(T value, uint8_t* dst) {
  std::memcpy(dst, &value, sizeof(T));
}

}  // namespace

int PatternValue(int rank, size_t index) { return static_cast<int>((7 * static_cast<size_t>(rank) + 3 * (index % kPatternPeriod)) % 13); }

bool CheckSupported(dl::ncclDataType_t type, dl::ncclRedOp_t redop, int nranks) {
  if (type == dl::ncclFloat8e4m3 || type == dl::ncclFloat8e5m2) return false;
  if (redop == dl::ncclProd || redop == dl::ncclAvg) return false;
  return nranks * 12 < 256 || type != dl::ncclBfloat16;
}

void StoreElement(dl::ncclDataType_t type, int value, uint8_t* dst) {
  switch (type) {
    case dl::ncclInt8: Put(static_cast<int8_t>(value), dst); break;
    case dl::ncclUint8: Put(static_cast<uint8_t>(value), dst); break;
    case dl::ncclInt32: Put(static_cast<int32_t>(value), dst); break;
    case dl::ncclUint32: Put(static_cast<uint32_t>(value), dst); break;
    case dl::ncclInt64: Put(static_cast<int64_t>(value), dst); break;
    case dl::ncclUint64: Put(static_cast<uint64_t>(value), dst); break;
    case dl::ncclFloat16: Put(FloatToHalfSmallInt(value), dst); break;
    case dl::ncclFloat32: Put(static_cast<float>(value), dst); break;
    case dl::ncclFloat64: Put(static_cast<double>(value), dst); break;
    case dl::ncclBfloat16: {
      // bfloat16 is the top half of a float: exact for integers up to 256.
      float f = static_cast<float>(value);
      uint32_t bits = 0;
      std::memcpy(&bits, &f, sizeof(bits));
      Put(static_cast<uint16_t>(bits >> 16), dst);
      break;
    }
    case dl::ncclFloat8e4m3:
    case dl::ncclFloat8e5m2:
      *dst = 0;
      break;
  }
}

std::vector<Segment> ExpectedSegments(CollOp op, const CollCounts& c, int rank, int nranks, int root) {
  const size_t pc = c.param_count;
  const size_t period = kPatternPeriod;
  std::vector<Segment> out;
  switch (op) {
    case CollOp::kAllReduce:
      out.push_back({0, pc, -1, 0});
      break;
    case CollOp::kAllGather:
      for (int s = 0; s < nranks; ++s) out.push_back({static_cast<size_t>(s) * pc, pc, s, 0});
      break;
    case CollOp::kReduceScatter:
      out.push_back({0, pc, -1, (static_cast<size_t>(rank) * pc) % period});
      break;
    case CollOp::kAlltoAll:
      for (int s = 0; s < nranks; ++s) {
        out.push_back({static_cast<size_t>(s) * pc, pc, s, (static_cast<size_t>(rank) * pc) % period});
      }
      break;
    case CollOp::kBroadcast:
      out.push_back({0, pc, root, 0});
      break;
    case CollOp::kReduce:
      if (rank == root) out.push_back({0, pc, -1, 0});
      break;
    case CollOp::kSendRecv:
      out.push_back({0, pc, (rank - 1 + nranks) % nranks, 0});
      break;
  }
  return out;
}

PatternChecker::PatternChecker(const dl::CudaApi& cuda, dl::ncclDataType_t type, dl::ncclRedOp_t redop, int nranks)
    : cuda_(cuda), type_(type), redop_(redop), nranks_(nranks), elt_(dl::NcclTypeSize(type)),
      chunk_elements_(kPatternPeriod * kChunkPeriods) {
  tiles_.resize(static_cast<size_t>(nranks) + 1);
}

Status PatternChecker::EnsureStaging() {
  if (staging_.get() != nullptr) return Status::Ok();
  ASSIGN_OR_RETURN(staging_, dl::HostBuffer::Allocate(cuda_, chunk_elements_ * elt_));
  return Status::Ok();
}

const std::vector<uint8_t>& PatternChecker::Tile(int source) {
  auto& tile = tiles_[static_cast<size_t>(source + 1)];
  if (!tile.empty()) return tile;
  const size_t n = kPatternPeriod + chunk_elements_;
  tile.resize(n * elt_);
  // One period of values, then repeated.
  std::vector<int> period(kPatternPeriod);
  for (size_t k = 0; k < kPatternPeriod; ++k) {
    if (source >= 0) {
      period[k] = PatternValue(source, k);
      continue;
    }
    int acc = PatternValue(0, k);
    for (int r = 1; r < nranks_; ++r) {
      int v = PatternValue(r, k);
      acc = redop_ == dl::ncclMax ? std::max(acc, v) : redop_ == dl::ncclMin ? std::min(acc, v) : acc + v;
    }
    period[k] = acc;
  }
  for (size_t k = 0; k < kPatternPeriod; ++k) StoreElement(type_, period[k], tile.data() + k * elt_);
  for (size_t k = kPatternPeriod; k < n; ++k) {
    std::memcpy(tile.data() + k * elt_, tile.data() + (k % kPatternPeriod) * elt_, elt_);
  }
  return tile;
}

Status PatternChecker::Fill(int device, dl::cudaStream_t stream, void* dst, size_t count, int rank) {
  if (count == 0) return Status::Ok();
  RETURN_IF_ERROR(EnsureStaging());
  RETURN_IF_ERROR(dl::CudaCheck(cuda_, cuda_.cudaSetDevice(device), "cudaSetDevice"));
  const auto& tile = Tile(rank);
  size_t first = std::min(count, chunk_elements_);
  std::memcpy(staging_.get(), tile.data(), first * elt_);
  auto* base = static_cast<uint8_t*>(dst);
  RETURN_IF_ERROR(dl::CudaCheck(
      cuda_, cuda_.cudaMemcpyAsync(base, staging_.get(), first * elt_, dl::cudaMemcpyHostToDevice, stream),
      "copy the check pattern to the GPU"));
  // Double on the device: the filled prefix is a whole number of periods, so
  // copying it further keeps the pattern continuous.
  size_t filled = first;
  while (filled < count) {
    size_t n = std::min(filled - filled % kPatternPeriod, count - filled);
    RETURN_IF_ERROR(dl::CudaCheck(cuda_,
                                  cuda_.cudaMemcpyAsync(base + filled * elt_, base, n * elt_,
                                                        dl::cudaMemcpyDeviceToDevice, stream),
                                  "extend the check pattern on the GPU"));
    filled += n;
  }
  return dl::CudaCheck(cuda_, cuda_.cudaStreamSynchronize(stream), "cudaStreamSynchronize after the pattern fill");
}

Result<int64_t> PatternChecker::Verify(int device, dl::cudaStream_t stream, const void* src,
                                       const std::vector<Segment>& segments) {
  RETURN_IF_ERROR(EnsureStaging());
  RETURN_IF_ERROR(dl::CudaCheck(cuda_, cuda_.cudaSetDevice(device), "cudaSetDevice"));
  int64_t wrong = 0;
  const auto* base = static_cast<const uint8_t*>(src);
  auto* host = static_cast<uint8_t*>(staging_.get());
  for (const auto& segment : segments) {
    const auto& tile = Tile(segment.source);
    for (size_t done = 0; done < segment.count;) {
      size_t n = std::min(chunk_elements_, segment.count - done);
      RETURN_IF_ERROR(dl::CudaCheck(cuda_,
                                    cuda_.cudaMemcpyAsync(host, base + (segment.offset + done) * elt_, n * elt_,
                                                          dl::cudaMemcpyDeviceToHost, stream),
                                    "copy the result back for --check"));
      RETURN_IF_ERROR(dl::CudaCheck(cuda_, cuda_.cudaStreamSynchronize(stream), "cudaStreamSynchronize"));
      const uint8_t* expected = tile.data() + ((segment.phase + done) % kPatternPeriod) * elt_;
      if (std::memcmp(host, expected, n * elt_) != 0) {
        for (size_t i = 0; i < n; ++i) {
          if (std::memcmp(host + i * elt_, expected + i * elt_, elt_) != 0) ++wrong;
        }
      }
      done += n;
    }
  }
  return wrong;
}

}  // namespace fabcheck::coll
