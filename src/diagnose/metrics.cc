// The exporter's /metrics text (and node_exporter's infiniband collector) back
// into sysfs / ethtool counter names, so the counter rules speak one language.
#include <fmt/format.h>

#include <cmath>
#include <map>

#include "base/strings.h"
#include "diagnose/inputs.h"

namespace fabcheck::diagnose {
namespace {

// fabcheck_rdma_port_<stem>_total -> counters/ file
std::string PortCounter(std::string stem) {
  if (EndsWith(stem, "_bytes")) stem = stem.substr(0, stem.size() - 6);
  static const char* kBare[] = {"symbol_error", "link_error_recovery", "link_downed", "local_link_integrity_errors",
                                "excessive_buffer_overrun_errors", "vl15_dropped", "unicast_xmit_packets",
                                "unicast_rcv_packets", "multicast_xmit_packets", "multicast_rcv_packets"};
  for (const char* b : kBare) {
    if (stem == b) return stem == "vl15_dropped" ? "VL15_dropped" : stem;
  }
  return "port_" + stem;
}

// node_exporter's infiniband collector names -> sysfs names.
const std::map<std::string, std::string>& NodeExporterNames() {
  static const std::map<std::string, std::string> m = {
      {"node_infiniband_link_downed_total", "link_downed"},
      {"node_infiniband_link_error_recovery_total", "link_error_recovery"},
      {"node_infiniband_symbol_error_total", "symbol_error"},
      {"node_infiniband_port_errors_received_total", "port_rcv_errors"},
      {"node_infiniband_port_discards_transmitted_total", "port_xmit_discards"},
      {"node_infiniband_port_data_transmitted_bytes_total", "port_xmit_data"},
      {"node_infiniband_port_data_received_bytes_total", "port_rcv_data"},
      {"node_infiniband_port_transmit_wait_total", "port_xmit_wait"},
      {"node_infiniband_duplicate_requests_packets_total", "duplicate_request"},
      {"node_infiniband_implied_nak_seq_errors_total", "implied_nak_seq_err"},
      {"node_infiniband_local_ack_timeout_errors_total", "local_ack_timeout_err"},
      {"node_infiniband_np_cnp_packets_sent_total", "np_cnp_sent"},
      {"node_infiniband_np_ecn_marked_roce_packets_received_total", "np_ecn_marked_roce_packets"},
      {"node_infiniband_out_of_buffer_drops_total", "out_of_buffer"},
      {"node_infiniband_out_of_sequence_packets_received_total", "out_of_sequence"},
      {"node_infiniband_packet_sequence_errors_total", "packet_seq_err"},
      {"node_infiniband_req_cqes_errors_total", "req_cqe_error"},
      {"node_infiniband_resp_cqes_errors_total", "resp_cqe_error"},
      {"node_infiniband_req_remote_access_errors_total", "req_remote_access_errors"},
      {"node_infiniband_resp_remote_access_errors_total", "resp_remote_access_errors"},
      {"node_infiniband_rnr_nak_retry_packets_received_total", "rnr_nak_retry_err"},
      {"node_infiniband_rp_cnp_packets_handled_total", "rp_cnp_handled"},
      {"node_infiniband_rp_cnp_ignored_packets_received_total", "rp_cnp_ignored"},
      {"node_infiniband_rx_icrc_encapsulated_errors_total", "rx_icrc_encapsulated"},
  };
  return m;
}

// `{a="x",b="y"}` -> map; tolerant of escapes.
std::map<std::string, std::string> Labels(std::string_view s) {
  std::map<std::string, std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    size_t eq = s.find('=', i);
    if (eq == std::string_view::npos) break;
    std::string key(Trim(s.substr(i, eq - i)));
    if (!key.empty() && key[0] == ',') key = std::string(Trim(key.substr(1)));
    size_t q = s.find('"', eq);
    if (q == std::string_view::npos) break;
    std::string value;
    size_t j = q + 1;
    for (; j < s.size() && s[j] != '"'; ++j) {
      if (s[j] == '\\' && j + 1 < s.size()) ++j;
      value.push_back(s[j]);
    }
    out[key] = value;
    i = j + 1;
    while (i < s.size() && (s[i] == ',' || s[i] == ' ')) ++i;
  }
  return out;
}

std::string MemberOf(const std::map<std::string, std::string>& l) {
  for (const char* k : {"node", "hostname", "nodename", "host", "instance"}) {
    auto it = l.find(k);
    if (it != l.end() && !it->second.empty()) return it->second;
  }
  return "";
}

}  // namespace

