#include "perf/verbs/verbs_transport.h"

#include "sys/infiniband.h"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <mutex>

#include "base/log.h"
#include "base/strings.h"
#include "dl/cuda.h"
#include "fabcheck/version.h"
#include "perf/verbs/kv_plan.h"
#include "perf/verbs/plan.h"
#include "sys/sysroot.h"

namespace fabcheck::perf::verbs {

Result<std::unique_ptr<Transport>> CreateVerbsTransport() {
  // Fail here, cleanly, when the node has no RDMA at all (ENOSYS, no device):
  // the engine reports it before anything is negotiated.
  RETURN_IF_ERROR(ListDevices().status());
  return std::unique_ptr<Transport>(std::make_unique<VerbsTransport>());
}

namespace {

// The largest inline size an RC QP on the first active device grants, found
// by asking (devices do not report it in their attributes). 0 on failure.
int ProbeMaxInline() {
  auto dev = OpenDevice("", 0, "");
  if (!dev.ok()) return 0;
  PdPtr pd(ibv_alloc_pd(dev->context.get()));
  CqPtr cq(pd ? ibv_create_cq(dev->context.get(), 4, nullptr, nullptr, 0) : nullptr);
  if (!cq) return 0;
  for (int size : {1024, 512, 256, 128, 64}) {
    ibv_qp_init_attr a{};
    a.send_cq = a.recv_cq = cq.get();
    a.qp_type = IBV_QPT_RC;
    a.cap = {1, 1, 1, 1, static_cast<uint32_t>(size)};
    QpPtr qp(ibv_create_qp(pd.get(), &a));
    if (qp) return static_cast<int>(a.cap.max_inline_data);
  }
  return 0;
}

}  // namespace

Capabilities VerbsTransport::GetCapabilities() const {
  Capabilities c;
  auto devices = ListDevices();
  if (!devices.ok()) {
    c.notes.push_back(devices.status().message());
    c.max_streams = 0;
    return c;
  }
  c.ops = {model::PerfOp::kWrite, model::PerfOp::kWriteImm, model::PerfOp::kRead, model::PerfOp::kSend};
  c.bidir = true;
  c.max_streams = 1024;
  c.max_message = uint64_t{1} << 30;
  c.rdma_cm = true;
  c.duration_mode = true;
  c.kv = true;
  static std::once_flag once;
  static int max_inline = 0;
  std::call_once(once, [] { max_inline = ProbeMaxInline(); });
  c.max_inline = max_inline;
  auto cuda = dl::LoadCuda();
  c.cuda_memory = cuda.ok();
  c.gpudirect = cuda.ok();  // verbs never stages: GPU buffers are registered directly or refused
  if (!cuda.ok()) c.notes.push_back("--mem cuda:N unavailable: " + cuda.status().message());
  return c;
}

uint64_t VerbsTransport::MemoryNeeded(const TestParams& params, Role role) const {
  if (params.sizes.empty()) return 0;
  if (params.test == model::PerfTest::kKv) return KvRegionBytes(params, role);
  return RegionBytes(*std::max_element(params.sizes.begin(), params.sizes.end()), params.streams);
}

Status VerbsTransport::Setup(const TestParams& params, const LocalContext& local, ControlChannel& control) {
  params_ = params;
  local_ = local;
  local_.spec = &params_.local(local.role);
  peer_name_ = control.PeerName();
  RETURN_IF_ERROR(ValidateVerbsParams(params_));
  const EndpointSpec& spec = *local_.spec;
  if (spec.mem.is_cuda() && !dl::LoadCuda().ok()) {
    return FailedPreconditionError(fmt::format("--mem {} needs the CUDA runtime, which is unavailable here: {}",
                                               spec.mem.ToString(), dl::LoadCuda().status().message()));
  }
  if (params_.use_cm) {
    RETURN_IF_ERROR(SetupCm(control).WithContext("rdma_cm connection"));
  } else {
    ASSIGN_OR_RETURN(Device dev, OpenDevice(spec.device, spec.port, local_.control_local_addr));
    device_ = std::move(dev);
    device_name_ = device_->name;
    port_ = device_->port;
    if (!port_.infiniband) port_.netdevs = PortNetdevs(*local_.root, port_.gids);
    ASSIGN_OR_RETURN(gid_, SelectGid(port_.gids, port_.infiniband, port_.netdevs, spec.gid_index));
    for (const std::string& n : gid_.notes) notes_.push_back(n);
    RETURN_IF_ERROR(CreateResources(device_->context.get()));
    for (int i = 0; i < params_.streams; ++i) RETURN_IF_ERROR(CreateQp(i));
  }
  ASSIGN_OR_RETURN(nlohmann::json peer_json,
                   control.Exchange("verbs.connect", ConnInfoToJson(LocalInfo()), local_.connect_timeout));
  ASSIGN_OR_RETURN(peer_, ParseConnInfo(peer_json, qp_list_.size(), port_.infiniband));
  if (!params_.use_cm) RETURN_IF_ERROR(ConnectQps(peer_));
  // Nobody sends before both sides are in RTS.
  RETURN_IF_ERROR(control.Barrier("verbs.ready", local_.connect_timeout));
  LOG_INFO("verbs", "{} port {}: GID {} ({}), path MTU {} ({}), {} QP(s), inline up to {} B, {} registration",
           device_name_, port_.port, gid_.entry.index, gid_.reason, path_mtu_, mtu_reason_, qp_list_.size(),
           granted_inline_, region_->registration());
  return Status::Ok();
}

model::PerfEndpoint VerbsTransport::Describe() const {
  model::PerfEndpoint e;
  e.role = std::string(RoleName(local_.role));
  e.host = local_.control_local_addr;
  e.fabcheck_version = kVersion;
  e.device = device_name_;
  e.port = port_.port;
  if (gid_.entry.index >= 0) e.gid_index = gid_.entry.index;
  e.gid_type = port_.infiniband ? "IB" : std::string(GidTypeName(gid_.entry.type));
  e.gid = FormatGid(gid_.entry.gid);
  e.link_layer = port_.infiniband ? "InfiniBand" : "Ethernet";
  e.mtu = path_mtu_;
  e.port_mtu = port_.active_mtu;
  e.memory = local_.spec ? local_.spec->mem.ToString() : "host";
  e.registration = region_ ? region_->registration() : "";
  e.gpudirect = region_ && region_->on_gpu();
  e.numa_policy = local_.spec ? local_.spec->numa.ToString() : "auto";
  e.notes = notes_;
  e.notes.push_back("GID: " + gid_.reason);
  e.notes.push_back("path MTU: " + mtu_reason_);
  if (!port_.netdevs.empty()) e.notes.push_back("netdev: " + port_.netdevs.front());
  e.notes.push_back(fmt::format("QPs: {} RC{}, send depth {}, signal every {}, inline up to {} B, {} outstanding reads",
                                qp_list_.size(), params_.use_cm ? " via rdma_cm" : "", tx_depth_, signal_interval_,
                                granted_inline_, read_depth_));
  if (params_.test == model::PerfTest::kKv && region_) {
    e.notes.push_back(fmt::format("kv: {} of {} pages ({} B), one RDMA WRITE per page and post, "
                                  "WRITE_WITH_IMM per layer",
                                  local_.role == Role::kServer ? "destination pool" : "source",
                                  local_.role == Role::kServer ? params_.kv.pool_pages : KvSourcePages(params_),
                                  params_.sizes[0]));
  }
  e.numa_node = numa_.node;
  e.cpus = numa_.cpus;
  if (!numa_.note.empty()) e.notes.push_back(numa_.note);
  return e;
}

Result<SideMeasurement> VerbsTransport::RunSize(uint64_t size, ControlChannel& control) {
  if (!region_ || qp_list_.empty()) return FailedPreconditionError("verbs RunSize before a successful Setup");
  if (params_.test == model::PerfTest::kKv) return RunKv(size, control);
  if (size > slot_bytes_) {
    return InvalidArgumentError(fmt::format("size {} above the largest size {} Setup was given", size, slot_bytes_));
  }
  return params_.test == model::PerfTest::kBw ? RunBw(size, control) : RunLat(size, control);
}

Status VerbsTransport::PostRecv(int qp, uint64_t size) {
  ibv_sge sge{reinterpret_cast<uint64_t>(region_->data() + RecvSlot(qp)), static_cast<uint32_t>(size),
              region_->mr()->lkey};
  ibv_recv_wr wr{};
  wr.wr_id = static_cast<uint64_t>(qp) << 32;  // the QP in the high half, as for sends
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  if (int rc = ibv_post_recv(qp_list_[qp], &wr, &bad); rc != 0) {
    return ErrnoError(rc, fmt::format("ibv_post_recv on QP {} ({})", qp, peer_name_));
  }
  return Status::Ok();
}

// One work request of the test's op on `qp`. Reads fetch the peer's send slot
// into our receive slot; writes and sends go from our send slot to the peer's
// receive slot.
Status VerbsTransport::PostOne(int qp, uint64_t size, uint64_t wr_id, bool signalled, bool last_of_phase) {
  model::PerfOp op = params_.op;
  bool read = op == model::PerfOp::kRead;
  ibv_sge sge{reinterpret_cast<uint64_t>(region_->data() + (read ? RecvSlot(qp) : SendSlot(qp))),
              static_cast<uint32_t>(size), region_->mr()->lkey};
  ibv_send_wr wr{};
  wr.wr_id = wr_id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.send_flags = signalled ? IBV_SEND_SIGNALED : 0;
  if (UseInline(size, params_.inline_size, granted_inline_, op)) wr.send_flags |= IBV_SEND_INLINE;
  uint64_t remote = peer_.qps[qp].addr + (read ? 0 : peer_.slot_bytes);
  switch (op) {
    case model::PerfOp::kWrite: wr.opcode = IBV_WR_RDMA_WRITE; break;
    case model::PerfOp::kWriteImm:
      wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
      wr.imm_data = htonl(last_of_phase ? 1u : 0u);
      break;
    case model::PerfOp::kRead: wr.opcode = IBV_WR_RDMA_READ; break;
    case model::PerfOp::kSend:
      // The last send of a phase carries an immediate so a receiver in
      // duration mode knows the sender stopped.
      wr.opcode = last_of_phase ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND;
      wr.imm_data = htonl(1u);
      break;
  }
  if (op != model::PerfOp::kSend) {
    wr.wr.rdma.remote_addr = remote;
    wr.wr.rdma.rkey = peer_.rkey;
  }
  ibv_send_wr* bad = nullptr;
  if (int rc = ibv_post_send(qp_list_[qp], &wr, &bad); rc != 0) {
    return ErrnoError(rc, fmt::format("ibv_post_send ({}) on QP {} ({})", model::PerfOpName(op), qp, peer_name_));
  }
  return Status::Ok();
}

Status VerbsTransport::CompletionError(const ibv_wc& wc, std::string_view phase) const {
  std::string hint;
  switch (wc.status) {
    case IBV_WC_RETRY_EXC_ERR:
      hint = "the peer stopped acknowledging: it died, or the path drops packets (loss, MTU mismatch, wrong GID)";
      break;
    case IBV_WC_RNR_RETRY_EXC_ERR: hint = "the peer posted no receive buffers in time"; break;
    case IBV_WC_REM_ACCESS_ERR: hint = "the peer refused the remote address/rkey"; break;
    case IBV_WC_WR_FLUSH_ERR: hint = "the QP is in error after an earlier failure"; break;
    default: break;
  }
  return UnavailableError(fmt::format("{}: completion on QP {} failed with {} (vendor error {:#x}), peer {}{}{}{}",
                                      phase, wc.wr_id >> 32, ibv_wc_status_str(wc.status), wc.vendor_err, peer_name_,
                                      hint.empty() ? "" : ": ", hint,
                                      wc.status == IBV_WC_RETRY_EXC_ERR ? RetryDiagnosis() : ""));
}

Status VerbsTransport::BindNuma(ibv_context* ctx) {
  const std::string device = ibv_get_device_name(ctx->device);
  std::optional<int> node;
  auto text = local_.root->ReadAttribute(sys::infiniband::NumaNodeFile(device));
  if (text.ok()) {
    if (auto v = ParseInt(*text); v && *v >= 0) node = static_cast<int>(*v);
  }
  ASSIGN_OR_RETURN(numa_, ResolveNuma(*local_.root, local_.spec->numa, node, device));
  if (!numa_.cpus.empty()) {
    affinity_restore_.emplace();
    PinThread(numa_.cpus);
  }
  return Status::Ok();
}

void VerbsTransport::MarkPhaseStart() {
  if (!device_name_.empty()) retry_at_phase_start_ = ReadRetryCounters(*local_.root, device_name_, port_.port);
}

std::string VerbsTransport::RetryDiagnosis() const {
  if (device_name_.empty()) return "";
  std::string grown =
      DescribeRetryGrowth(retry_at_phase_start_, ReadRetryCounters(*local_.root, device_name_, port_.port));
  if (grown.empty()) return "";
  return fmt::format(
      "; meanwhile {} port {} retransmitted ({}): the path loses packets (an MTU below the path MTU {} on a link or "
      "switch, a link down, congestion drops); check the switch port MTUs and counters, and run `fabcheck doctor`",
      device_name_, port_.port, grown, path_mtu_);
}

Status VerbsTransport::CheckStall(std::chrono::steady_clock::time_point last_progress, std::string_view phase,
                                  ControlChannel& control) const {
  if (local_.cancelled()) return CancelledError(fmt::format("{}: cancelled ({})", phase, peer_name_));
  auto idle = std::chrono::steady_clock::now() - last_progress;
  if (idle > std::chrono::seconds(1)) {
    if (std::optional<Status> gone = control.PeerGone()) return gone->WithContext(phase);
  }
  if (idle > local_.io_timeout) {
    std::string diagnosis = RetryDiagnosis();
    return DeadlineExceededError(fmt::format("{}: no completion for {} ms from peer {}{}", phase,
                                             local_.io_timeout.count(), peer_name_,
                                             diagnosis.empty() ? " (it stalled or died)" : diagnosis));
  }
  return Status::Ok();
}

std::chrono::milliseconds VerbsTransport::PhaseTimeout(uint64_t size, uint64_t count) const {
  // The passive side of a write/read test waits for the active side's "done";
  // allow the run itself at 10 Mb/s (emulated soft-RoCE on a busy host is that
  // slow), or the duration, plus io_timeout.
  double seconds = params_.iters == 0 ? params_.duration_s
                                      : static_cast<double>(size * count * params_.streams) * 8 / 10e6;
  seconds = std::min(seconds, 24.0 * 3600);
  return local_.io_timeout + std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}

}  // namespace fabcheck::perf::verbs
