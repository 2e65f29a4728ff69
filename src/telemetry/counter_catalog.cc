#include "telemetry/counter_catalog.h"

#include <array>

#include "base/strings.h"
#include "telemetry/metrics.h"

namespace fabcheck::telemetry {
namespace {

// bits: the width in the legacy table; the data/packet counters are 32-bit
// there and 64-bit in the extended table mlx5 uses (decided at read time).
constexpr std::array kPmaCounters = {
    CounterSpec{"symbol_error", "fabcheck_rdma_port_symbol_error_total",
                "Minor link errors detected on one or more physical lanes (counters/symbol_error).", 16, false},
    CounterSpec{"link_error_recovery", "fabcheck_rdma_port_link_error_recovery_total",
                "Times the link error recovery process completed successfully (counters/link_error_recovery).", 8,
                false},
    CounterSpec{"link_downed", "fabcheck_rdma_port_link_downed_total",
                "Times the link error recovery process failed and the link went down (counters/link_downed).", 8,
                false},
    CounterSpec{"port_rcv_errors", "fabcheck_rdma_port_rcv_errors_total",
                "Received packets containing an error (counters/port_rcv_errors).", 16, false},
    CounterSpec{"port_rcv_remote_physical_errors", "fabcheck_rdma_port_rcv_remote_physical_errors_total",
                "Received packets marked with the EBP delimiter (counters/port_rcv_remote_physical_errors).", 16,
                false},
    CounterSpec{"port_rcv_switch_relay_errors", "fabcheck_rdma_port_rcv_switch_relay_errors_total",
                "Received packets discarded because they could not be forwarded by the switch relay "
                "(counters/port_rcv_switch_relay_errors).",
                16, false},
    CounterSpec{"port_xmit_discards", "fabcheck_rdma_port_xmit_discards_total",
                "Outbound packets discarded because the port was down or congested (counters/port_xmit_discards).",
                16, false},
    CounterSpec{"port_xmit_constraint_errors", "fabcheck_rdma_port_xmit_constraint_errors_total",
                "Packets not transmitted because of outbound raw filtering (counters/port_xmit_constraint_errors).",
                8, false},
    CounterSpec{"port_rcv_constraint_errors", "fabcheck_rdma_port_rcv_constraint_errors_total",
                "Packets discarded because of inbound raw filtering (counters/port_rcv_constraint_errors).", 8, false},
    CounterSpec{"local_link_integrity_errors", "fabcheck_rdma_port_local_link_integrity_errors_total",
                "Times the count of local physical errors exceeded the threshold "
                "(counters/local_link_integrity_errors).",
                4, false},
    CounterSpec{"excessive_buffer_overrun_errors", "fabcheck_rdma_port_excessive_buffer_overrun_errors_total",
                "Times consecutive flow-control update periods had buffer overruns "
                "(counters/excessive_buffer_overrun_errors).",
                4, false},
    CounterSpec{"VL15_dropped", "fabcheck_rdma_port_vl15_dropped_total",
                "Incoming VL15 (subnet management) packets dropped for lack of buffers (counters/VL15_dropped).", 16,
                false},
    CounterSpec{"port_xmit_wait", "fabcheck_rdma_port_xmit_wait_total",
                "Ticks during which the port had data to send but no flow-control credits (counters/port_xmit_wait).",
                32, false},
    CounterSpec{"port_xmit_data", "fabcheck_rdma_port_xmit_data_bytes_total",
                "Bytes transmitted on all VLs, including headers (counters/port_xmit_data x 4).", 32, true},
    CounterSpec{"port_rcv_data", "fabcheck_rdma_port_rcv_data_bytes_total",
                "Bytes received on all VLs, including headers (counters/port_rcv_data x 4).", 32, true},
    CounterSpec{"port_xmit_packets", "fabcheck_rdma_port_xmit_packets_total",
                "Packets transmitted on all VLs (counters/port_xmit_packets).", 32, false},
    CounterSpec{"port_rcv_packets", "fabcheck_rdma_port_rcv_packets_total",
                "Packets received on all VLs (counters/port_rcv_packets).", 32, false},
    CounterSpec{"unicast_xmit_packets", "fabcheck_rdma_port_unicast_xmit_packets_total",
                "Unicast packets transmitted (counters/unicast_xmit_packets).", 0, false},
    CounterSpec{"unicast_rcv_packets", "fabcheck_rdma_port_unicast_rcv_packets_total",
                "Unicast packets received (counters/unicast_rcv_packets).", 0, false},
    CounterSpec{"multicast_xmit_packets", "fabcheck_rdma_port_multicast_xmit_packets_total",
                "Multicast packets transmitted (counters/multicast_xmit_packets).", 0, false},
    CounterSpec{"multicast_rcv_packets", "fabcheck_rdma_port_multicast_rcv_packets_total",
                "Multicast packets received (counters/multicast_rcv_packets).", 0, false},
};

#define HW(file, help) CounterSpec{file, "fabcheck_rdma_hw_" file "_total", help " (hw_counters/" file ").", 0, false}

constexpr std::array kHwCounters = {
    // mlx5 q-counters
    HW("rx_write_requests", "RDMA WRITE requests received by the port's QPs"),
    HW("rx_read_requests", "RDMA READ requests received by the port's QPs"),
    HW("rx_atomic_requests", "ATOMIC requests received by the port's QPs"),
    HW("rx_dct_connect", "DCT connect requests received"),
    HW("out_of_buffer", "Packets dropped because the receive queue had no posted WQE"),
    HW("out_of_sequence", "Packets received with an unexpected PSN (loss or reordering in the fabric)"),
    HW("duplicate_request", "Requests received that had already been executed (the peer retransmitted)"),
    HW("rnr_nak_retry_err", "RNR NAKs received by the requester, retry limit not yet exceeded"),
    HW("packet_seq_err", "NAK sequence error packets received, retry limit not exceeded (loss on the path)"),
    HW("implied_nak_seq_err", "Implied NAK sequence errors: a response with a PSN beyond the expected one"),
    HW("local_ack_timeout_err", "ACK timer expirations at the sender (drops, PFC misconfiguration, link flaps)"),
    HW("resp_local_length_error", "Responder local length errors (message larger than the posted buffer)"),
    HW("resp_cqe_error", "Responder completions with error"),
    HW("req_cqe_error", "Requester completions with error"),
    HW("req_remote_invalid_request", "Remote invalid request NAKs received"),
    HW("req_remote_access_errors", "Requester remote access errors (bad rkey or permission)"),
    HW("resp_remote_access_errors", "Responder remote access errors (bad rkey or permission)"),
    HW("resp_cqe_flush_error", "Responder completions flushed with error (QP in error state)"),
    HW("req_cqe_flush_error", "Requester completions flushed with error (QP in error state)"),
    HW("req_transport_retries_exceeded", "Requester gave up after the transport retry limit (fatal for the QP)"),
    HW("req_rnr_retries_exceeded", "Requester gave up after the RNR retry limit (fatal for the QP)"),
    HW("roce_adp_retrans", "RoCE adaptive retransmissions"),
    HW("roce_adp_retrans_to", "Timeouts during RoCE adaptive retransmission"),
    HW("roce_slow_restart", "RoCE slow restart uses"),
    HW("roce_slow_restart_cnps", "CNPs generated by RoCE slow restart"),
    HW("roce_slow_restart_trans", "Transitions to RoCE slow restart"),
    HW("rp_cnp_ignored", "CNPs received but ignored by the reaction point; rising means ECN/CC is likely off"),
    HW("rp_cnp_handled", "CNPs received and acted upon by the reaction point (DCQCN rate reduction)"),
    HW("np_ecn_marked_roce_packets", "RoCEv2 packets received with ECN CE marks at the notification point"),
    HW("np_cnp_sent", "CNPs sent by the notification point in response to CE marks"),
    HW("rx_icrc_encapsulated", "RoCE packets received with ICRC errors (corruption)"),
    HW("cc_rx_ce_pkts", "Packets received with CE marks (optional counter)"),
    HW("cc_rx_cnp_pkts", "CNP packets received (optional counter)"),
    HW("cc_tx_cnp_pkts", "CNP packets sent (optional counter)"),
    HW("rdma_tx_packets", "RDMA packets transmitted (optional counter)"),
    HW("rdma_tx_bytes", "RDMA bytes transmitted (optional counter)"),
    HW("rdma_rx_packets", "RDMA packets received (optional counter)"),
    HW("rdma_rx_bytes", "RDMA bytes received (optional counter)"),
    // rxe (soft-RoCE)
    HW("sent_pkts", "Packets sent (rxe)"),
    HW("rcvd_pkts", "Packets received (rxe)"),
    HW("out_of_seq_request", "Requests received out of sequence (rxe)"),
    HW("rcvd_rnr_err", "RNR NAKs received (rxe)"),
    HW("send_rnr_err", "RNR NAKs sent (rxe)"),
    HW("rcvd_seq_err", "Sequence error NAKs received (rxe)"),
    HW("ack_deferred", "ACKs deferred (rxe, older kernels)"),
    HW("retry_exceeded_err", "Transport retry limit exceeded (rxe)"),
    HW("retry_rnr_exceeded_err", "RNR retry limit exceeded (rxe)"),
    HW("completer_retry_err", "Completer retries (rxe)"),
    HW("send_err", "Send errors (rxe)"),
    HW("link_downed", "Link down events (rxe)"),
    HW("rdma_sends", "RDMA sends (rxe)"),
    HW("rdma_recvs", "RDMA receives (rxe)"),
};
#undef HW

// counters_ext/ (pre-v4.5 kernels): all 64-bit; the data counters count octets / 4 like counters/.
#define EXT(file, metric, help, div4) \
  CounterSpec{file, "fabcheck_rdma_port_ext_" metric "_total", help " (counters_ext/" file ").", 0, div4}
constexpr std::array kExtCounters = {
    EXT("port_xmit_data_64", "xmit_data_bytes", "Bytes transmitted on all VLs, 64-bit (x 4)", true),
    EXT("port_rcv_data_64", "rcv_data_bytes", "Bytes received on all VLs, 64-bit (x 4)", true),
    EXT("port_xmit_packets_64", "xmit_packets", "Packets transmitted on all VLs, 64-bit", false),
    EXT("port_rcv_packets_64", "rcv_packets", "Packets received on all VLs, 64-bit", false),
    EXT("port_unicast_xmit_packets", "unicast_xmit_packets", "Unicast packets transmitted, 64-bit", false),
    EXT("port_unicast_rcv_packets", "unicast_rcv_packets", "Unicast packets received, 64-bit", false),
    EXT("port_multicast_xmit_packets", "multicast_xmit_packets", "Multicast packets transmitted, 64-bit", false),
    EXT("port_multicast_rcv_packets", "multicast_rcv_packets", "Multicast packets received, 64-bit", false),
};
#undef EXT

template <size_t N>
const CounterSpec* FindIn(const std::array<CounterSpec, N>& table, std::string_view file) {
  for (const CounterSpec& spec : table) {
    if (spec.file == file) return &spec;
  }
  return nullptr;
}

}  // namespace

const CounterSpec* FindPmaCounter(std::string_view file) { return FindIn(kPmaCounters, file); }
const CounterSpec* FindHwCounter(std::string_view file) { return FindIn(kHwCounters, file); }
const CounterSpec* FindExtCounter(std::string_view file) { return FindIn(kExtCounters, file); }

std::string PmaCounterMetricName(std::string_view file) {
  if (const CounterSpec* spec = FindPmaCounter(file)) return std::string(spec->metric);
  std::string_view stem = StartsWith(file, "port_") ? file.substr(5) : file;
  return "fabcheck_rdma_port_" + SanitizeMetricFragment(stem) + "_total";
}

std::string ExtCounterMetricName(std::string_view file) {
  if (const CounterSpec* spec = FindExtCounter(file)) return std::string(spec->metric);
  std::string_view stem = StartsWith(file, "port_") ? file.substr(5) : file;
  if (stem.size() > 3 && stem.substr(stem.size() - 3) == "_64") stem.remove_suffix(3);
  return "fabcheck_rdma_port_ext_" + SanitizeMetricFragment(stem) + "_total";
}

std::string HwCounterMetricName(std::string_view file) {
  if (const CounterSpec* spec = FindHwCounter(file)) return std::string(spec->metric);
  return "fabcheck_rdma_hw_" + SanitizeMetricFragment(file) + "_total";
}

}  // namespace fabcheck::telemetry
