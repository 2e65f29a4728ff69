#include "telemetry/collector.h"

#include "sys/infiniband.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <set>

#include "base/strings.h"
#include "sys/dir_files.h"
#include "telemetry/counter_catalog.h"
#include "sys/net_class.h"

namespace fabcheck::telemetry {
namespace {

constexpr auto kGauge = MetricType::kGauge;
constexpr auto kCounter = MetricType::kCounter;

// What ethtool statistics become (rdma-facts §3.4). Per-priority keys are
// "rx_<suffix>" / "tx_<suffix>" after the priority is taken out.
struct PriorityStat {
  std::string_view suffix;  // "pause" (from rx_prio3_pause)
  std::string_view metric;
  std::string_view help;
  std::string_view extra_label;  // extra label name ("" for none)
  std::string_view extra_value;
  double scale;
};
constexpr std::array kPriorityStats = {
    PriorityStat{"pause", "fabcheck_netdev_pfc_pause_frames_total",
                 "PFC pause frames per priority (ethtool rx_prio<p>_pause: the network pushed back on us; "
                 "tx_prio<p>_pause: this host asked the switch to pause).",
                 "", "", 1.0},
    PriorityStat{"pause_duration", "fabcheck_netdev_pfc_pause_duration_seconds_total",
                 "Time paused by PFC per priority (ethtool *_prio<p>_pause_duration, microseconds / 1e6).", "", "",
                 1e-6},
    PriorityStat{"pause_transition", "fabcheck_netdev_pfc_pause_transitions_total",
                 "XOFF to XON transitions per priority (ethtool rx_prio<p>_pause_transition).", "", "", 1.0},
    PriorityStat{"bytes", "fabcheck_netdev_priority_bytes_total", "Bytes per priority (ethtool *_prio<p>_bytes).",
                 "", "", 1.0},
    PriorityStat{"packets", "fabcheck_netdev_priority_packets_total",
                 "Packets per priority (ethtool *_prio<p>_packets).", "", "", 1.0},
    PriorityStat{"buf_discard", "fabcheck_netdev_priority_discards_total",
                 "Packets discarded per priority (ethtool rx_prio<p>_buf_discard, _cong_discard, _discards).", "kind",
                 "buffer", 1.0},
    PriorityStat{"cong_discard", "fabcheck_netdev_priority_discards_total", "", "kind", "congestion", 1.0},
    PriorityStat{"discards", "fabcheck_netdev_priority_discards_total", "", "kind", "other", 1.0},
    PriorityStat{"marked", "fabcheck_netdev_priority_ecn_marked_packets_total",
                 "Packets received with ECN marks per priority (ethtool rx_prio<p>_marked).", "", "", 1.0},
};

struct GlobalStat {
  std::string_view name;
  std::string_view metric;
  std::string_view help;
  std::string_view label;  // extra label name
  std::string_view value;
  double scale;
};
constexpr std::array kGlobalStats = {
    GlobalStat{"rx_discards_phy", "fabcheck_netdev_phy_discards_total",
               "Packets discarded by the physical port (ethtool rx_discards_phy, tx_discards_phy).", "direction",
               "rx", 1.0},
    GlobalStat{"tx_discards_phy", "fabcheck_netdev_phy_discards_total", "", "direction", "tx", 1.0},
    GlobalStat{"rx_pause_ctrl_phy", "fabcheck_netdev_pause_control_frames_total",
               "Pause control frames on the physical port (ethtool *_pause_ctrl_phy).", "direction", "rx", 1.0},
    GlobalStat{"tx_pause_ctrl_phy", "fabcheck_netdev_pause_control_frames_total", "", "direction", "tx", 1.0},
    GlobalStat{"rx_global_pause", "fabcheck_netdev_global_pause_frames_total",
               "Global (802.3x) pause frames (ethtool *_global_pause).", "direction", "rx", 1.0},
    GlobalStat{"tx_global_pause", "fabcheck_netdev_global_pause_frames_total", "", "direction", "tx", 1.0},
    GlobalStat{"rx_global_pause_duration", "fabcheck_netdev_global_pause_duration_seconds_total",
               "Time paused by global pause (ethtool *_global_pause_duration, microseconds / 1e6).", "direction",
               "rx", 1e-6},
    GlobalStat{"tx_global_pause_duration", "fabcheck_netdev_global_pause_duration_seconds_total", "", "direction",
               "tx", 1e-6},
    GlobalStat{"tx_pause_storm_warning_events", "fabcheck_netdev_pause_storm_events_total",
               "Pause storm events: the NIC kept sending pause frames (ethtool tx_pause_storm_*_events).", "level",
               "warning", 1.0},
    GlobalStat{"tx_pause_storm_error_events", "fabcheck_netdev_pause_storm_events_total", "", "level", "error", 1.0},
    GlobalStat{"rx_crc_errors_phy", "fabcheck_netdev_crc_errors_total",
               "Frames received with a bad FCS on the physical port (ethtool rx_crc_errors_phy).", "", "", 1.0},
    GlobalStat{"rx_symbol_err_phy", "fabcheck_netdev_symbol_errors_total",
               "Symbol errors on the physical port (ethtool rx_symbol_err_phy).", "", "", 1.0},
    GlobalStat{"rx_pcs_symbol_err_phy", "fabcheck_netdev_pcs_symbol_errors_total",
               "PCS symbol errors on the physical port (ethtool rx_pcs_symbol_err_phy).", "", "", 1.0},
    GlobalStat{"rx_corrected_bits_phy", "fabcheck_netdev_fec_corrected_errors_total",
               "Bit errors corrected by FEC (ethtool rx_corrected_bits_phy).", "", "", 1.0},
    GlobalStat{"rx_bits_phy", "fabcheck_netdev_phy_received_bytes_total",
               "Data received on the physical port, for the bit error rate (ethtool rx_bits_phy / 8).", "", "", 0.125},
    GlobalStat{"link_down_events_phy", "fabcheck_netdev_link_down_events_total",
               "Link down events of the physical port (ethtool link_down_events_phy).", "", "", 1.0},
    GlobalStat{"rx_out_of_buffer", "fabcheck_netdev_out_of_buffer_drops_total",
               "Packets dropped for lack of receive buffers (ethtool rx_out_of_buffer).", "", "", 1.0},
    GlobalStat{"rx_buffer_passed_thres_phy", "fabcheck_netdev_buffer_passed_threshold_events_total",
               "Times the port receive buffer passed its threshold (ethtool rx_buffer_passed_thres_phy).", "", "",
               1.0},
    GlobalStat{"rx_pci_signal_integrity", "fabcheck_netdev_pci_signal_integrity_errors_total",
               "PCIe signal integrity errors (ethtool rx_pci_signal_integrity, tx_pci_signal_integrity).",
               "direction", "rx", 1.0},
    GlobalStat{"tx_pci_signal_integrity", "fabcheck_netdev_pci_signal_integrity_errors_total", "", "direction",
               "tx", 1.0},
    GlobalStat{"outbound_pci_buffer_overflow", "fabcheck_netdev_outbound_pci_buffer_overflow_total",
               "Packets dropped because the PCIe outbound buffer overflowed (ethtool outbound_pci_buffer_overflow).",
               "", "", 1.0},
};

Labels With(const Labels& base, std::initializer_list<std::pair<std::string, std::string>> extra) {
  Labels out = base;
  for (const auto& item : extra) out.push_back(item);
  return out;
}

void AddPortMetrics(const PortReading& r, const Labels& labels, MetricSet& out) {
  if (r.state_id) {
    out.Add("fabcheck_rdma_port_state_id",
            "Logical port state (ports/<n>/state): 1 DOWN, 2 INIT, 3 ARMED, 4 ACTIVE, 5 ACTIVE_DEFER.", kGauge, labels,
            *r.state_id);
  }
  if (r.phys_state_id) {
    out.Add("fabcheck_rdma_port_physical_state_id",
            "Physical port state (ports/<n>/phys_state): 1 Sleep, 2 Polling, 3 Disabled, 4 Training, 5 LinkUp, "
            "6 LinkErrorRecovery, 7 PhyTest.",
            kGauge, labels, *r.phys_state_id);
  }
  if (r.state_id && r.phys_state_id) {
    out.Add("fabcheck_rdma_port_up", "1 when the port is ACTIVE and its physical link LinkUp, else 0.", kGauge,
            labels, (*r.state_id == 4 && *r.phys_state_id == 5) ? 1 : 0);
  }
  if (r.rate_bytes_per_second) {
    out.Add("fabcheck_rdma_port_rate_bytes_per_second",
            "Current port rate (ports/<n>/rate, Gb/s x 125000000), the signalling rate of all lanes.", kGauge, labels,
            *r.rate_bytes_per_second);
  }
  if (r.width > 0) {
    out.Add("fabcheck_rdma_port_link_width_lanes", "Active lanes of the port (the 4 of 4X in ports/<n>/rate).",
            kGauge, labels, r.width);
  }
  // Known counters pass the catalog's name and help as they are (no string
  // built per sample); only a file the catalog lacks gets them formatted.
  for (const CounterValue& c : r.counters) {
    const CounterSpec* spec = FindPmaCounter(c.file);
    if (spec) {
      out.Add(spec->metric, spec->help, kCounter, labels, static_cast<double>(c.value));
    } else {
      out.Add(PmaCounterMetricName(c.file), fmt::format("Port counter counters/{}.", c.file), kCounter, labels,
              static_cast<double>(c.value));
    }
    if (c.saturated) {
      out.Add("fabcheck_rdma_port_pma_saturated",
              "1 for a legacy fixed-width PMA counter stuck at its maximum: it no longer counts until reset.", kGauge,
              With(labels, {{"counter", c.file}}), 1);
    }
  }
  for (const CounterValue& c : r.counters_ext) {
    const CounterSpec* spec = FindExtCounter(c.file);
    std::string help =
        spec ? std::string(spec->help) : fmt::format("Port counter counters_ext/{} (64-bit).", c.file);
    out.Add(ExtCounterMetricName(c.file), help, kCounter, labels, static_cast<double>(c.value));
  }
  for (const CounterValue& c : r.hw_counters) {
    const CounterSpec* spec = FindHwCounter(c.file);
    if (spec) {
      out.Add(spec->metric, spec->help, kCounter, labels, static_cast<double>(c.value));
    } else {
      out.Add(HwCounterMetricName(c.file),
              fmt::format("Driver counter hw_counters/{} (see the driver's documentation).", c.file), kCounter,
              labels, static_cast<double>(c.value));
    }
  }
  if (r.lifespan_ms) {
    out.Add("fabcheck_rdma_hw_counters_lifespan_seconds",
            "How long the kernel caches hw_counters values (hw_counters/lifespan).", kGauge, labels,
            static_cast<double>(*r.lifespan_ms) / 1000.0);
  }
}

void AddNetdevMetrics(const sys::SysRoot& root, const std::string& netdev, const Labels& labels, MetricSet& out,
                      CollectResult& result, PortHandles* handles, bool relist) {
  const std::string dir = sys::net_class::Interface(netdev).dir();
  static const std::vector<std::string> kNetdevFiles = {"carrier", "mtu", "operstate", "speed"};
  std::unique_ptr<sys::AttributeDirectory>* handle = nullptr;
  if (handles) {
    if (handles->netdev_name != netdev) handles->netdev.reset();
    handles->netdev_name = netdev;
    handle = &handles->netdev;
  }
  auto files = ReadAttributeDir(root, dir, kNetdevFiles, handle, relist);
  if (!files.ok()) {
    result.errors.push_back({"netdev", ReasonFor(files.status()), dir, files.status().message()});
    return;
  }
  auto read = [&](const char* name, bool optional) -> std::optional<std::string> {
    for (const auto& file : *files) {
      if (file.name != name) continue;
      if (file.status.ok()) return std::string(Trim(file.content));
      // carrier and speed fail with EINVAL while the interface is admin-down: a state, not an error.
      if (!optional) result.errors.push_back({"netdev", ReasonFor(file.status), dir + "/" + name, file.status.message()});
    }
    return std::nullopt;
  };
  auto operstate = read("operstate", false);
  if (!operstate) return;
  out.Add("fabcheck_netdev_info", "The network interface of an RDMA port, with its operational state.", kGauge,
          With(labels, {{"operstate", *operstate}}), 1);
  out.Add("fabcheck_netdev_up", "1 when the interface's operstate is up.", kGauge, labels, *operstate == "up" ? 1 : 0);
  if (auto mtu = read("mtu", false)) {
    if (auto v = ParseInt(*mtu)) {
      out.Add("fabcheck_netdev_mtu_bytes", "MTU of the interface (/sys/class/net/<if>/mtu).", kGauge, labels, *v);
    } else {
      result.errors.push_back({"netdev", "garbage", dir + "/mtu", "unexpected content in " + dir + "/mtu"});
    }
  }
  if (auto carrier = read("carrier", true)) {
    if (auto v = ParseInt(*carrier)) {
      out.Add("fabcheck_netdev_carrier", "1 when the interface has carrier (/sys/class/net/<if>/carrier).", kGauge,
              labels, *v != 0 ? 1 : 0);
    }
  }
  if (auto speed = read("speed", true)) {
    auto v = ParseInt(*speed);
    if (v && *v > 0) {
      out.Add("fabcheck_netdev_speed_bytes_per_second", "Link speed of the interface (Mb/s x 125000).", kGauge, labels,
              static_cast<double>(*v) * 125000.0);
    }
  }
}

void AddEthtoolMetrics(const EthtoolStats& stats, const Labels& labels, MetricSet& out) {
  PfcStats pfc = ExtractPfcStats(stats);
  for (const auto& [priority, values] : pfc.priorities) {
    for (const auto& [key, value] : values.values) {
      std::string_view direction = std::string_view(key).substr(0, 2);  // "rx" / "tx"
      std::string_view suffix = std::string_view(key).substr(3);
      for (const PriorityStat& stat : kPriorityStats) {
        if (stat.suffix != suffix) continue;
        Labels l = With(labels, {{"direction", std::string(direction)}, {"priority", std::to_string(priority)}});
        if (!stat.extra_label.empty()) l.emplace_back(stat.extra_label, stat.extra_value);
        std::string_view help = stat.help.empty() ? kPriorityStats[5].help : stat.help;
        out.Add(stat.metric, help, kCounter, std::move(l), static_cast<double>(value) * stat.scale);
      }
    }
  }
  for (const GlobalStat& stat : kGlobalStats) {
    auto it = pfc.global.find(std::string(stat.name));
    if (it == pfc.global.end()) continue;
    Labels l = labels;
    if (!stat.label.empty()) l.emplace_back(stat.label, stat.value);
    std::string_view help = stat.help;
    if (help.empty()) {
      for (const GlobalStat& first : kGlobalStats) {
        if (first.metric == stat.metric && !first.help.empty()) {
          help = first.help;
          break;
        }
      }
    }
    out.Add(stat.metric, help, kCounter, std::move(l), static_cast<double>(it->second) * stat.scale);
  }
}

void AddDeviceMetrics(const DeviceLabels* info, const Labels& device_labels, MetricSet& out) {
  Labels l = device_labels;
  if (info) {
    auto add = [&](const char* name, const std::string& value) {
      if (!value.empty()) l.emplace_back(name, value);
    };
    add("board_id", info->board_id);
    add("firmware_version", info->fw_ver);
    add("hca_type", info->hca_type);
    add("node_guid", info->node_guid);
    if (info->numa_node) l.emplace_back("numa_node", std::to_string(*info->numa_node));
  }
  out.Add("fabcheck_rdma_device_info", "An RDMA device with its firmware, board and NUMA node.", kGauge, std::move(l),
          1);
  if (!info) return;
  const model::PciLink& link = info->pci_link;
  if (link.current_speed_gts) {
    out.Add("fabcheck_rdma_device_pcie_link_speed_transfers_per_second",
            "Current PCIe link speed of the NIC function (current_link_speed, GT/s x 1e9).", kGauge, device_labels,
            *link.current_speed_gts * 1e9);
  }
  if (link.max_speed_gts) {
    out.Add("fabcheck_rdma_device_pcie_link_max_speed_transfers_per_second",
            "Maximum PCIe link speed of the NIC function (max_link_speed, GT/s x 1e9).", kGauge, device_labels,
            *link.max_speed_gts * 1e9);
  }
  if (link.current_width) {
    out.Add("fabcheck_rdma_device_pcie_link_width_lanes", "Current PCIe link width of the NIC function.", kGauge,
            device_labels, *link.current_width);
  }
  if (link.max_width) {
    out.Add("fabcheck_rdma_device_pcie_link_max_width_lanes", "Maximum PCIe link width of the NIC function.", kGauge,
            device_labels, *link.max_width);
  }
  for (const GpuAffinity& gpu : info->gpus) {
    Labels g = With(device_labels, {{"gpu", std::to_string(gpu.gpu)}, {"path_type", gpu.path_type},
                                    {"rail", gpu.rail ? "true" : "false"}});
    if (!gpu.gpu_pci_address.empty()) g.emplace_back("gpu_pci_address", gpu.gpu_pci_address);
    if (!gpu.gpu_uuid.empty()) g.emplace_back("gpu_uuid", gpu.gpu_uuid);
    out.Add("fabcheck_rdma_gpu_affinity_info",
            "PCIe distance between a GPU and this RDMA device (nvidia-smi topo classes PIX, PXB, PHB, NODE, SYS); "
            "rail=true marks the NIC recommended for the GPU.",
            kGauge, std::move(g), 1);
  }
}

void AddPodMetrics(const std::string& device, const std::vector<PodAssignment>& assignments, const Labels& node,
                   MetricSet& out) {
  for (const PodAssignment& a : assignments) {
    out.Add("fabcheck_pod_rdma_device_info",
            "An RDMA device allocated to a container, from the kubelet PodResources API.", kGauge,
            With(node, {{"device", device},
                        {"namespace", a.pod_namespace},
                        {"pod", a.pod},
                        {"container", a.container},
                        {"resource", a.resource},
                        {"device_id", a.device_id}}),
            1);
  }
}

}  // namespace

CollectResult CollectFabric(const sys::SysRoot& root, const CollectContext& context, MetricSet& out) {
  FabricCollector collector(root);
  return collector.Collect(context, out);
}

CollectResult FabricCollector::Collect(const CollectContext& context, MetricSet& out) {
  const sys::SysRoot& root = root_;
  // Re-list the kept directories now and then: counters can appear (optional
  // counters enabled with `rdma statistic set`) or go away.
  const bool relist = collections_++ % 16 == 15;
  std::map<std::pair<std::string, int>, PortHandles> kept;
  CollectResult result;
  const Labels node_labels = {{"node", context.node}};
  auto devices = root.ListDir(std::string(sys::infiniband::kClassDir));
  if (!devices.ok()) {
    // No RDMA stack (or no module loaded) is a state worth a metric, not a failed scrape.
    if (root.Exists(sys::infiniband::kClassDir)) {
      result.errors.push_back({"devices", ReasonFor(devices.status()), std::string(sys::infiniband::kClassDir),
                               devices.status().message()});
    }
    out.Add("fabcheck_rdma_devices", "RDMA devices listed under /sys/class/infiniband.", kGauge, node_labels, 0);
    ports_.clear();
    ports_dirs_.clear();
    return result;
  }
  out.Add("fabcheck_rdma_devices", "RDMA devices listed under /sys/class/infiniband.", kGauge, node_labels,
          static_cast<double>(devices->size()));
  result.devices_seen = *devices;

  for (const std::string& device : *devices) {
    const DeviceLabels* info = context.topology ? context.topology->Find(device) : nullptr;
    Labels device_labels = With(node_labels, {{"device", device}});
    if (info && !info->pci_address.empty()) device_labels.emplace_back("pci_address", info->pci_address);

    std::string& ports_dir = ports_dirs_[device];
    auto ports = ListPorts(root, device, &ports_dir);
    if (!ports.ok()) {
      // Listed a moment ago, gone now: a device that disappears is skipped.
      result.errors.push_back({"port", ReasonFor(ports.status()), sys::infiniband::PortsDir(device),
                               ports.status().message()});
      continue;
    }
    AddDeviceMetrics(info, device_labels, out);

    const std::vector<PodAssignment>* assigned = nullptr;
    if (context.pods) {
      auto it = context.pods->by_device.find(device);
      if (it != context.pods->by_device.end()) {
        assigned = &it->second;
        AddPodMetrics(device, it->second, node_labels, out);
      }
    }

    for (int port : *ports) {
      PortHandles& handles = kept[{device, port}];
      if (auto it = ports_.find({device, port}); it != ports_.end()) handles = std::move(it->second);
      PortReading reading = ReadPort(root, device, port, &handles, relist);
      for (auto& e : reading.errors) result.errors.push_back(std::move(e));
      if (!reading.present) continue;

      std::string netdev;
      if (info) {
        auto it = info->port_netdev.find(port);
        if (it != info->port_netdev.end()) netdev = it->second;
      }
      Labels labels = With(node_labels, {{"device", device}, {"port", std::to_string(port)}});
      if (!netdev.empty()) labels.emplace_back("netdev", netdev);
      if (info && !info->pci_address.empty()) labels.emplace_back("pci_address", info->pci_address);
      // One owner: the pod labels go on every series of the port. A device
      // shared by several containers keeps only fabcheck_pod_rdma_device_info.
      if (assigned && assigned->size() == 1) {
        labels.emplace_back("namespace", (*assigned)[0].pod_namespace);
        labels.emplace_back("pod", (*assigned)[0].pod);
        labels.emplace_back("container", (*assigned)[0].container);
      }
      Labels info_labels = labels;
      if (!reading.link_layer.empty()) info_labels.emplace_back("link_layer", reading.link_layer);
      if (!reading.speed_name.empty()) info_labels.emplace_back("speed", reading.speed_name);
      out.Add("fabcheck_rdma_port_info", "An RDMA port with its link layer, netdev and PCI address.", kGauge,
              std::move(info_labels), 1);
      AddPortMetrics(reading, labels, out);

      if (netdev.empty()) continue;
      AddNetdevMetrics(root, netdev, labels, out, result, &handles, relist);
      if (context.ethtool && reading.link_layer != "InfiniBand") {
        auto stats = context.ethtool->Read(netdev);
        if (stats.ok()) {
          AddEthtoolMetrics(*stats, labels, out);
        } else if (stats.status().code() != StatusCode::kNotFound &&
                   stats.status().code() != StatusCode::kUnimplemented) {
          // NotFound: no recorded statistics in a capture; Unimplemented: a driver without them.
          result.errors.push_back({"ethtool", "unreadable", netdev, stats.status().message()});
        }
      }
    }
  }
  // Ports not seen in this scrape close their handles.
  ports_ = std::move(kept);
  std::erase_if(ports_dirs_, [&](const auto& entry) {
    return std::find(devices->begin(), devices->end(), entry.first) == devices->end();
  });
  return result;
}

}  // namespace fabcheck::telemetry
