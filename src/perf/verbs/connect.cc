// Creating the verbs resources and connecting the RC QPs: INIT -> RTR -> RTS
// with the negotiated MTU, PSNs, GID, traffic class and service level; or
// through rdma_cm (--cm), where the CM resolves the route and moves the QPs.
#include <fmt/format.h>

#include <arpa/inet.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>

#include "base/log.h"
#include "fabcheck/model/json_fields.h"
#include "perf/verbs/kv_plan.h"
#include "perf/verbs/plan.h"
#include "perf/verbs/verbs_transport.h"

namespace fabcheck::perf::verbs {

namespace {

constexpr int kRxDepth = 512;        // receives posted per QP (perftest's default rx depth)
constexpr uint8_t kTimeout = 14;     // 4.096 us * 2^14 = 67 ms per retry (perftest)
constexpr uint8_t kRetryCount = 7;
constexpr uint8_t kRnrRetry = 7;     // 7 = retry forever on receiver-not-ready
constexpr uint8_t kMinRnrTimer = 12;

int AccessFlags() { return IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ; }

}  // namespace

Status VerbsTransport::CreateResources(ibv_context* ctx) {
  ctx_ = ctx;
  RETURN_IF_ERROR(BindNuma(ctx));
  pd_.reset(ibv_alloc_pd(ctx));
  if (!pd_) return ErrnoError(errno, "ibv_alloc_pd on " + device_name_);
  const int qps = params_.streams;
  bool lat = params_.test == model::PerfTest::kLat;
  tx_depth_ = lat ? std::min(params_.tx_depth, 16) : params_.tx_depth;
  rx_depth_ = kRxDepth;
  signal_interval_ = lat ? 1 : SignalInterval(params_.cq_moderation, tx_depth_);
  // The completion channel lets a later blocking mode sleep on completions;
  // the measured loops busy-poll, as perftest does by default.
  comp_channel_.reset(ibv_create_comp_channel(ctx));
  if (!comp_channel_) return ErrnoError(errno, "ibv_create_comp_channel on " + device_name_);
  int send_cqe = tx_depth_ * qps + 16;
  int recv_cqe = rx_depth_ * qps + 16;
  send_cq_.reset(ibv_create_cq(ctx, send_cqe, nullptr, comp_channel_.get(), 0));
  if (!send_cq_) return ErrnoError(errno, fmt::format("ibv_create_cq ({} entries) on {}", send_cqe, device_name_));
  recv_cq_.reset(ibv_create_cq(ctx, recv_cqe, nullptr, comp_channel_.get(), 0));
  if (!recv_cq_) return ErrnoError(errno, fmt::format("ibv_create_cq ({} entries) on {}", recv_cqe, device_name_));
  uint64_t largest = *std::max_element(params_.sizes.begin(), params_.sizes.end());
  // kv: the slots are the QPs' notification mailboxes, the pages follow them (kv_plan.h).
  const bool kv = params_.test == model::PerfTest::kKv;
  slot_bytes_ = kv ? kKvMailboxSlot : SlotBytes(largest);
  uint64_t bytes = kv ? KvRegionBytes(params_, local_.role) : RegionBytes(largest, qps);
  ASSIGN_OR_RETURN(Region r, Region::Allocate(pd_.get(), bytes, params_.local(local_.role).mem, AccessFlags()));
  region_ = std::move(r);
  if (!region_->note().empty()) notes_.push_back(region_->note());
  return Status::Ok();
}

namespace {

ibv_qp_init_attr QpInitAttr(ibv_cq* send_cq, ibv_cq* recv_cq, int tx_depth, int rx_depth, int inline_size) {
  ibv_qp_init_attr a{};
  a.send_cq = send_cq;
  a.recv_cq = recv_cq;
  a.qp_type = IBV_QPT_RC;
  a.cap.max_send_wr = static_cast<uint32_t>(tx_depth);
  a.cap.max_recv_wr = static_cast<uint32_t>(rx_depth);
  a.cap.max_send_sge = 1;
  a.cap.max_recv_sge = 1;
  a.cap.max_inline_data = static_cast<uint32_t>(inline_size);
  return a;
}

}  // namespace

Status VerbsTransport::CreateQp(int index) {
  ibv_qp_init_attr a = QpInitAttr(send_cq_.get(), recv_cq_.get(), tx_depth_, rx_depth_, params_.inline_size);
  QpPtr qp(ibv_create_qp(pd_.get(), &a));
  if (!qp) {
    return ErrnoError(errno, fmt::format("ibv_create_qp (RC, send depth {}, inline {}) on {}", tx_depth_,
                                         params_.inline_size, device_name_),
                      " (lower --tx-depth or --inline)");
  }
  granted_inline_ = static_cast<int>(a.cap.max_inline_data);
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_INIT;
  attr.pkey_index = 0;
  attr.port_num = static_cast<uint8_t>(port_.port);
  attr.qp_access_flags = AccessFlags();
  if (int rc = ibv_modify_qp(qp.get(), &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
      rc != 0) {
    return ErrnoError(rc, fmt::format("ibv_modify_qp QP {} to INIT", index));
  }
  qp_list_.push_back(qp.get());
  local_psn_.push_back(RandomPsn());
  qps_.push_back(std::move(qp));
  return Status::Ok();
}

ConnInfo VerbsTransport::LocalInfo() const {
  ConnInfo c;
  c.device = device_name_;
  c.port = port_.port;
  c.infiniband = port_.infiniband;
  c.lid = port_.lid;
  c.gid = gid_.entry.gid;
  c.gid_index = gid_.entry.index;
  c.gid_type = std::string(GidTypeName(gid_.entry.type));
  c.active_mtu = port_.active_mtu;
  c.max_rd_atomic = std::min(device_ ? device_->attr.max_qp_rd_atom : 16, 16);
  c.rkey = region_->mr()->rkey;
  c.region_bytes = region_->bytes();
  c.slot_bytes = slot_bytes_;
  for (size_t i = 0; i < qp_list_.size(); ++i) {
    c.qps.push_back({qp_list_[i]->qp_num, local_psn_[i], reinterpret_cast<uint64_t>(region_->data()) + SendSlot(i)});
  }
  return c;
}

Status VerbsTransport::ConnectQps(const ConnInfo& peer) {
  ASSIGN_OR_RETURN(MtuChoice mtu, NegotiateMtu(port_.active_mtu, peer.active_mtu, params_.mtu));
  path_mtu_ = mtu.bytes;
  mtu_reason_ = mtu.reason;
  int init_rd_atom = device_ ? device_->attr.max_qp_init_rd_atom : 16;
  read_depth_ = NegotiateReadDepth(init_rd_atom, peer.max_rd_atomic);
  for (size_t i = 0; i < qp_list_.size(); ++i) {
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_RTR;
    a.path_mtu = static_cast<ibv_mtu>(*MtuEnumFromBytes(path_mtu_));
    a.dest_qp_num = peer.qps[i].qpn;
    a.rq_psn = peer.qps[i].psn;
    a.max_dest_rd_atomic = static_cast<uint8_t>(std::min(device_ ? device_->attr.max_qp_rd_atom : 16, 16));
    a.min_rnr_timer = kMinRnrTimer;
    a.ah_attr.port_num = static_cast<uint8_t>(port_.port);
    a.ah_attr.sl = static_cast<uint8_t>(params_.sl.value_or(0));
    a.ah_attr.dlid = peer.lid;
    // RoCE always needs the GRH; IB uses it here too so GID-routed fabrics work.
    a.ah_attr.is_global = 1;
    std::copy(peer.gid.begin(), peer.gid.end(), a.ah_attr.grh.dgid.raw);
    a.ah_attr.grh.sgid_index = static_cast<uint8_t>(gid_.entry.index);
    a.ah_attr.grh.hop_limit = 64;
    a.ah_attr.grh.traffic_class = static_cast<uint8_t>(params_.tclass.value_or(0));
    int mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
               IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
    if (int rc = ibv_modify_qp(qp_list_[i], &a, mask); rc != 0) {
      return ErrnoError(rc, fmt::format("ibv_modify_qp QP {} to RTR (peer {} QPN {:#x}, GID {}, MTU {})", i,
                                        peer.device, peer.qps[i].qpn, FormatGid(peer.gid), path_mtu_),
                        " (check the GID index and that both ends are on a routable path)");
    }
    ibv_qp_attr s{};
    s.qp_state = IBV_QPS_RTS;
    s.timeout = kTimeout;
    s.retry_cnt = kRetryCount;
    s.rnr_retry = kRnrRetry;
    s.sq_psn = local_psn_[i];
    s.max_rd_atomic = static_cast<uint8_t>(read_depth_);
    mask = IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
           IBV_QP_MAX_QP_RD_ATOMIC;
    if (int rc = ibv_modify_qp(qp_list_[i], &s, mask); rc != 0) {
      return ErrnoError(rc, fmt::format("ibv_modify_qp QP {} to RTS", i));
    }
  }
  return Status::Ok();
}

// rdma_cm: the server listens on its control address (port chosen by the
// kernel, sent over the control channel); the client resolves the route to
// the server's control address and connects one CM id per QP. The device is
// the one rdma_cm resolves the address to.
Status VerbsTransport::SetupCm(ControlChannel& control) {
  cm_channel_.reset(rdma_create_event_channel());
  if (!cm_channel_) return ErrnoError(errno, "rdma_create_event_channel", " (is rdma_ucm loaded?)");
  auto wait_event = [&](rdma_cm_event_type want, std::string_view what) -> Result<rdma_cm_event*> {
    pollfd pfd{cm_channel_->fd, POLLIN, 0};
    int rc = poll(&pfd, 1, static_cast<int>(local_.connect_timeout.count()));
    if (rc == 0) {
      return DeadlineExceededError(fmt::format("rdma_cm: no {} event within {} ms ({})", what,
                                               local_.connect_timeout.count(), peer_name_));
    }
    if (rc < 0) return ErrnoError(errno, "poll on the rdma_cm event channel");
    rdma_cm_event* ev = nullptr;
    if (rdma_get_cm_event(cm_channel_.get(), &ev) != 0) return ErrnoError(errno, "rdma_get_cm_event");
    if (ev->event != want) {
      std::string got = rdma_event_str(ev->event);
      int status = ev->status;
      rdma_ack_cm_event(ev);
      return UnavailableError(fmt::format("rdma_cm: {} got {} (status {}) instead of {} ({}); "
                                          "is {} the address of an RDMA port on both sides?",
                                          what, got, status, rdma_event_str(want), peer_name_,
                                          local_.control_peer_addr));
    }
    return ev;
  };
  auto make_addr = [](const std::string& ip, uint16_t port, sockaddr_in* sa) -> Status {
    *sa = {};
    sa->sin_family = AF_INET;
    sa->sin_port = htons(port);
    if (inet_pton(AF_INET, ip.c_str(), &sa->sin_addr) != 1) {
      return InvalidArgumentError(fmt::format("--cm needs IPv4 control addresses, got '{}'", ip));
    }
    return Status::Ok();
  };
  const int qps = params_.streams;
  if (!is_client()) {
    rdma_cm_id* id = nullptr;
    if (rdma_create_id(cm_channel_.get(), &id, nullptr, RDMA_PS_TCP) != 0) return ErrnoError(errno, "rdma_create_id");
    cm_listen_.reset(id);
    sockaddr_in sa;
    RETURN_IF_ERROR(make_addr(local_.control_local_addr, 0, &sa));
    if (rdma_bind_addr(id, reinterpret_cast<sockaddr*>(&sa)) != 0) {
      return ErrnoError(errno, "rdma_bind_addr " + local_.control_local_addr, " (no RDMA device owns this address)");
    }
    if (rdma_listen(id, qps) != 0) return ErrnoError(errno, "rdma_listen");
    uint16_t port = ntohs(rdma_get_src_port(id));
    RETURN_IF_ERROR(control.Exchange("verbs.cm.listen", {{"port", port}}, local_.connect_timeout).status());
  } else {
    ASSIGN_OR_RETURN(auto j, control.Exchange("verbs.cm.listen", nlohmann::json::object(), local_.connect_timeout));
    uint16_t port = model::json_fields::NumberOr(j, "port", 0);
    if (port == 0) return InvalidArgumentError("server sent no rdma_cm port");
    sockaddr_in dst;
    RETURN_IF_ERROR(make_addr(local_.control_peer_addr, port, &dst));
    for (int i = 0; i < qps; ++i) {
      rdma_cm_id* id = nullptr;
      if (rdma_create_id(cm_channel_.get(), &id, nullptr, RDMA_PS_TCP) != 0) return ErrnoError(errno, "rdma_create_id");
      cm_ids_.emplace_back(id);
      if (rdma_resolve_addr(id, nullptr, reinterpret_cast<sockaddr*>(&dst), local_.connect_timeout.count()) != 0) {
        return ErrnoError(errno, "rdma_resolve_addr " + local_.control_peer_addr);
      }
      ASSIGN_OR_RETURN(rdma_cm_event * ev, wait_event(RDMA_CM_EVENT_ADDR_RESOLVED, "address resolution"));
      rdma_ack_cm_event(ev);
      if (rdma_resolve_route(id, local_.connect_timeout.count()) != 0) return ErrnoError(errno, "rdma_resolve_route");
      ASSIGN_OR_RETURN(ev, wait_event(RDMA_CM_EVENT_ROUTE_RESOLVED, "route resolution"));
      rdma_ack_cm_event(ev);
    }
  }
  // Resources on the device rdma_cm chose; then one QP per id, connected in order.
  int cm_rd_atom = 1;
  for (int i = 0; i < qps; ++i) {
    rdma_cm_id* id = nullptr;
    if (!is_client()) {
      ASSIGN_OR_RETURN(rdma_cm_event * ev, wait_event(RDMA_CM_EVENT_CONNECT_REQUEST, "connection request"));
      id = ev->id;
      rdma_ack_cm_event(ev);
      cm_ids_.emplace_back(id);
    } else {
      id = cm_ids_[i].get();
    }
    if (i == 0) {
      device_name_ = ibv_get_device_name(id->verbs->device);
      ASSIGN_OR_RETURN(port_, QueryPort(id->verbs, device_name_, id->port_num));
      gid_.reason = "rdma_cm: chosen by route resolution";
      gid_.entry.index = -1;
      RETURN_IF_ERROR(CreateResources(id->verbs));
      ibv_device_attr attr{};
      if (ibv_query_device(id->verbs, &attr) == 0) cm_rd_atom = std::max(1, std::min(attr.max_qp_rd_atom, 16));
    }
    ibv_qp_init_attr a = QpInitAttr(send_cq_.get(), recv_cq_.get(), tx_depth_, rx_depth_, params_.inline_size);
    if (rdma_create_qp(id, pd_.get(), &a) != 0) return ErrnoError(errno, fmt::format("rdma_create_qp {}", i));
    granted_inline_ = static_cast<int>(a.cap.max_inline_data);
    qp_list_.push_back(id->qp);
    local_psn_.push_back(0);
    rdma_conn_param cp{};
    cp.responder_resources = static_cast<uint8_t>(cm_rd_atom);
    cp.initiator_depth = static_cast<uint8_t>(cm_rd_atom);
    cp.retry_count = kRetryCount;
    cp.rnr_retry_count = kRnrRetry;
    if (is_client()) {
      if (rdma_connect(id, &cp) != 0) return ErrnoError(errno, fmt::format("rdma_connect QP {}", i));
      ASSIGN_OR_RETURN(rdma_cm_event * ev, wait_event(RDMA_CM_EVENT_ESTABLISHED, "connection"));
      rdma_ack_cm_event(ev);
    } else {
      if (rdma_accept(id, &cp) != 0) return ErrnoError(errno, fmt::format("rdma_accept QP {}", i));
      ASSIGN_OR_RETURN(rdma_cm_event * ev, wait_event(RDMA_CM_EVENT_ESTABLISHED, "connection"));
      rdma_ack_cm_event(ev);
    }
  }
  // The CM picked the path: report what the QP really uses.
  ibv_qp_attr qa{};
  ibv_qp_init_attr qi{};
  if (ibv_query_qp(qp_list_[0], &qa, IBV_QP_PATH_MTU | IBV_QP_AV | IBV_QP_MAX_QP_RD_ATOMIC, &qi) == 0) {
    path_mtu_ = MtuBytesFromEnum(qa.path_mtu);
    read_depth_ = std::max<int>(1, qa.max_rd_atomic);
    gid_.entry.index = qa.ah_attr.grh.sgid_index;
    for (const GidEntry& e : port_.gids) {
      if (e.index == gid_.entry.index) gid_.entry = e;
    }
  }
  mtu_reason_ = "chosen by rdma_cm";
  return Status::Ok();
}

}  // namespace fabcheck::perf::verbs
