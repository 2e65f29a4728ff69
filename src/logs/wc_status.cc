#include "logs/wc_status.h"

namespace fabcheck::logs {
namespace {

// Values and names from rdma-core libibverbs/verbs.h (enum ibv_wc_status);
// meanings from ibv_poll_cq(3) and the InfiniBand spec's completion errors.
constexpr WcStatusInfo kStatuses[] = {
    {0, "IBV_WC_SUCCESS", "success"},
    {1, "IBV_WC_LOC_LEN_ERR", "local length error: a received message was larger than the posted receive buffer"},
    {2, "IBV_WC_LOC_QP_OP_ERR", "local QP operation error: an internal QP consistency error (bad WR, QP state)"},
    {3, "IBV_WC_LOC_EEC_OP_ERR", "local EE context operation error (RD transport; not used by NCCL)"},
    {4, "IBV_WC_LOC_PROT_ERR", "local protection error: the local buffer is not in a valid memory region for "
                               "this access (deregistered, wrong lkey, GPU memory not registrable)"},
    {5, "IBV_WC_WR_FLUSH_ERR", "work request flushed: the QP had already entered the error state, so "
                               "outstanding requests were flushed (a consequence of an earlier error)"},
    {6, "IBV_WC_MW_BIND_ERR", "memory window bind error"},
    {7, "IBV_WC_BAD_RESP_ERR", "bad response: an unexpected transport-layer opcode came back from the responder"},
    {8, "IBV_WC_LOC_ACCESS_ERR", "local access error: a protection error on a local data buffer during an "
                                 "incoming RDMA write"},
    {9, "IBV_WC_REM_INV_REQ_ERR", "remote invalid request: the responder saw an invalid message (length, "
                                  "opcode, or an access it does not support)"},
    {10, "IBV_WC_REM_ACCESS_ERR", "remote access error: the responder's memory region rejected the access "
                                  "(bad rkey, region deregistered, missing remote access rights)"},
    {11, "IBV_WC_REM_OP_ERR", "remote operation error: the responder could not complete the operation"},
    {12, "IBV_WC_RETRY_EXC_ERR", "transport retry counter exceeded: the sender got no ACK from the peer after "
                                 "all retries (packets lost on the path, or the peer is gone)"},
    {13, "IBV_WC_RNR_RETRY_EXC_ERR", "RNR retry counter exceeded: the peer kept answering receiver-not-ready "
                                     "(no receive posted in time)"},
    {14, "IBV_WC_LOC_RDD_VIOL_ERR", "local RDD violation (RD transport)"},
    {15, "IBV_WC_REM_INV_RD_REQ_ERR", "remote invalid RD request (RD transport)"},
    {16, "IBV_WC_REM_ABORT_ERR", "remote aborted: the responder aborted the operation"},
    {17, "IBV_WC_INV_EECN_ERR", "invalid EE context number (RD transport)"},
    {18, "IBV_WC_INV_EEC_STATE_ERR", "invalid EE context state (RD transport)"},
    {19, "IBV_WC_FATAL_ERR", "fatal error: the device hit a catastrophic error (check dmesg; the HCA may need a "
                             "reset)"},
    {20, "IBV_WC_RESP_TIMEOUT_ERR", "response timeout"},
    {21, "IBV_WC_GENERAL_ERR", "general error: a device-specific error (see the vendor error code)"},
    {22, "IBV_WC_TM_ERR", "tag matching error"},
    {23, "IBV_WC_TM_RNDV_INCOMPLETE", "tag matching rendezvous incomplete"},
};

}  // namespace

const WcStatusInfo* FindWcStatus(int value) {
  for (const auto& s : kStatuses) {
    if (s.value == value) return &s;
  }
  return nullptr;
}

}  // namespace fabcheck::logs
