// The retransmission counters of an RDMA port, read around a verbs phase so a
// stalled test can say why it stalled.
//
// A QP whose packets are lost on the path (an MTU below the path MTU on a
// switch, a link down, congestion drops) retransmits silently: with the
// default retry_cnt of 7 mlx5 gives up after seven timeouts, but soft-RoCE
// treats 7 as "retry forever", and either way the application only sees no
// completion. Whether the port's retry counters grew during the stall tells
// "the path loses packets" apart from "the peer stopped".
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "sys/sysroot.h"

namespace fabcheck::perf::verbs {

// hw_counters names that grow when a requester retransmits or a responder
// sees a sequence gap: mlx5 (rdma-facts.md, retransmission_q_counters) and
// rxe (soft-RoCE) spellings; a port has a subset.
inline constexpr const char* kRetryCounterNames[] = {
    "local_ack_timeout_err", "packet_seq_err", "implied_nak_seq_err", "out_of_sequence",   // mlx5
    "completer_retry_err",   "rcvd_seq_err",   "retry_exceeded_err",  "out_of_seq_request",  // rxe
};

using CounterValues = std::map<std::string, uint64_t>;

// The counters of kRetryCounterNames that `device` port `port` has; empty when
// the port has no hw_counters (or the sysroot cannot read them).
CounterValues ReadRetryCounters(const sys::SysRoot& root, const std::string& device, int port);

// "completer_retry_err +774, rcvd_seq_err +3" for the counters that grew, in
// kRetryCounterNames order; "" when none grew. Counters missing on either side
// are ignored; a counter that went backwards (reset) counts as not grown.
std::string DescribeRetryGrowth(const CounterValues& before, const CounterValues& after);

}  // namespace fabcheck::perf::verbs
