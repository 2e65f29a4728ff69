// The verbs test plan: MTU negotiation, work-request signalling, inline use,
// buffer layout and the --validate pattern (pure logic, unit-tested).
//
// Semantics follow perftest: tx-depth work requests in flight per QP, one
// signalled completion every cq_moderation requests (and always the last),
// inline sends up to the inline size, a path MTU that both ports can carry.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "base/status.h"
#include "perf/transport.h"

namespace fabcheck::perf::verbs {

// IB MTU sizes (256..4096) <-> the ibv_mtu enum values (1..5); nullopt/0 otherwise.
std::optional<int> MtuEnumFromBytes(int bytes);
int MtuBytesFromEnum(int mtu_enum);

struct MtuChoice {
  int bytes = 0;
  std::string reason;  // "min of active MTUs (local 4096, remote 1024)" / "--mtu 1024"
};
// The path MTU of a connection: the smaller of both ports' active MTU, or
// --mtu when given and both ports carry it. A request above what a port can
// carry is refused (it would drop every full-size packet), naming both ports.
Result<MtuChoice> NegotiateMtu(int local_active_bytes, int remote_active_bytes, int requested_bytes);

// Outstanding RDMA reads a requester may have: what it can initiate, what the
// responder accepts, perftest's default of 16 at most; at least 1.
int NegotiateReadDepth(int local_init_rd_atom, int remote_rd_atom);

// perftest: signal every cq_moderation-th request, capped by tx_depth so the
// send queue can never fill with unsignalled work.
int SignalInterval(int cq_moderation, int tx_depth);
// Whether request number n (0-based) of `total` is signalled.
inline bool IsSignalled(uint64_t n, uint64_t total, int interval) {
  return (n + 1) % static_cast<uint64_t>(interval) == 0 || n + 1 == total;
}

// Whether a message of `size` goes inline: requested, small enough for both
// the request and what the QP granted, and not a read (reads carry no payload).
bool UseInline(uint64_t size, int requested_inline, int granted_inline, model::PerfOp op);

// Latency with --duration: a ping-pong needs both sides to agree on the
// number of round trips, so the client times a calibration round
// (`calibration_iters` round trips in `calibration_s`) and asks for as many as
// fit in `duration_s`: at least 2 (one round trip needs two stamps), at most
// kMaxLatIterations (the client keeps a time stamp per round trip).
inline constexpr uint64_t kMaxLatIterations = 5'000'000;
inline constexpr uint64_t kLatCalibrationIterations = 64;
uint64_t LatIterationsForDuration(double duration_s, double calibration_s, uint64_t calibration_iters);

// Verbs-specific checks on top of ValidateTestParams.
Status ValidateVerbsParams(const TestParams& p);

// Buffer layout per QP: [send slot | receive slot], each the largest message
// rounded up to 64 bytes; the region is page aligned.
uint64_t SlotBytes(uint64_t max_message);
uint64_t RegionBytes(uint64_t max_message, int qps);

// The --validate pattern: a byte per (seed, qp, offset) that changes with each.
inline uint8_t PatternByte(uint32_t seed, int qp, uint64_t offset) {
  uint64_t x = offset * 0x9E3779B1u + static_cast<uint64_t>(qp) * 0x85EBCA77u + seed * 0xC2B2AE3Du;
  return static_cast<uint8_t>((x >> 13) ^ (x >> 5) ^ x);
}
void FillPattern(uint8_t* data, uint64_t size, uint32_t seed, int qp);
// The first byte that differs from the pattern (checking `size` bytes), or nullopt.
struct Mismatch {
  uint64_t offset = 0;
  uint8_t got = 0;
  uint8_t want = 0;
};
std::optional<Mismatch> CheckPattern(const uint8_t* data, uint64_t size, uint32_t seed, int qp);
// A seed that differs between sizes and directions.
inline uint32_t PatternSeed(uint64_t size, bool from_client) {
  return static_cast<uint32_t>(size * 2654435761u) ^ (from_client ? 0x5a5a5a5au : 0xa5a5a5a5u);
}

// A random 24-bit packet sequence number.
uint32_t RandomPsn();

}  // namespace fabcheck::perf::verbs