bool LooksLikeMetrics(std::string_view head) {
  return head.find("# HELP ") != std::string_view::npos || head.find("# TYPE ") != std::string_view::npos ||
         StartsWith(head, "fabcheck_") || StartsWith(head, "node_infiniband_");
}

std::vector<MetricReading> ParseMetricsText(std::string_view text, double time) {
  std::vector<MetricReading> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = Trim(text.substr(pos, end - pos));
    pos = end + 1;
    if (line.empty() || line[0] == '#') continue;
    size_t brace = line.find('{');
    size_t space = line.find(' ');
    std::string name(line.substr(0, std::min(brace, space)));
    std::map<std::string, std::string> labels;
    std::string_view rest;
    if (brace != std::string_view::npos && brace < space) {
      size_t close = line.find('}', brace);
      if (close == std::string_view::npos) continue;
      labels = Labels(line.substr(brace + 1, close - brace - 1));
      rest = Trim(line.substr(close + 1));
    } else if (space != std::string_view::npos) {
      rest = Trim(line.substr(space));
    } else {
      continue;
    }
    auto fields = Split(rest, ' ', true);
    if (fields.empty()) continue;
    auto value = ParseDouble(fields[0]);
    if (!value || !std::isfinite(*value) || *value < 0 || *value > 1.8e19) continue;
    double at = time;
    if (fields.size() > 1) {
      if (auto ms = ParseDouble(fields[1]); ms && *ms > 1e11) at = *ms / 1000.0;
    }
    MetricReading r;
    r.member = MemberOf(labels);
    r.time = at;
    std::string device = labels.count("device") ? labels["device"] : "";
    std::string port = labels.count("port") ? labels["port"] : "";
    std::string netdev = labels.count("netdev") ? labels["netdev"] : labels.count("interface") ? labels["interface"] : "";
    r.object = !device.empty() ? (port.empty() ? device : device + "/" + port) : netdev;
    std::string direction = labels.count("direction") ? labels["direction"] : "";
    std::string prio = labels.count("priority") ? labels["priority"] : "";
    double v = *value;
    if (StartsWith(name, "fabcheck_rdma_hw_") && EndsWith(name, "_total")) {
      r.counter = name.substr(17, name.size() - 17 - 6);
    } else if (StartsWith(name, "fabcheck_rdma_port_ext_")) {
      continue;  // the legacy 64-bit twin of counters/ (same traffic)
    } else if (StartsWith(name, "fabcheck_rdma_port_") && EndsWith(name, "_total")) {
      r.counter = PortCounter(name.substr(19, name.size() - 19 - 6));
    } else if (name == "fabcheck_netdev_pfc_pause_frames_total" && !prio.empty()) {
      r.counter = fmt::format("{}_prio{}_pause", direction, prio);
    } else if (name == "fabcheck_netdev_pfc_pause_duration_seconds_total" && !prio.empty()) {
      r.counter = fmt::format("{}_prio{}_pause_duration", direction, prio);
      v *= 1e6;  // back to ethtool's microseconds
    } else if (name == "fabcheck_netdev_priority_discards_total" && !prio.empty()) {
      std::string kind = labels.count("kind") ? labels["kind"] : "other";
      r.counter = fmt::format("rx_prio{}_{}", prio, kind == "buffer" ? "buf_discard" : kind == "congestion" ? "cong_discard" : "discards");
    } else if (name == "fabcheck_netdev_priority_ecn_marked_packets_total" && !prio.empty()) {
      r.counter = fmt::format("rx_prio{}_marked", prio);
    } else if (name == "fabcheck_netdev_phy_discards_total") {
      r.counter = (direction.empty() ? "rx" : direction) + "_discards_phy";
    } else if (name == "fabcheck_netdev_pause_storm_events_total") {
      r.counter = "tx_pause_storm_" + (labels.count("level") ? labels["level"] : std::string("warning")) + "_events";
    } else if (name == "fabcheck_netdev_crc_errors_total") {
      r.counter = (direction.empty() ? "rx" : direction) + "_crc_errors_phy";
    } else if (auto it = NodeExporterNames().find(name); it != NodeExporterNames().end()) {
      r.counter = it->second;
    } else {
      continue;
    }
    r.value = static_cast<uint64_t>(v);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace fabcheck::diagnose
