// Data for --check: every rank's send buffer holds a known periodic pattern,
// so the expected output of each collective is known on the host and the
// result can be copied back and compared there (no CUDA kernel, no nvcc).
//
// Element k of rank r's data is (7r + 3(k mod 1021)) mod 13: small integers,
// exact in every type (sums of up to 19 ranks fit int8 and bfloat16), and a
// prime period so that a block landing at the wrong offset does not match.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/status.h"
#include "coll/busbw.h"
#include "dl/cuda.h"
#include "dl/nccl.h"

namespace fabcheck::coll {

inline constexpr size_t kPatternPeriod = 1021;

int PatternValue(int rank, size_t index);
// Whether --check can verify this type and reduction exactly (not fp8, prod or avg).
bool CheckSupported(dl::ncclDataType_t type, dl::ncclRedOp_t redop, int nranks);
// Writes the small non-negative integer `value` as one element of `type`.
void StoreElement(dl::ncclDataType_t type, int value, uint8_t* dst);

// Where the expected data of an output buffer comes from: `count` elements at
// `offset` equal source `source` (a rank, or -1 for the reduction over all
// ranks) starting at pattern index `phase`.
struct Segment {
  size_t offset = 0;
  size_t count = 0;
  int source = 0;
  size_t phase = 0;
};
std::vector<Segment> ExpectedSegments(CollOp op, const CollCounts& counts, int rank, int nranks, int root);

// Host-side fill and verify for one rank, reusing pinned staging memory.
class PatternChecker {
 public:
  PatternChecker(const dl::CudaApi& cuda, dl::ncclDataType_t type, dl::ncclRedOp_t redop, int nranks);
  // Writes rank `rank`'s pattern (from index 0) into `count` elements at `dst` on `device`.
  Status Fill(int device, dl::cudaStream_t stream, void* dst, size_t count, int rank);
  // Counts elements of `src` that differ from `segments`; copies back in chunks.
  Result<int64_t> Verify(int device, dl::cudaStream_t stream, const void* src, const std::vector<Segment>& segments);

 private:
  Status EnsureStaging();
  const std::vector<uint8_t>& Tile(int source);  // kPatternPeriod + chunk elements

  const dl::CudaApi& cuda_;
  dl::ncclDataType_t type_;
  dl::ncclRedOp_t redop_;
  int nranks_;
  size_t elt_;
  size_t chunk_elements_;
  dl::HostBuffer staging_;
  std::vector<std::vector<uint8_t>> tiles_;  // index source + 1
};

}  // namespace fabcheck::coll
