// The latency loop, with perftest's semantics: a ping-pong of one message on
// one QP; the client timestamps each post and reports the iters-1 deltas
// (round trips; past 2 Mi of them a uniform sample, perf/latency_samples.h).
// write: each side writes into the other's buffer and the receiver spins on
// the last byte; send and write-with-immediate: receive completions; read:
// the client reads and waits for its own completion.
#include <fmt/format.h>

#include <sched.h>

#include <algorithm>
#include <chrono>

#include "base/json_text.h"
#include "perf/latency_samples.h"
#include "perf/verbs/plan.h"
#include "perf/verbs/verbs_transport.h"

namespace fabcheck::perf::verbs {

namespace {

using Clock = std::chrono::steady_clock;

uint8_t LoadByte(const uint8_t* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }

// After a long fruitless spin, let the kernel run: a software provider
// (rxe) or an oversubscribed host needs the CPU we are burning. A real NIC
// answers long before kYieldAfter spins, so the fast path never yields.
constexpr unsigned kYieldAfter = 1u << 15;
inline void MaybeYield(unsigned spins) {
  if (spins >= kYieldAfter && spins % 256 == 0) sched_yield();
}

}  // namespace

Result<SideMeasurement> VerbsTransport::RunLat(uint64_t size, ControlChannel& control) {
  SideMeasurement m;
  uint64_t count = params_.iters;
  if (count == 0) {
    // --duration: the warmup doubles as the calibration round; the client
    // tells the server how many round trips fit (plan.h).
    uint64_t calibration = std::max<uint64_t>(params_.warmup, kLatCalibrationIterations);
    Clock::time_point t0 = Clock::now();
    RETURN_IF_ERROR(RunLatPhase(size, calibration, false, control, m));
    double calibration_s = std::chrono::duration<double>(Clock::now() - t0).count();
    nlohmann::json mine = nlohmann::json::object();
    if (is_client()) mine["iters"] = LatIterationsForDuration(params_.duration_s, calibration_s, calibration);
    ASSIGN_OR_RETURN(nlohmann::json peer,
                     control.Exchange(fmt::format("verbs.lat.iters.{}", size), mine, local_.io_timeout));
    const nlohmann::json& agreed = is_client() ? mine : peer;
    if (!agreed.contains("iters") || !agreed["iters"].is_number_unsigned() || agreed["iters"].get<uint64_t>() < 2 ||
        agreed["iters"].get<uint64_t>() > kMaxLatIterations) {
      return DataLossError(fmt::format("peer {} sent no usable latency iteration count for {} B (got {}); run the "
                                       "same fabcheck version on both sides, or give --iters instead of --duration",
                                       peer_name_, size, ToJsonText(peer)));
    }
    count = agreed["iters"].get<uint64_t>();
  } else if (params_.warmup > 0) {
    RETURN_IF_ERROR(RunLatPhase(size, params_.warmup, false, control, m));
  }
  RETURN_IF_ERROR(RunLatPhase(size, count, true, control, m));
  return m;
}

Status VerbsTransport::RunLatPhase(uint64_t size, uint64_t count, bool measured, ControlChannel& control,
                                   SideMeasurement& m) {
  const model::PerfOp op = params_.op;
  const std::string tag = fmt::format("{}.{}", size, measured ? "run" : "warmup");
  const std::string phase = fmt::format("{} lat {} B {}", model::PerfOpName(op), size, measured ? "measured" : "warmup");
  const bool read = op == model::PerfOp::kRead;
  const bool memory_poll = op == model::PerfOp::kWrite;
  const bool active = is_client() || !read;  // the read server only serves
  bool data_owner = read ? !is_client() : true;
  if (params_.validate) {
    RETURN_IF_ERROR(PrepareBuffers(size, data_owner));
  } else if (memory_poll) {
    RETURN_IF_ERROR(region_->Set(RecvSlot(0) + size - 1, 1, 0));
  }
  if (!read && !memory_poll) RETURN_IF_ERROR(TopUpRecv(0, size));
  MarkPhaseStart();
  RETURN_IF_ERROR(control.Barrier("verbs.lat.start." + tag, local_.connect_timeout));

  LatencySamples samples;  // round trips between consecutive posts, within a budget
  if (is_client() && measured) samples.Reserve(count);
  Clock::time_point last_post{};
  uint64_t posts = 0;
  uint8_t* send_tail = region_->data() + SendSlot(0) + size - 1;
  const uint8_t* recv_tail = region_->data() + RecvSlot(0) + size - 1;
  uint64_t outstanding = 0;  // signalled sends not yet completed
  ibv_wc wc[16];
  Clock::time_point last_progress = Clock::now();

  // Drains the send CQ; with `until_empty`, waits until nothing is outstanding.
  auto drain_send = [&](bool until_empty) -> Status {
    unsigned spins = 0;
    while (outstanding > 0) {
      int n = ibv_poll_cq(send_cq_.get(), 16, wc);
      if (n < 0) return InternalError(phase + ": ibv_poll_cq on the send CQ failed");
      for (int i = 0; i < n; ++i) {
        if (wc[i].status != IBV_WC_SUCCESS) return CompletionError(wc[i], phase);
        --outstanding;
        last_progress = Clock::now();
      }
      if (!until_empty && outstanding < static_cast<uint64_t>(tx_depth_)) break;
      if (n == 0 && ++spins % 4096 == 0) RETURN_IF_ERROR(CheckStall(last_progress, phase, control));
      if (n == 0) MaybeYield(spins);
    }
    return Status::Ok();
  };
  // Waits for the peer's message number i (1-based counter in the tail byte, or a receive completion).
  auto wait_incoming = [&](uint64_t i) -> Status {
    unsigned spins = 0;
    if (memory_poll) {
      uint8_t want = static_cast<uint8_t>(i & 0xff);
      while (LoadByte(recv_tail) != want) {
        if (++spins % 4096 == 0) RETURN_IF_ERROR(CheckStall(last_progress, phase, control));
        MaybeYield(spins);
      }
      last_progress = Clock::now();
      return Status::Ok();
    }
    for (;;) {
      int n = ibv_poll_cq(recv_cq_.get(), 1, wc);
      if (n < 0) return InternalError(phase + ": ibv_poll_cq on the receive CQ failed");
      if (n == 1) {
        if (wc[0].status != IBV_WC_SUCCESS) return CompletionError(wc[0], phase);
        --rx_outstanding_[0];
        last_progress = Clock::now();
        return TopUpRecv(0, size);
      }
      if (++spins % 4096 == 0) RETURN_IF_ERROR(CheckStall(last_progress, phase, control));
      MaybeYield(spins);
    }
  };
  auto post = [&](uint64_t i) -> Status {
    if (memory_poll) {
      // Host memory only (ValidateVerbsParams refuses cuda for write latency).
      __atomic_store_n(send_tail, static_cast<uint8_t>(i & 0xff), __ATOMIC_RELEASE);
    }
    RETURN_IF_ERROR(drain_send(false));
    RETURN_IF_ERROR(PostOne(0, size, i, true, i == count));
    ++outstanding;
    return Status::Ok();
  };

  if (active) {
    for (uint64_t i = 1; i <= count; ++i) {
      if (is_client()) {
        if (measured) {
          Clock::time_point now = Clock::now();
          if (posts++ > 0) samples.Add(std::chrono::duration<double, std::micro>(now - last_post).count());
          last_post = now;
        }
        RETURN_IF_ERROR(post(i));
        if (read) {
          RETURN_IF_ERROR(drain_send(true));
        } else {
          RETURN_IF_ERROR(wait_incoming(i));
        }
      } else {
        RETURN_IF_ERROR(wait_incoming(i));
        RETURN_IF_ERROR(post(i));
      }
    }
    RETURN_IF_ERROR(drain_send(true));
  }
  RETURN_IF_ERROR(control
                      .Exchange("verbs.lat.done." + tag, nlohmann::json::object(),
                                active ? local_.io_timeout : PhaseTimeout(size, count))
                      .status());
  if (!measured) return Status::Ok();
  m.iterations = count;
  m.tx_messages = count;
  m.tx_bytes = count * size;
  m.rtt_us = std::move(samples).Take();
  if (params_.validate) {
    bool data_receiver = read ? is_client() : true;
    // Write latency overwrites the last byte with the ping-pong counter.
    if (data_receiver) RETURN_IF_ERROR(ValidateReceived(size, memory_poll ? 1 : 0, m));
  }
  return Status::Ok();
}

}  // namespace fabcheck::perf::verbs
