// The verbs transport of `fabcheck perf`: RC QPs over rdma-core (libibverbs,
// linked), RDMA write, write with immediate, read and send/receive, several
// QPs, CQ moderation, inline sends, bandwidth and latency with perftest's
// semantics, and optionally connection through rdma_cm (--cm).
//
// Files: gid.* and plan.* and kv_plan.* and conn_info.* (pure logic),
// objects.* (RAII), device.* (open/query), memory.* (registration), connect.cc
// (QP states, rdma_cm), bw.cc, lat.cc and kv.cc (the measured loops: perftest's
// bandwidth and latency, the KV-cache pattern), this file (Setup, Describe).
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "perf/cpu_placement.h"
#include "perf/transport.h"
#include "perf/verbs/conn_info.h"
#include "perf/verbs/device.h"
#include "perf/verbs/gid.h"
#include "perf/verbs/memory.h"
#include "perf/verbs/objects.h"
#include "perf/verbs/retry_counters.h"

namespace fabcheck::perf::verbs {

// Unavailable (with the reason and the fix) when this node has no usable
// RDMA device; nothing is allocated until Setup.
Result<std::unique_ptr<Transport>> CreateVerbsTransport();

class VerbsTransport final : public Transport {
 public:
  TransportKind kind() const override { return TransportKind::kVerbs; }
  Capabilities GetCapabilities() const override;
  uint64_t MemoryNeeded(const TestParams& params, Role role) const override;
  Status Setup(const TestParams& params, const LocalContext& local, ControlChannel& control) override;
  Result<SideMeasurement> RunSize(uint64_t size, ControlChannel& control) override;
  model::PerfEndpoint Describe() const override;

 private:
  // connect.cc
  Status CreateResources(ibv_context* ctx);
  Status CreateQp(int index);
  Status ConnectQps(const ConnInfo& peer);
  Status SetupCm(ControlChannel& control);
  ConnInfo LocalInfo() const;
  // bw.cc / lat.cc
  Result<SideMeasurement> RunBw(uint64_t size, ControlChannel& control);
  Result<SideMeasurement> RunLat(uint64_t size, ControlChannel& control);
  Status RunBwPhase(uint64_t size, uint64_t count, bool measured, ControlChannel& control, SideMeasurement& m);
  Status RunLatPhase(uint64_t size, uint64_t count, bool measured, ControlChannel& control, SideMeasurement& m);
  // kv.cc: the KV-cache pattern (test kKv) on the same QPs and region.
  Result<SideMeasurement> RunKv(uint64_t page, ControlChannel& control);
  Result<SideMeasurement> RunKvClient(uint64_t page, ControlChannel& control);
  Result<SideMeasurement> RunKvServer(uint64_t page, ControlChannel& control);
  // Posts a kv.cc chain of work requests on `qp` and empties it.
  Status PostChain(int qp, void* chain, std::string_view phase);
  // Polls the send CQ once; each signalled completion advances done[qp] past
  // the requests it covers.
  Status PollSendCq(std::vector<uint64_t>& done, std::string_view phase, bool& progress);
  // Arms both CQs on the completion channel; then sleeps on it (a slice at
  // most) until one of them completes something.
  Status ArmCompletions(std::string_view phase);
  Status SleepOnCompletions(std::string_view phase);

  // Helpers shared by the loops.
  bool is_client() const { return local_.role == Role::kClient; }
  uint64_t SendSlot(int qp) const { return static_cast<uint64_t>(qp) * 2 * slot_bytes_; }
  uint64_t RecvSlot(int qp) const { return SendSlot(qp) + slot_bytes_; }
  Status PostRecv(int qp, uint64_t size);
  // Posts receives on `qp` until rx_depth are outstanding.
  Status TopUpRecv(int qp, uint64_t size);
  // Fills send slots with the pattern and clears receive slots before a phase.
  Status PrepareBuffers(uint64_t size, bool fill_send);
  // Checks every receive slot against the peer's pattern (--validate).
  Status ValidateReceived(uint64_t size, uint64_t skip_tail, SideMeasurement& m);
  Status PostOne(int qp, uint64_t size, uint64_t wr_id, bool signalled, bool last_of_phase);
  // A failed completion as an error naming the peer, the phase and the likely cause.
  Status CompletionError(const ibv_wc& wc, std::string_view phase) const;
  // Binds this thread (and so the first touch of the buffers) per --numa to
  // the device's NUMA node; the thread's affinity is restored on destruction.
  Status BindNuma(ibv_context* ctx);
  // Remembers the port's retry counters at the start of a phase.
  void MarkPhaseStart();
  // " (meanwhile DEV port N retransmitted: ...; the path loses packets...)" or "".
  std::string RetryDiagnosis() const;
  // Cancelled when the engine cancelled; Unavailable when the peer closed the
  // control connection after a second without progress (it died: no need to
  // wait out the timeout); DeadlineExceeded, with the retry counters' story,
  // after io_timeout without progress.
  Status CheckStall(std::chrono::steady_clock::time_point last_progress, std::string_view phase,
                    ControlChannel& control) const;
  // How long a passive side waits for the active side to finish a phase.
  std::chrono::milliseconds PhaseTimeout(uint64_t size, uint64_t count) const;

  std::optional<ScopedAffinity> affinity_restore_;
  TestParams params_;
  LocalContext local_;
  std::string peer_name_;

  // Verbs objects, in creation order: members are destroyed in reverse, which
  // is the order verbs requires (QPs, MR, CQs, channel, PD, context, cm channel).
  EventChannelPtr cm_channel_;
  std::optional<Device> device_;     // owns the context when not using rdma_cm
  ibv_context* ctx_ = nullptr;       // device_->context, or the rdma_cm id's context
  PdPtr pd_;
  CompChannelPtr comp_channel_;
  CqPtr send_cq_;
  CqPtr recv_cq_;
  std::optional<Region> region_;
  std::vector<QpPtr> qps_;           // plain verbs QPs
  CmIdPtr cm_listen_;
  std::vector<CmIdPtr> cm_ids_;      // rdma_cm ids (own their QPs in --cm mode)
  std::vector<ibv_qp*> qp_list_;     // the QPs in use, whoever owns them

  // What was chosen.
  PortState port_;
  std::string device_name_;
  GidChoice gid_;
  ConnInfo peer_;
  std::vector<uint32_t> local_psn_;
  int path_mtu_ = 0;
  std::string mtu_reason_;
  int read_depth_ = 1;
  int granted_inline_ = 0;
  uint64_t slot_bytes_ = 0;
  int tx_depth_ = 0;
  int rx_depth_ = 0;
  int signal_interval_ = 1;
  std::vector<int> rx_outstanding_;  // receives posted and not yet completed, per QP
  NumaBinding numa_;
  CounterValues retry_at_phase_start_;
  std::vector<std::string> notes_;
};

}  // namespace fabcheck::perf::verbs
