// The bandwidth loop, with perftest's semantics: per QP up to tx-depth work
// requests in flight, one signalled completion every cq-moderation requests,
// elapsed time from the first post to the last completion. Receivers (send,
// write with immediate) keep their receive queues topped up and count
// completions; the passive side of write and read waits for the "done" message.
#include <arpa/inet.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <optional>

#include "perf/peak_meter.h"
#include "perf/verbs/plan.h"
#include "perf/verbs/verbs_transport.h"

namespace fabcheck::perf::verbs {

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kPollBatch = 32;
constexpr uint64_t kOpen = std::numeric_limits<uint64_t>::max();  // duration mode: end not known yet

double Seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

}  // namespace

Status VerbsTransport::TopUpRecv(int qp, uint64_t size) {
  if (rx_outstanding_.size() < qp_list_.size()) rx_outstanding_.resize(qp_list_.size(), 0);
  while (rx_outstanding_[qp] < rx_depth_) {
    // Receives are posted for the largest slot so a leftover from one size
    // still fits the next.
    RETURN_IF_ERROR(PostRecv(qp, slot_bytes_));
    ++rx_outstanding_[qp];
  }
  return Status::Ok();
}

Status VerbsTransport::PrepareBuffers(uint64_t size, bool fill_send) {
  for (int q = 0; q < static_cast<int>(qp_list_.size()); ++q) {
    if (fill_send) RETURN_IF_ERROR(region_->Fill(SendSlot(q), size, PatternSeed(size, is_client()), q));
    RETURN_IF_ERROR(region_->Set(RecvSlot(q), size, 0));
  }
  return Status::Ok();
}

Status VerbsTransport::ValidateReceived(uint64_t size, uint64_t skip_tail, SideMeasurement& m) {
  if (size <= skip_tail) return Status::Ok();
  for (int q = 0; q < static_cast<int>(qp_list_.size()); ++q) {
    ASSIGN_OR_RETURN(auto bad, region_->Check(RecvSlot(q), size - skip_tail, PatternSeed(size, !is_client()), q));
    if (bad) {
      ++m.validate_errors;
      if (m.validate_detail.empty()) {
        m.validate_detail = fmt::format("QP {} message of {} B from {}: {}", q, size, peer_name_, *bad);
      }
    }
  }
  return Status::Ok();
}

Result<SideMeasurement> VerbsTransport::RunBw(uint64_t size, ControlChannel& control) {
  SideMeasurement m;
  if (params_.warmup > 0) RETURN_IF_ERROR(RunBwPhase(size, params_.warmup, false, control, m));
  RETURN_IF_ERROR(RunBwPhase(size, params_.iters, true, control, m));
  return m;
}

