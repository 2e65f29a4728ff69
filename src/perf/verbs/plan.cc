#include "perf/verbs/plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <random>

namespace fabcheck::perf::verbs {

std::optional<int> MtuEnumFromBytes(int bytes) {
  switch (bytes) {
    case 256: return 1;
    case 512: return 2;
    case 1024: return 3;
    case 2048: return 4;
    case 4096: return 5;
    default: return std::nullopt;
  }
}

int MtuBytesFromEnum(int mtu_enum) { return mtu_enum >= 1 && mtu_enum <= 5 ? 128 << mtu_enum : 0; }

Result<MtuChoice> NegotiateMtu(int local_active_bytes, int remote_active_bytes, int requested_bytes) {
  if (!MtuEnumFromBytes(local_active_bytes)) {
    return FailedPreconditionError(fmt::format("local port reports active MTU {} (not an IB MTU)", local_active_bytes));
  }
  if (!MtuEnumFromBytes(remote_active_bytes)) {
    return FailedPreconditionError(fmt::format("peer port reports active MTU {} (not an IB MTU)", remote_active_bytes));
  }
  int path = std::min(local_active_bytes, remote_active_bytes);
  MtuChoice c;
  if (requested_bytes == 0) {
    c.bytes = path;
    c.reason = local_active_bytes == remote_active_bytes
                   ? fmt::format("active MTU of both ports ({})", path)
                   : fmt::format("smaller active MTU (local {}, peer {})", local_active_bytes, remote_active_bytes);
    return c;
  }
  if (!MtuEnumFromBytes(requested_bytes)) {
    return InvalidArgumentError(fmt::format("--mtu {} is not an IB MTU (256, 512, 1024, 2048 or 4096)", requested_bytes));
  }
  if (requested_bytes > path) {
    return FailedPreconditionError(fmt::format(
        "--mtu {} is above what the path carries (active MTU: local {}, peer {}); every full-size packet would be "
        "dropped. Use --mtu {} or less, or raise the netdev MTU on both sides (ip link set DEV mtu 9000 gives 4096)",
        requested_bytes, local_active_bytes, remote_active_bytes, path));
  }
  c.bytes = requested_bytes;
  c.reason = fmt::format("--mtu {} (active: local {}, peer {})", requested_bytes, local_active_bytes,
                         remote_active_bytes);
  return c;
}

int NegotiateReadDepth(int local_init_rd_atom, int remote_rd_atom) {
  return std::max(1, std::min({local_init_rd_atom, remote_rd_atom, 16}));
}

int SignalInterval(int cq_moderation, int tx_depth) { return std::max(1, std::min(cq_moderation, tx_depth)); }

bool UseInline(uint64_t size, int requested_inline, int granted_inline, model::PerfOp op) {
  if (op == model::PerfOp::kRead || requested_inline <= 0) return false;
  return size <= static_cast<uint64_t>(std::min(requested_inline, granted_inline));
}

Status ValidateVerbsParams(const TestParams& p) {
  if (p.transport != TransportKind::kVerbs) return InternalError("ValidateVerbsParams called for a non-verbs test");
  if (p.test == model::PerfTest::kKv && p.op != model::PerfOp::kWrite) {
    return InvalidArgumentError(fmt::format(
        "kv over verbs writes pages with RDMA WRITE and notifies each layer with WRITE_WITH_IMM (--op write), "
        "not --op {}",
        model::PerfOpName(p.op)));
  }
  if (p.test == model::PerfTest::kLat && p.op == model::PerfOp::kWrite) {
    // write latency polls the last byte of the receive buffer from the CPU.
    for (const EndpointSpec* e : {&p.client, &p.server}) {
      if (e->mem.is_cuda()) {
        return InvalidArgumentError(
            "--test lat --op write polls the receive buffer from the CPU, which cannot read GPU memory; "
            "use --op send or --op write_imm for a GPU-memory latency test");
      }
    }
  }
  return Status::Ok();
}

uint64_t LatIterationsForDuration(double duration_s, double calibration_s, uint64_t calibration_iters) {
  if (calibration_iters == 0 || !(calibration_s > 0) || !(duration_s > 0)) return 2;
  double per_iteration = calibration_s / static_cast<double>(calibration_iters);
  double fit = duration_s / per_iteration;
  if (!(fit < static_cast<double>(kMaxLatIterations))) return kMaxLatIterations;
  return std::max<uint64_t>(2, static_cast<uint64_t>(fit));
}

uint64_t SlotBytes(uint64_t max_message) { return (std::max<uint64_t>(max_message, 1) + 63) / 64 * 64; }

uint64_t RegionBytes(uint64_t max_message, int qps) {
  constexpr uint64_t kPage = 4096;
  uint64_t bytes = 2 * SlotBytes(max_message) * static_cast<uint64_t>(std::max(qps, 1));
  return (bytes + kPage - 1) / kPage * kPage;
}

void FillPattern(uint8_t* data, uint64_t size, uint32_t seed, int qp) {
  for (uint64_t i = 0; i < size; ++i) data[i] = PatternByte(seed, qp, i);
}

std::optional<Mismatch> CheckPattern(const uint8_t* data, uint64_t size, uint32_t seed, int qp) {
  for (uint64_t i = 0; i < size; ++i) {
    uint8_t want = PatternByte(seed, qp, i);
    if (data[i] != want) return Mismatch{i, data[i], want};
  }
  return std::nullopt;
}

uint32_t RandomPsn() {
  static thread_local std::mt19937 gen{std::random_device{}()};
  return gen() & 0xffffff;
}

}  // namespace fabcheck::perf::verbs
