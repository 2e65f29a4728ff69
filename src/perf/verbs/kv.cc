// The KV-cache pattern over verbs (test kKv, `fabcheck kv --transport verbs`),
// on the QPs, CQs and registered region the transport's Setup made: one RC QP
// per request in flight.
//
// Client (prefill): per request and layer, one RDMA WRITE per page from its
// source page into its destination page of the server's pool (the page table
// the server sent: scattered offsets), then a WRITE_WITH_IMM into the QP's
// mailbox as the layer's notification (kv_plan.h). Work requests go to the
// send queue through a chain of up to kPostBatch per ibv_post_send, one in
// signal-interval signalled. The server (decode) consumes each notification's
// receive completion and acknowledges it with a WRITE_WITH_IMM carrying the
// same immediate; the client times layer (its first page posted -> its
// acknowledgement) and request (first page -> the last layer's
// acknowledgement). A slot starts its next request once the previous one is
// acknowledged, as over TCP, so --inflight N is exactly N requests moving.
// Both loops busy-poll, as perftest and the bw loop do.
#include <arpa/inet.h>
#include <poll.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <limits>

#include "fabcheck/model/json_fields.h"
#include "perf/kv_pattern.h"
#include "perf/verbs/kv_plan.h"
#include "perf/verbs/plan.h"
#include "perf/verbs/verbs_transport.h"