Status VerbsTransport::RunBwPhase(uint64_t size, uint64_t count, bool measured, ControlChannel& control,
                                  SideMeasurement& m) {
  const int nq = static_cast<int>(qp_list_.size());
  const model::PerfOp op = params_.op;
  const bool read = op == model::PerfOp::kRead;
  const bool messages = op == model::PerfOp::kSend || op == model::PerfOp::kWriteImm;
  const bool sender = is_client() || params_.bidir;
  const bool receiver = messages && (!is_client() || params_.bidir);
  const bool duration = count == 0;
  const std::string tag = fmt::format("{}.{}", size, measured ? "run" : "warmup");
  const std::string phase = fmt::format("{} bw {} B {}", model::PerfOpName(op), size, measured ? "measured" : "warmup");

  // Who owns the data: the sender for write/send, the read target for read.
  bool data_owner = read ? (!is_client() || params_.bidir) : sender;
  if (params_.validate) RETURN_IF_ERROR(PrepareBuffers(size, data_owner));
  if (receiver) {
    for (int q = 0; q < nq; ++q) RETURN_IF_ERROR(TopUpRecv(q, size));
  }
  MarkPhaseStart();
  RETURN_IF_ERROR(control.Barrier("verbs.bw.start." + tag, local_.connect_timeout));

  std::vector<uint64_t> posted(nq, 0), done(nq, 0), target(nq, duration ? kOpen : count), received(nq, 0);
  std::vector<bool> rx_ended(nq, !receiver);
  const Clock::time_point start = Clock::now();
  const Clock::time_point stop_at =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(params_.duration_s));
  Clock::time_point tx_end = start, first_rx{}, last_rx{}, last_progress = start;
  // perftest's "BW peak": the best 10 ms of the measured phase, per direction.
  std::optional<PeakMeter> tx_meter, rx_meter;
  std::vector<Clock::time_point> last_done_at(nq, start);  // per QP, for spreading moderated completions
  if (measured) {
    tx_meter.emplace(start);
    rx_meter.emplace(start);
  }
  bool time_up = !duration;
  ibv_wc wc[kPollBatch];
  unsigned idle = 0;
  for (;;) {
    bool progress = false;
    if (sender) {
      if (!time_up && Clock::now() >= stop_at) {
        time_up = true;
        for (int q = 0; q < nq; ++q) target[q] = posted[q] + 1;  // one last, marked request per QP
      }
      for (int q = 0; q < nq; ++q) {
        while (posted[q] < target[q] && posted[q] - done[q] < static_cast<uint64_t>(tx_depth_)) {
          uint64_t n = posted[q];
          bool last = n + 1 == target[q];
          RETURN_IF_ERROR(PostOne(q, size, (static_cast<uint64_t>(q) << 32) | (n & 0xffffffffu),
                                  IsSignalled(n, target[q], signal_interval_), last));
          ++posted[q];
          progress = true;
        }
      }
      int n = ibv_poll_cq(send_cq_.get(), kPollBatch, wc);
      if (n < 0) return InternalError(fmt::format("{}: ibv_poll_cq on the send CQ failed ({})", phase, n));
      for (int i = 0; i < n; ++i) {
        if (wc[i].status != IBV_WC_SUCCESS) return CompletionError(wc[i], phase);
        int q = static_cast<int>(wc[i].wr_id >> 32);
        // The completion covers every request of this QP up to this one.
        uint64_t low = wc[i].wr_id & 0xffffffffu;
        uint64_t idx = (done[q] & ~uint64_t{0xffffffffu}) | low;
        if (idx < done[q]) idx += uint64_t{1} << 32;
        tx_end = Clock::now();
        if (tx_meter) tx_meter->AddSpan(last_done_at[q], tx_end, (idx + 1 - done[q]) * size);
        last_done_at[q] = tx_end;
        done[q] = idx + 1;
        progress = true;
      }
    }
    if (receiver) {
      int n = ibv_poll_cq(recv_cq_.get(), kPollBatch, wc);
      if (n < 0) return InternalError(fmt::format("{}: ibv_poll_cq on the receive CQ failed ({})", phase, n));
      for (int i = 0; i < n; ++i) {
        if (wc[i].status != IBV_WC_SUCCESS) return CompletionError(wc[i], phase);
        int q = static_cast<int>(wc[i].wr_id >> 32);
        --rx_outstanding_[q];
        ++received[q];
        last_rx = Clock::now();
        if (rx_meter) rx_meter->Add(last_rx, size);
        if (received[q] == 1 && first_rx == Clock::time_point{}) first_rx = last_rx;
        bool marked = (wc[i].wc_flags & IBV_WC_WITH_IMM) && ntohl(wc[i].imm_data) == 1;
        if (marked || (!duration && received[q] >= count)) rx_ended[q] = true;
        RETURN_IF_ERROR(TopUpRecv(q, size));
        progress = true;
      }
    }
    bool tx_finished = true;
    if (sender) {
      for (int q = 0; q < nq; ++q) tx_finished = tx_finished && target[q] != kOpen && done[q] >= target[q];
    }
    bool rx_finished = std::all_of(rx_ended.begin(), rx_ended.end(), [](bool b) { return b; });
    if (tx_finished && rx_finished) break;
    if (progress) {
      last_progress = Clock::now();
      idle = 0;
    } else if (++idle % 1024 == 0) {
      RETURN_IF_ERROR(CheckStall(last_progress, phase, control));
    }
  }
  // The passive side of write/read learns here that the active side is done.
  uint64_t sent = 0;
  for (uint64_t d : done) sent += d;
  RETURN_IF_ERROR(control
                      .Exchange("verbs.bw.done." + tag, {{"messages", sent}},
                                (sender || receiver) ? local_.io_timeout : PhaseTimeout(size, count))
                      .status());
  if (!measured) return Status::Ok();
  if (sender) {
    m.tx_messages = sent;
    m.tx_bytes = sent * size;
    m.tx_elapsed_s = Seconds(start, tx_end);
    m.tx_peak_gbps = tx_meter->PeakGbps();
    m.iterations = *std::min_element(done.begin(), done.end());
  }
  if (receiver) {
    uint64_t got = 0;
    for (uint64_t r : received) got += r;
    m.rx_messages = got;
    m.rx_bytes = got * size;
    m.rx_elapsed_s = first_rx == Clock::time_point{} ? 0 : Seconds(start, last_rx);
    m.rx_peak_gbps = rx_meter->PeakGbps();
    if (!sender) m.iterations = *std::min_element(received.begin(), received.end());
  }
  if (!sender && !receiver) m.iterations = count;
  bool data_receiver = read ? (is_client() || params_.bidir) : (!is_client() || params_.bidir);
  if (params_.validate && data_receiver) RETURN_IF_ERROR(ValidateReceived(size, 0, m));
  return Status::Ok();
}

}  // namespace fabcheck::perf::verbs
