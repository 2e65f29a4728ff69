// Counter rules over error counters: counters.retransmission, counters.completion-errors,
// counters.link-errors, counters.discards.
#include <fmt/format.h>

#include <algorithm>

#include "base/strings.h"
#include "diagnose/counter_rule.h"

namespace fabcheck::diagnose {
namespace {

bool In(const std::string& name, std::initializer_list<const char*> list) {
  return std::any_of(list.begin(), list.end(), [&](const char* n) { return name == n; });
}

void RunRetrans(const Evidence& ev, std::vector<model::Diagnosis>* out);
void RunCompletion(const Evidence& ev, std::vector<model::Diagnosis>* out);
void RunLink(const Evidence& ev, std::vector<model::Diagnosis>* out);
void RunDiscards(const Evidence& ev, std::vector<model::Diagnosis>* out);

}  // namespace

extern const Rule kCountersRetransmission = {
    "counters.retransmission", "counters",
    "Retransmission counters (packet_seq_err, implied_nak_seq_err, local_ack_timeout_err, rnr_nak_retry_err, "
    "out_of_sequence, duplicate_request) rise in two consecutive intervals",
    "The seeds' failure mode: continuously growing retry counters mean packet loss, retries or timeouts on the "
    "path; NCCL slows down long before it fails with status 12.",
    "Find the lossy hop: link error counters on both ends and the switch, PFC/ECN on the traffic's priority (RoCE), "
    "one MTU end to end; rnr_nak_retry_err alone points at a receiver that cannot keep up.",
    &RunRetrans};

extern const Rule kCountersCompletionErrors = {
    "counters.completion-errors", "counters",
    "Completion error counters (req_cqe_error, resp_cqe_error, remote access errors, req_transport_retries_exceeded, "
    "req_rnr_retries_exceeded) rise in two consecutive intervals",
    "Each one is a work request that failed: a QP broke (retries exceeded is fatal for the QP) or an application "
    "used memory it had not registered.",
    "Retries exceeded: see counters.retransmission and the link. Remote access / length errors: an application or "
    "GPUDirect registration problem.",
    &RunCompletion};

extern const Rule kCountersLinkErrors = {
    "counters.link-errors", "counters",
    "Link error counters (symbol_error, link_downed, link_error_recovery, port_rcv_errors, CRC/symbol errors of the "
    "PHY, ICRC errors) rise in two consecutive intervals",
    "Physical-layer errors: a marginal cable, transceiver or switch port. link_downed rising means the link flaps, "
    "which breaks every RDMA connection on it.",
    "Reseat or replace the cable and transceiver, check the switch port's counters, and the port's rate and width "
    "(fabcheck doctor --only L1).",
    &RunLink};

extern const Rule kCountersDiscards = {
    "counters.discards", "counters",
    "Discard counters (port_xmit_discards, rx/tx_discards_phy, out_of_buffer, per-priority buffer and congestion "
    "discards) rise in two consecutive intervals",
    "Dropped packets on a lossless RoCE priority, or receive queues that ran dry: every drop costs an RDMA "
    "retransmission (go-back-N).",
    "RoCE: PFC on the traffic's priority on NIC and switch, buffer sizes; out_of_buffer: the receiver posts too few "
    "receives (application or PCIe-bound host).",
    &RunDiscards};

namespace {

void RunRetrans(const Evidence& ev, std::vector<model::Diagnosis>* out) {
  CounterRuleSpec spec;
  spec.rule = &kCountersRetransmission;
  spec.severity = model::Severity::kWarn;
  spec.matches = [](const std::string& n) {
    return In(n, {"packet_seq_err", "implied_nak_seq_err", "local_ack_timeout_err", "rnr_nak_retry_err",
                  "out_of_sequence", "duplicate_request", "roce_adp_retrans", "roce_adp_retrans_to", "rcvd_seq_err",
                  "out_of_seq_request", "rcvd_rnr_err", "completer_retry_err"});
  };
  spec.explain = [&ev](const std::vector<std::string>& rising, const CounterSeries& s, model::Diagnosis* d) {
    auto has = [&](const char* n) { return std::find(rising.begin(), rising.end(), n) != rising.end(); };
    bool link = false;
    for (const char* n : {"symbol_error", "link_downed", "port_rcv_errors", "link_error_recovery"}) {
      if (const auto* sib = Sibling(ev, s, n); sib && Analyze(*sib).increase > 0) link = true;
    }
    if (link) d->causes.push_back("the same port's link error counters rise too: a physical problem (cable, "
                                  "transceiver, switch port)");
    if (has("local_ack_timeout_err")) {
      d->causes.push_back("ACK timeouts: packets or ACKs dropped (PFC off or on another priority, a congested or "
                          "flapping link)");
    }
    if (has("packet_seq_err") || has("out_of_sequence") || has("implied_nak_seq_err")) {
      d->causes.push_back("packet loss on the path (go-back-N retransmissions): RoCE without lossless PFC on the "
                          "traffic class, or a lossy link");
    }
    if (has("rnr_nak_retry_err")) {
      d->causes.push_back("receiver not ready: the peer did not post receives in time (overloaded host, slow "
                          "application)");
    }
    if (has("duplicate_request")) d->causes.push_back("the peer retransmitted requests already executed (its ACKs were lost)");
    d->causes.push_back("an MTU mismatch on the path (large frames dropped)");
    d->fix = kCountersRetransmission.fix;
    d->next = fmt::format("on {}: fabcheck doctor --only L1,L2,RoCE; then L3 from {} ({}) to a known-good node: "
                          "fabcheck perf run <peer> --transport verbs --device {} --sizes 2:8M while watching these "
                          "counters",
                          MemberOrThisNode(s), MemberOrThisNode(s), s.object, DeviceOf(s));
  };
  RunCounterRule(spec, ev, out);
}

void RunCompletion(const Evidence& ev, std::vector<model::Diagnosis>* out) {
  CounterRuleSpec spec;
  spec.rule = &kCountersCompletionErrors;
  spec.severity = model::Severity::kWarn;
  spec.fatal = {"req_transport_retries_exceeded", "req_rnr_retries_exceeded", "retry_exceeded_err",
                "retry_rnr_exceeded_err"};
  spec.matches = [](const std::string& n) {
    return In(n, {"req_cqe_error", "resp_cqe_error", "req_remote_access_errors", "resp_remote_access_errors",
                  "req_remote_invalid_request", "resp_local_length_error", "req_transport_retries_exceeded",
                  "req_rnr_retries_exceeded", "retry_exceeded_err", "retry_rnr_exceeded_err"});
  };
  spec.explain = [](const std::vector<std::string>& rising, const CounterSeries& s, model::Diagnosis* d) {
    auto has = [&](const char* n) { return std::find(rising.begin(), rising.end(), n) != rising.end(); };
    if (has("req_transport_retries_exceeded") || has("retry_exceeded_err")) {
      d->causes.push_back("QPs gave up after the transport retries (NCCL's status 12): loss on the path, see "
                          "counters.retransmission and counters.link-errors");
    }
    if (has("req_rnr_retries_exceeded") || has("retry_rnr_exceeded_err")) {
      d->causes.push_back("QPs gave up after RNR retries (status 13): a peer stopped posting receives");
    }
    if (has("req_remote_access_errors") || has("resp_remote_access_errors")) {
      d->causes.push_back("remote access errors: a peer's memory region was not registered or was freed "
                          "(GPUDirect registration, application bug)");
    }
    if (has("resp_local_length_error")) d->causes.push_back("a message larger than the posted receive buffer (application)");
    d->causes.push_back("req_cqe_error / resp_cqe_error count every failed completion: look at the more specific "
                        "counters and the application's log for the first error");
    d->fix = kCountersCompletionErrors.fix;
    d->next = fmt::format("fabcheck diagnose the job's NCCL log together with these samples (it names the peer of "
                          "each failed completion); fabcheck doctor --only GDR,RoCE on {}",
                          MemberOrThisNode(s));
  };
  RunCounterRule(spec, ev, out);
}

void RunLink(const Evidence& ev, std::vector<model::Diagnosis>* out) {
  CounterRuleSpec spec;
  spec.rule = &kCountersLinkErrors;
  spec.severity = model::Severity::kWarn;
  spec.fatal = {"link_downed", "link_down_events_phy"};
  spec.matches = [](const std::string& n) {
    return In(n, {"symbol_error", "link_downed", "link_error_recovery", "port_rcv_errors", "local_link_integrity_errors",
                  "excessive_buffer_overrun_errors", "port_rcv_remote_physical_errors", "rx_crc_errors_phy",
                  "rx_symbol_err_phy", "rx_pcs_symbol_err_phy", "link_down_events_phy", "rx_icrc_encapsulated"});
  };
  spec.explain = [](const std::vector<std::string>& rising, const CounterSeries& s, model::Diagnosis* d) {
    auto has = [&](const char* n) { return std::find(rising.begin(), rising.end(), n) != rising.end(); };
    if (has("link_downed") || has("link_down_events_phy")) {
      d->causes.push_back("the link flaps (goes down and up): every QP on it breaks; cable, transceiver or switch "
                          "port");
    }
    d->causes.push_back("a marginal cable or transceiver (symbol / CRC errors grow with traffic)");
    d->causes.push_back("a dirty or damaged optical connector, or a switch port with errors of its own");
    if (has("rx_icrc_encapsulated")) d->causes.push_back("RoCE packets corrupted in flight (ICRC): a faulty hop");
    d->fix = kCountersLinkErrors.fix;
    d->next = fmt::format("on {}: fabcheck doctor --only L1 (port state, rate, width); compare with the switch "
                          "port's counters for {}; swap the cable to confirm",
                          MemberOrThisNode(s), s.object);
  };
  RunCounterRule(spec, ev, out);
}

void RunDiscards(const Evidence& ev, std::vector<model::Diagnosis>* out) {
  CounterRuleSpec spec;
  spec.rule = &kCountersDiscards;
  spec.severity = model::Severity::kWarn;
  spec.matches = [](const std::string& n) {
    if (In(n, {"port_xmit_discards", "rx_discards_phy", "tx_discards_phy", "out_of_buffer", "rx_out_of_buffer"})) {
      return true;
    }
    return StartsWith(n, "rx_prio") && (EndsWith(n, "_buf_discard") || EndsWith(n, "_cong_discard") ||
                                        EndsWith(n, "_discards"));
  };
  spec.explain = [](const std::vector<std::string>& rising, const CounterSeries& s, model::Diagnosis* d) {
    auto has = [&](const char* n) { return std::find(rising.begin(), rising.end(), n) != rising.end(); };
    bool prio = std::any_of(rising.begin(), rising.end(), [](const std::string& n) { return StartsWith(n, "rx_prio"); });
    if (prio || has("rx_discards_phy")) {
      d->causes.push_back("drops on a priority that should be lossless: PFC not enabled for it on the NIC or the "
                          "switch, or the traffic class maps to another priority (trust mode, DSCP map)");
    }
    if (has("port_xmit_discards")) d->causes.push_back("the port could not send (congestion, link going down)");
    if (has("out_of_buffer") || has("rx_out_of_buffer")) {
      d->causes.push_back("receive queues ran dry: the application or the host (PCIe, NUMA) does not keep up");
    }
    d->causes.push_back("receive buffers too small for the cable length and rate (headroom)");
    d->fix = kCountersDiscards.fix;
    d->next = fmt::format("on {}: fabcheck doctor --only RoCE (PFC priorities, trust mode, ECN) for {}",
                          MemberOrThisNode(s), s.object);
  };
  RunCounterRule(spec, ev, out);
}

}  // namespace
}  // namespace fabcheck::diagnose