namespace fabcheck::perf::verbs {

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kPollBatch = 32;
// Work requests per ibv_post_send. One, as perftest's default post list: in
// the soft-RoCE lab, chains of 16 (one doorbell for 1 MiB of 64 KiB pages)
// moved 0.10-0.12 Gb/s where single posts moved 0.19-0.24 in the same boot,
// and at pages of 16 KiB and more a doorbell is small beside the page's wire
// time on a real NIC too. The chain stays the one posting path, so a longer
// one is a constant away.
constexpr int kPostBatch = 1;
// The longest the decode side sleeps on the completion channel before it
// looks at the peer and the timeout again.
constexpr std::chrono::milliseconds kKvSleepSlice{100};

double Us(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

// One chain of work requests for ibv_post_send.
struct Chain {
  ibv_send_wr wr[kPostBatch];
  ibv_sge sge[kPostBatch];
  int n = 0;
  bool full() const { return n == kPostBatch; }
  ibv_send_wr& Add(uint64_t addr, uint32_t bytes, uint32_t lkey) {
    ibv_send_wr& w = wr[n];
    w = {};
    sge[n] = {addr, bytes, lkey};
    w.sg_list = &sge[n];
    w.num_sge = 1;
    if (n > 0) wr[n - 1].next = &w;
    ++n;
    return w;
  }
};

}  // namespace

Status VerbsTransport::PostChain(int qp, void* chain_ptr, std::string_view phase) {
  Chain& chain = *static_cast<Chain*>(chain_ptr);
  if (chain.n == 0) return Status::Ok();
  ibv_send_wr* bad = nullptr;
  int rc = ibv_post_send(qp_list_[qp], &chain.wr[0], &bad);
  chain.n = 0;
  if (rc != 0) return ErrnoError(rc, fmt::format("{}: ibv_post_send on QP {} ({})", phase, qp, peer_name_));
  return Status::Ok();
}

Status VerbsTransport::PollSendCq(std::vector<uint64_t>& done, std::string_view phase, bool& progress) {
  ibv_wc wc[kPollBatch];
  int n = ibv_poll_cq(send_cq_.get(), kPollBatch, wc);
  if (n < 0) return InternalError(fmt::format("{}: ibv_poll_cq on the send CQ failed ({})", phase, n));
  for (int i = 0; i < n; ++i) {
    if (wc[i].status != IBV_WC_SUCCESS) return CompletionError(wc[i], phase);
    const size_t q = wc[i].wr_id >> 32;
    done[q] = CompletedThrough(done[q], static_cast<uint32_t>(wc[i].wr_id));
    progress = true;
  }
  return Status::Ok();
}

Status VerbsTransport::ArmCompletions(std::string_view phase) {
  for (ibv_cq* cq : {recv_cq_.get(), send_cq_.get()}) {
    if (int rc = ibv_req_notify_cq(cq, 0); rc != 0) return ErrnoError(rc, fmt::format("{}: ibv_req_notify_cq", phase));
  }
  return Status::Ok();
}

Status VerbsTransport::SleepOnCompletions(std::string_view phase) {
  pollfd pfd{comp_channel_->fd, POLLIN, 0};
  int rc = ::poll(&pfd, 1, static_cast<int>(kKvSleepSlice.count()));
  if (rc < 0 && errno != EINTR) return ErrnoError(errno, fmt::format("{}: poll on the completion channel", phase));
  if (rc > 0) {
    ibv_cq* cq = nullptr;
    void* cq_context = nullptr;
    if (ibv_get_cq_event(comp_channel_.get(), &cq, &cq_context) != 0) {
      return ErrnoError(errno, fmt::format("{}: ibv_get_cq_event", phase));
    }
    ibv_ack_cq_events(cq, 1);  // at once: a CQ is destroyed only once all its events are acknowledged
  }
  return Status::Ok();
}

Result<SideMeasurement> VerbsTransport::RunKv(uint64_t page, ControlChannel& control) {
  for (int q = 0; q < static_cast<int>(qp_list_.size()); ++q) RETURN_IF_ERROR(TopUpRecv(q, 0));
  return is_client() ? RunKvClient(page, control) : RunKvServer(page, control);
}

Result<SideMeasurement> VerbsTransport::RunKvServer(uint64_t page, ControlChannel& control) {
  const KvPattern& kv = params_.kv;
  const int nq = static_cast<int>(qp_list_.size());
  const std::string phase = "kv layer notifications";
  // Receives are posted (RunKv) before the table goes out: the client writes
  // nothing before it has the table.
  const uint64_t pool_addr = reinterpret_cast<uint64_t>(region_->data()) + KvMailboxBytes(nq);
  RETURN_IF_ERROR(control
                      .Exchange("kv.page_table", {{"pages", ShuffledPageTable(kv.pool_pages)}, {"addr", pool_addr}},
                                local_.io_timeout)
                      .status());
  MarkPhaseStart();
  std::vector<KvExpect> expect(nq);
  std::vector<std::deque<uint32_t>> acks(nq);  // acknowledgements not posted yet
  std::vector<uint64_t> posted(nq, 0), done(nq, 0);
  std::vector<bool> ended(nq, false);
  uint64_t notifications = 0;
  Clock::time_point last_progress = Clock::now();
  bool armed = false;
  ibv_wc wc[kPollBatch];
  Chain chain;
  for (;;) {
    bool progress = false;
    int n = ibv_poll_cq(recv_cq_.get(), kPollBatch, wc);
    if (n < 0) return InternalError(fmt::format("{}: ibv_poll_cq on the receive CQ failed ({})", phase, n));
    for (int i = 0; i < n; ++i) {
      if (wc[i].status != IBV_WC_SUCCESS) return CompletionError(wc[i], phase);
      const int q = static_cast<int>(wc[i].wr_id >> 32);
      --rx_outstanding_[q];
      RETURN_IF_ERROR(TopUpRecv(q, 0));
      progress = true;
      if (!(wc[i].wc_flags & IBV_WC_WITH_IMM) || wc[i].opcode != IBV_WC_RECV_RDMA_WITH_IMM) {
        return DataLossError(fmt::format("{} during {}: QP {} received a message without an immediate (opcode {}; "
                                         "protocol mismatch?)",
                                         peer_name_, phase, q, static_cast<int>(wc[i].opcode)));
      }
      const uint32_t imm = ntohl(wc[i].imm_data);
      if (imm == kKvEndImm) {
        if (expect[q].layer != 0) {
          return DataLossError(fmt::format("{} during {}: QP {} ended in the middle of a request (layer {} of {})",
                                           peer_name_, phase, q, expect[q].layer, kv.layers));
        }
        ended[q] = true;
        continue;
      }
      if (auto why = CheckNotification(expect[q], imm, kv.layers)) {
        return DataLossError(fmt::format("{} during {}: QP {} notified {} (protocol mismatch?)", peer_name_, phase, q,
                                         *why));
      }
      ++notifications;
      acks[q].push_back(imm);
    }
    for (int q = 0; q < nq; ++q) {
      while (!acks[q].empty() && posted[q] - done[q] < static_cast<uint64_t>(tx_depth_)) {
        const uint64_t seq = posted[q]++;
        ibv_send_wr& w = chain.Add(reinterpret_cast<uint64_t>(region_->data() + SendSlot(q)), kKvNotifyBytes,
                                   region_->mr()->lkey);
        w.wr_id = (static_cast<uint64_t>(q) << 32) | (seq & 0xffffffffu);
        w.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
        w.imm_data = htonl(acks[q].front());
        w.send_flags = IsSignalled(seq, 0, signal_interval_) ? IBV_SEND_SIGNALED : 0;
        if (granted_inline_ >= static_cast<int>(kKvNotifyBytes)) w.send_flags |= IBV_SEND_INLINE;
        w.wr.rdma.remote_addr = peer_.qps[q].addr + peer_.slot_bytes;
        w.wr.rdma.rkey = peer_.rkey;
        acks[q].pop_front();
        progress = true;
        if (chain.full()) RETURN_IF_ERROR(PostChain(q, &chain, "kv acknowledgement"));
      }
      RETURN_IF_ERROR(PostChain(q, &chain, "kv acknowledgement"));
    }
    RETURN_IF_ERROR(PollSendCq(done, "kv acknowledgement", progress));
    bool finished = true;
    for (int q = 0; q < nq; ++q) finished = finished && ended[q] && acks[q].empty();
    // The client sends the end marker only after every acknowledgement
    // arrived, so nothing this side posted is still moving.
    if (finished) break;
    // The decode side sleeps on the completion channel between
    // notifications instead of spinning: one wake-up per layer, and the cores
    // stay with the data path (perftest's passive side does not spin either).
    if (progress) {
      last_progress = Clock::now();
      armed = false;
    } else if (!armed) {
      RETURN_IF_ERROR(ArmCompletions(phase));
      armed = true;  // poll once more: what completed before arming raises no event
    } else {
      RETURN_IF_ERROR(SleepOnCompletions(phase));
      armed = false;
      RETURN_IF_ERROR(CheckStall(last_progress, phase, control));
    }
  }
  ASSIGN_OR_RETURN(nlohmann::json theirs,
                   control.Exchange("verbs.kv.done", {{"notifications", notifications}}, local_.io_timeout));
  const uint64_t sent = model::json_fields::NumberOr(theirs, "notifications", uint64_t{0});
  if (sent != notifications) {
    return DataLossError(fmt::format("{} during kv end of run: it sent {} layer notifications, {} arrived",
                                     peer_name_, sent, notifications));
  }
  // One-sided writes leave no trace here: a notification stands for its
  // layer's pages, which RC ordering placed before it.
  SideMeasurement m;
  m.kv_notifications = notifications;
  m.rx_messages = notifications * kv.pages_per_layer;
  m.rx_bytes = m.rx_messages * page;
  return m;
}

Result<SideMeasurement> VerbsTransport::RunKvClient(uint64_t page, ControlChannel& control) {
  const KvPattern& kv = params_.kv;
  const int nq = static_cast<int>(qp_list_.size());
  ASSIGN_OR_RETURN(nlohmann::json reply,
                   control.Exchange("kv.page_table", nlohmann::json::object(), local_.io_timeout));
  ASSIGN_OR_RETURN(std::vector<uint32_t> table, ParsePageTable(reply, kv.pool_pages, peer_name_));
  const uint64_t pool_addr = model::json_fields::NumberOr(reply, "addr", uint64_t{0});
  const uint64_t peer_base = peer_.qps[0].addr;  // the peer's region starts with QP 0's mailbox
  if (pool_addr < peer_base || kv.pool_pages * page > peer_.region_bytes ||
      pool_addr - peer_base > peer_.region_bytes - kv.pool_pages * page) {
    return DataLossError(fmt::format("{} during kv.page_table: pool at {:#x} ({} pages of {} B) outside its "
                                     "registered region of {} B at {:#x} (protocol mismatch?)",
                                     peer_name_, pool_addr, kv.pool_pages, page, peer_.region_bytes, peer_base));
  }
  const uint64_t source_pages = KvSourcePages(params_);
  const uint64_t source_offset = KvMailboxBytes(nq);
  RETURN_IF_ERROR(region_->Fill(source_offset, source_pages * page, PatternSeed(page, true), 0));

  struct Pending {
    uint64_t request = 0;
    uint32_t imm = 0;
    bool last_layer = false;
    Clock::time_point start, request_start;
  };
  struct Slot {
    explicit Slot(KvSlotPlanner p) : plan(std::move(p)) {}
    KvSlotPlanner plan;
    bool busy = false;      // a request is being posted or acknowledged
    bool no_more = false;   // no request left for this slot: the end marker is next
    bool end_posted = false;
    std::deque<Pending> pending;  // layers posted, not acknowledged yet
    Clock::time_point request_start;
  };
  std::vector<Slot> slots;
  for (int q = 0; q < nq; ++q) slots.emplace_back(KvSlotPlanner(kv, table, source_pages, signal_interval_));
  std::vector<uint64_t> posted(nq, 0), done(nq, 0);
  const uint64_t total = params_.iters != 0 ? params_.warmup + params_.iters : std::numeric_limits<uint64_t>::max();
  uint64_t next_request = 0, pages_sent = 0, notifications_sent = 0;
  SideMeasurement m;
  Clock::time_point first = Clock::time_point::max(), last = Clock::time_point::min();
  MarkPhaseStart();
  const Clock::time_point start = Clock::now();
  const Clock::time_point stop =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(params_.duration_s));
  Clock::time_point last_progress = start;
  unsigned idle = 0;
  ibv_wc wc[kPollBatch];
  Chain chain;
  const std::string phase = "kv page write";
  const uint8_t* base = region_->data();
  for (;;) {
    bool progress = false;
    const Clock::time_point now = Clock::now();
    for (int q = 0; q < nq; ++q) {
      Slot& s = slots[q];
      if (!s.busy && !s.no_more) {
        bool more = next_request < total && (params_.iters != 0 || now < stop) && !local_.cancelled();
        if (more) {
          s.plan.Start(next_request++);
          s.busy = true;
          s.request_start = now;
        } else {
          s.no_more = true;
        }
      }
      while (posted[q] - done[q] < static_cast<uint64_t>(tx_depth_)) {
        KvWr w;
        if (s.busy && s.plan.HasNext()) {
          w = s.plan.Next();
        } else if (s.no_more && !s.end_posted) {
          w = s.plan.End();
          s.end_posted = true;
        } else {
          break;
        }
        ibv_send_wr* wr = nullptr;
        if (w.kind == KvWr::Kind::kPage) {
          wr = &chain.Add(reinterpret_cast<uint64_t>(base + source_offset + w.local_page * page),
                          static_cast<uint32_t>(page), region_->mr()->lkey);
          wr->opcode = IBV_WR_RDMA_WRITE;
          wr->wr.rdma.remote_addr = pool_addr + w.remote_page * page;
          ++pages_sent;
        } else {
          wr = &chain.Add(reinterpret_cast<uint64_t>(base + SendSlot(q)), kKvNotifyBytes, region_->mr()->lkey);
          wr->opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
          wr->imm_data = htonl(w.imm);
          wr->wr.rdma.remote_addr = peer_.qps[q].addr + peer_.slot_bytes;
          if (granted_inline_ >= static_cast<int>(kKvNotifyBytes)) wr->send_flags |= IBV_SEND_INLINE;
          if (w.kind == KvWr::Kind::kNotify) ++notifications_sent;
        }
        if (w.first_of_layer && w.kind != KvWr::Kind::kEnd) {
          s.pending.push_back({s.plan.request(), KvNotifyImm(s.plan.request(), w.layer),
                               w.layer + 1 == static_cast<uint32_t>(kv.layers), Clock::now(), s.request_start});
        }
        wr->wr_id = (static_cast<uint64_t>(q) << 32) | (w.seq & 0xffffffffu);
        wr->wr.rdma.rkey = peer_.rkey;
        if (w.signalled) wr->send_flags |= IBV_SEND_SIGNALED;
        ++posted[q];
        progress = true;
        if (chain.full()) RETURN_IF_ERROR(PostChain(q, &chain, phase));
      }
      RETURN_IF_ERROR(PostChain(q, &chain, phase));
    }
    RETURN_IF_ERROR(PollSendCq(done, phase, progress));
    int n = ibv_poll_cq(recv_cq_.get(), kPollBatch, wc);
    if (n < 0) return InternalError(fmt::format("kv acknowledgement: ibv_poll_cq on the receive CQ failed ({})", n));
    const Clock::time_point got_at = n > 0 ? Clock::now() : Clock::time_point{};
    for (int i = 0; i < n; ++i) {
      if (wc[i].status != IBV_WC_SUCCESS) return CompletionError(wc[i], "kv acknowledgement");
      const int q = static_cast<int>(wc[i].wr_id >> 32);
      --rx_outstanding_[q];
      RETURN_IF_ERROR(TopUpRecv(q, 0));
      progress = true;
      Slot& s = slots[q];
      const uint32_t imm = (wc[i].wc_flags & IBV_WC_WITH_IMM) ? ntohl(wc[i].imm_data) : kKvEndImm;
      if (s.pending.empty() || s.pending.front().imm != imm) {
        return DataLossError(fmt::format(
            "{} during kv acknowledgement: QP {} got an acknowledgement for request {} layer {}, expected {} "
            "(protocol mismatch?)",
            peer_name_, q, KvImmRequest(imm), KvImmLayer(imm),
            s.pending.empty() ? std::string("none") : fmt::format("layer {}", KvImmLayer(s.pending.front().imm))));
      }
      const Pending d = s.pending.front();
      s.pending.pop_front();
      const bool measured = d.request >= params_.warmup;
      if (measured) {
        m.layer_us.push_back(Us(got_at - d.start));
        ++m.kv_notifications;
      }
      if (d.last_layer) {
        s.busy = false;  // the next request of this slot may start
        if (measured) {
          m.request_us.push_back(Us(got_at - d.request_start));
          ++m.kv_requests;
          first = std::min(first, d.request_start);
          last = std::max(last, got_at);
        }
      }
    }
    bool finished = true;
    for (int q = 0; q < nq; ++q) finished = finished && slots[q].end_posted && done[q] >= posted[q];
    if (finished) break;
    if (progress) {
      last_progress = Clock::now();
      idle = 0;
    } else if (++idle % 1024 == 0) {
      RETURN_IF_ERROR(CheckStall(last_progress, slots[0].busy ? phase : "kv acknowledgement", control));
    }
  }
  if (local_.cancelled()) return CancelledError(fmt::format("{} during kv: test stopped", peer_name_));
  RETURN_IF_ERROR(control
                      .Exchange("verbs.kv.done", {{"notifications", notifications_sent}, {"pages", pages_sent}},
                                local_.io_timeout)
                      .status());
  if (m.kv_requests == 0) {
    return FailedPreconditionError(fmt::format(
        "kv: no request completed after the {} warmup request(s); give a longer --duration or more --requests",
        params_.warmup));
  }
  m.iterations = m.kv_requests;
  m.tx_messages = m.kv_requests * static_cast<uint64_t>(kv.layers) * kv.pages_per_layer;
  m.tx_bytes = m.tx_messages * page;
  m.tx_elapsed_s = std::chrono::duration<double>(last - first).count();
  return m;
}

}  // namespace fabcheck::perf::verbs
