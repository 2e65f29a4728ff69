#include "fabric_fixture.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <functional>

namespace fabcheck::telemetry::testing {
namespace fs = std::filesystem;
namespace {

void Write(const fs::path& path, const std::string& content) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
}

void Link(const std::string& target, const fs::path& link) {
  fs::create_directories(link.parent_path());
  fs::create_symlink(target, link);
}

const char* kLegacyPma[] = {"symbol_error", "link_error_recovery", "link_downed", "port_rcv_errors",
                            "port_rcv_remote_physical_errors", "port_rcv_switch_relay_errors", "port_xmit_discards",
                            "port_xmit_constraint_errors", "port_rcv_constraint_errors",
                            "local_link_integrity_errors", "excessive_buffer_overrun_errors", "VL15_dropped",
                            "port_xmit_wait", "port_xmit_data", "port_rcv_data", "port_xmit_packets",
                            "port_rcv_packets"};
const char* kExtendedPma[] = {"unicast_xmit_packets", "unicast_rcv_packets", "multicast_xmit_packets",
                              "multicast_rcv_packets"};
const char* kCountersExt[] = {"port_xmit_data_64",         "port_rcv_data_64",          "port_xmit_packets_64",
                              "port_rcv_packets_64",       "port_unicast_xmit_packets", "port_unicast_rcv_packets",
                              "port_multicast_xmit_packets", "port_multicast_rcv_packets"};
const char* kMlx5Hw[] = {"duplicate_request", "implied_nak_seq_err", "local_ack_timeout_err", "np_cnp_sent",
                         "np_ecn_marked_roce_packets", "out_of_buffer", "out_of_sequence", "packet_seq_err",
                         "req_cqe_error", "req_cqe_flush_error", "req_remote_access_errors",
                         "req_remote_invalid_request", "resp_cqe_error", "resp_cqe_flush_error",
                         "resp_local_length_error", "resp_remote_access_errors", "rnr_nak_retry_err",
                         "roce_adp_retrans", "roce_adp_retrans_to", "roce_slow_restart", "roce_slow_restart_cnps",
                         "roce_slow_restart_trans", "rp_cnp_handled", "rp_cnp_ignored", "rx_atomic_requests",
                         "rx_dct_connect", "rx_icrc_encapsulated", "rx_read_requests", "rx_write_requests",
                         "req_transport_retries_exceeded", "req_rnr_retries_exceeded"};
const char* kRxeHw[] = {"sent_pkts", "rcvd_pkts", "duplicate_request", "out_of_seq_request", "rcvd_rnr_err",
                        "send_rnr_err", "rcvd_seq_err", "retry_exceeded_err", "retry_rnr_exceeded_err",
                        "completer_retry_err", "send_err", "link_downed", "rdma_sends", "rdma_recvs"};

int Width(const std::string& file) {
  static const std::pair<const char*, int> kWidths[] = {
      {"symbol_error", 16}, {"link_error_recovery", 8}, {"link_downed", 8}, {"port_rcv_errors", 16},
      {"port_rcv_remote_physical_errors", 16}, {"port_rcv_switch_relay_errors", 16}, {"port_xmit_discards", 16},
      {"port_xmit_constraint_errors", 8}, {"port_rcv_constraint_errors", 8}, {"local_link_integrity_errors", 4},
      {"excessive_buffer_overrun_errors", 4}, {"VL15_dropped", 16}, {"port_xmit_wait", 32}};
  for (const auto& [name, bits] : kWidths) {
    if (file == name) return bits;
  }
  return 0;
}

}  // namespace

std::vector<std::string> PmaCounterFiles(const NicSpec& nic) {
  std::vector<std::string> out;
  if (!nic.pma || nic.rxe) return out;
  for (const char* f : kLegacyPma) out.push_back(f);
  if (nic.extended) {
    for (const char* f : kExtendedPma) out.push_back(f);
  }
  return out;
}

std::vector<std::string> CountersExtFiles(const NicSpec& nic) {
  std::vector<std::string> out;
  if (!nic.counters_ext || !nic.pma || nic.rxe) return out;
  for (const char* f : kCountersExt) out.push_back(f);
  return out;
}

std::vector<std::string> HwCounterFiles(const NicSpec& nic) {
  std::vector<std::string> out;
  if (nic.rxe) {
    for (const char* f : kRxeHw) out.push_back(f);
  } else {
    for (const char* f : kMlx5Hw) out.push_back(f);
  }
  return out;
}

uint64_t CounterValue(const NicSpec& nic, const std::string& file) {
  uint64_t h = std::hash<std::string>{}(file) ^ (nic.seed * 0x9E3779B97F4A7C15ULL);
  h ^= h >> 29;
  int bits = Width(file);
  if (file == "port_xmit_data" || file == "port_rcv_data" || file == "port_xmit_packets" ||
      file == "port_rcv_packets") {
    if (!nic.extended) return 4294967295ULL;  // a legacy 32-bit counter saturated on a busy link
    return 1000000000000ULL + h % 900000000000000ULL;
  }
  if (file == "port_xmit_data_64" || file == "port_rcv_data_64") return 5000000000000ULL + h % 900000000000000ULL;
  if (bits > 0) return h % ((uint64_t{1} << bits) - 1);  // below the saturation value
  return h % 100000000ULL;
}

FabricSpec GpuNode(int nics, bool roce) {
  FabricSpec spec;
  for (int i = 0; i < nics; ++i) {
    NicSpec nic;
    nic.device = fmt::format("mlx5_{}", i);
    nic.seed = static_cast<uint64_t>(i + 1);
    int bus = 0x18 + i * 0x0c;
    if (roce) {
      nic.link_layer = "Ethernet";
      nic.rate = "400 Gb/sec (4X NDR)";
      nic.netdev = fmt::format("ens{}f0np0", i + 1);
    } else {
      nic.netdev = fmt::format("ibp{}s0", bus);
    }
    spec.nics.push_back(nic);
  }
  return spec;
}

std::string VfPciAddress(size_t nic_index, size_t vf) {
  int bus = 0x18 + static_cast<int>(nic_index) * 0x0c;
  size_t fn = vf + 2;
  return fmt::format("0000:{:02x}:{:02x}.{}", bus, fn / 8, fn % 8);
}

std::string VfRdmaDevice(const FabricSpec& spec, size_t nic_index, size_t vf) {
  size_t n = spec.nics.size();
  for (size_t i = 0; i < spec.nics.size(); ++i) {
    for (size_t k = 0; k < spec.nics[i].vfs.size(); ++k) {
      if (i == nic_index && k == vf) return fmt::format("mlx5_{}", n);
      if (spec.nics[i].vfs[k].rdma) ++n;
    }
  }
  return "";
}

namespace {

// A VF below its PF's root port: physfn/virtfn links, driver, and (as
// planted) its netdev and an RDMA device with one ACTIVE port.
void WriteVf(const fs::path& root, const FabricSpec& spec, size_t i, size_t k, const std::string& rel_parent,
             const fs::path& pf_dir, const std::string& pf_bdf) {
  const NicSpec& nic = spec.nics[i];
  const VfSpec& vf = nic.vfs[k];
  std::string bdf = VfPciAddress(i, k);
  std::string rel_pci = rel_parent + "/" + bdf;
  fs::path pci = root / "sys" / rel_pci;
  Write(pci / "vendor", "0x15b3\n");
  Write(pci / "device", "0x101e\n");  // ConnectX family VF
  Write(pci / "class", nic.link_layer == "Ethernet" ? "0x020000\n" : "0x020700\n");
  Write(pci / "numa_node", "0\n");
  Link("../" + pf_bdf, pci / "physfn");
  Link("../" + bdf, pf_dir / fmt::format("virtfn{}", k));
  if (!vf.driver.empty()) {
    fs::create_directories(root / "sys/bus/pci/drivers" / vf.driver);
    Link("../../../../bus/pci/drivers/" + vf.driver, pci / "driver");
  }
  Link("../../../" + rel_pci, root / "sys/bus/pci/devices" / bdf);
  if (vf.netdev && !nic.netdev.empty()) {
    std::string netdev = fmt::format("{}v{}", nic.netdev.substr(0, nic.netdev.find("np")), k);
    fs::path net = pci / "net" / netdev;
    Link("../../" + rel_pci + "/net/" + netdev, root / "sys/class/net" / netdev);
    Link("../../../" + bdf, net / "device");
    Write(net / "operstate", "up\n");
    Write(net / "mtu", "9000\n");
  }
  if (vf.rdma) {
    std::string device = VfRdmaDevice(spec, i, k);
    fs::path ib = pci / "infiniband" / device;
    Link("../../" + rel_pci + "/infiniband/" + device, root / "sys/class/infiniband" / device);
    Link("../../../" + bdf, ib / "device");
    Write(ib / "fw_ver", "28.39.1002\n");
    Write(ib / "hca_type", "MT4130\n");
    Write(ib / "node_type", "1: CA\n");
    fs::path port = ib / "ports/1";
    Write(port / "state", "4: ACTIVE\n");
    Write(port / "phys_state", "5: LinkUp\n");
    Write(port / "rate", nic.rate + "\n");
    Write(port / "link_layer", nic.link_layer + "\n");
  }
}

}  // namespace

void WriteFabric(const std::string& root_text, const FabricSpec& spec) {
  fs::path root(root_text);
  fs::remove_all(root);
  Write(root / "proc/sys/kernel/hostname", spec.hostname + "\n");
  Write(root / "proc/sys/kernel/osrelease", "6.8.0-fixture\n");
  fs::create_directories(root / "sys/class/infiniband");
  fs::create_directories(root / "sys/class/net");
  for (size_t i = 0; i < spec.nics.size(); ++i) {
    const NicSpec& nic = spec.nics[i];
    int bus = 0x18 + static_cast<int>(i) * 0x0c;
    int rc = 0x10 + static_cast<int>(i / 2) * 0x20;  // two NICs per root complex / switch
    std::string bdf = fmt::format("0000:{:02x}:00.0", bus);
    std::string rc_name = fmt::format("pci0000:{:02x}", rc);
    std::string root_port = fmt::format("0000:{:02x}:01.0", rc);
    std::string rel_pci = "devices/" + rc_name + "/" + root_port + "/" + bdf;
    fs::path pci = root / "sys" / rel_pci;
    Write(root / "sys/devices" / rc_name / root_port / "class", "0x060400\n");
    Write(root / "sys/devices" / rc_name / root_port / "vendor", "0x8086\n");
    Write(pci / "vendor", "0x15b3\n");
    Write(pci / "device", nic.rxe ? "0x1000\n" : "0x1021\n");
    Write(pci / "class", nic.link_layer == "Ethernet" ? "0x020000\n" : "0x020700\n");
    Write(pci / "subsystem_vendor", "0x15b3\n");
    Write(pci / "subsystem_device", "0x0041\n");
    Write(pci / "numa_node", i < spec.nics.size() / 2 || spec.nics.size() < 2 ? "0\n" : "1\n");
    Write(pci / "local_cpulist", i < spec.nics.size() / 2 ? "0-55\n" : "56-111\n");
    Write(pci / "current_link_speed", "32.0 GT/s PCIe\n");
    Write(pci / "max_link_speed", "32.0 GT/s PCIe\n");
    Write(pci / "current_link_width", "16\n");
    Write(pci / "max_link_width", "16\n");
    Link("../../../../bus/pci/drivers/mlx5_core", pci / "driver");
    fs::create_directories(root / "sys/bus/pci/drivers/mlx5_core");
    Link("../../../" + rel_pci, root / "sys/bus/pci/devices" / bdf);
    if (nic.sriov_total_vfs > 0) {
      Write(pci / "sriov_totalvfs", fmt::format("{}\n", nic.sriov_total_vfs));
      Write(pci / "sriov_numvfs", fmt::format("{}\n", nic.vfs.size()));
      for (size_t k = 0; k < nic.vfs.size(); ++k) {
        WriteVf(root, spec, i, k, "devices/" + rc_name + "/" + root_port, pci, bdf);
      }
    }

    fs::path ib = pci / "infiniband" / nic.device;
    Link("../../" + rel_pci + "/infiniband/" + nic.device, root / "sys/class/infiniband" / nic.device);
    Link("../../../" + bdf, ib / "device");
    Write(ib / "fw_ver", "28.39.1002\n");
    Write(ib / "hca_type", nic.rxe ? "\n" : "MT4129\n");
    Write(ib / "board_id", "MT_0000000838\n");
    Write(ib / "hw_rev", "0\n");
    Write(ib / "node_type", "1: CA\n");
    std::string guid = fmt::format("b859:9f03:00d4:{:04x}", 0x4a00 + i);
    Write(ib / "node_guid", guid + "\n");
    Write(ib / "sys_image_guid", guid + "\n");

    fs::path port = ib / "ports/1";
    Write(port / "state", nic.state + "\n");
    Write(port / "phys_state", nic.phys_state + "\n");
    Write(port / "rate", nic.rate + "\n");
    Write(port / "link_layer", nic.link_layer + "\n");
    Write(port / "lid", nic.link_layer == "Ethernet" ? "0x0\n" : fmt::format("0x{:x}\n", 0x10 + i));
    Write(port / "sm_lid", nic.link_layer == "Ethernet" ? "0x0\n" : "0x1\n");
    Write(port / "cap_mask", "0x2651e848\n");
    if (nic.link_layer == "Ethernet") {
      Write(port / "gids/0", fmt::format("fe80:0000:0000:0000:ba59:9fff:fed4:{:04x}\n", 0x4a00 + i));
      Write(port / "gids/1", fmt::format("fe80:0000:0000:0000:ba59:9fff:fed4:{:04x}\n", 0x4a00 + i));
      Write(port / "gids/2", fmt::format("0000:0000:0000:0000:0000:ffff:0a00:{:02x}05\n", i));
      Write(port / "gids/3", fmt::format("0000:0000:0000:0000:0000:ffff:0a00:{:02x}05\n", i));
      Write(port / "gids/4", "0000:0000:0000:0000:0000:0000:0000:0000\n");
      for (int g = 0; g < 4; ++g) {
        Write(port / "gid_attrs/types" / std::to_string(g), g % 2 == 0 ? "IB/RoCE v1\n" : "RoCE v2\n");
        Write(port / "gid_attrs/ndevs" / std::to_string(g), nic.netdev + "\n");
      }
    } else {
      Write(port / "gids/0", fmt::format("fe80:0000:0000:0000:{}\n", guid));
      Write(port / "gids/1", "0000:0000:0000:0000:0000:0000:0000:0000\n");
    }
    for (const std::string& file : PmaCounterFiles(nic)) {
      std::string content = nic.no_pma_text ? "N/A (no PMA)\n" : std::to_string(CounterValue(nic, file)) + "\n";
      if (file == nic.garbage_counter) content = "0x??garbage\n";
      Write(port / "counters" / file, content);
    }
    for (const std::string& file : CountersExtFiles(nic)) {
      Write(port / "counters_ext" / file, std::to_string(CounterValue(nic, file)) + "\n");
    }
    for (const std::string& file : HwCounterFiles(nic)) {
      Write(port / "hw_counters" / file, std::to_string(CounterValue(nic, file)) + "\n");
    }
    Write(port / "hw_counters/lifespan", "10\n");

    if (nic.ethtool_dump && !nic.netdev.empty()) {
      // The mlx5 names of rdma-facts §3.4, PFC on priority 3 only (pause
      // counters exist only for PFC-enabled priorities).
      std::string dump = "NIC statistics:\n";
      uint64_t v = nic.seed * 1000;
      auto add = [&](const std::string& name) { dump += fmt::format("     {}: {}\n", name, v++); };
      add("rx_packets");
      for (int p = 0; p < 8; ++p) {
        for (const char* dir : {"rx", "tx"}) {
          add(fmt::format("{}_prio{}_bytes", dir, p));
          add(fmt::format("{}_prio{}_packets", dir, p));
          if (p == 3) {
            add(fmt::format("{}_prio{}_pause", dir, p));
            add(fmt::format("{}_prio{}_pause_duration", dir, p));
          }
        }
        if (p == 3) add(fmt::format("rx_prio{}_pause_transition", p));
        for (const char* kind : {"buf_discard", "cong_discard", "marked", "discards"}) {
          add(fmt::format("rx_prio{}_{}", p, kind));
        }
      }
      for (const char* name :
           {"rx_pause_ctrl_phy", "tx_pause_ctrl_phy", "rx_global_pause", "rx_global_pause_duration",
            "rx_global_pause_transition", "tx_global_pause", "tx_global_pause_duration",
            "tx_pause_storm_warning_events", "tx_pause_storm_error_events", "rx_discards_phy", "tx_discards_phy",
            "rx_crc_errors_phy", "rx_symbol_err_phy", "rx_pcs_symbol_err_phy", "rx_corrected_bits_phy", "rx_bits_phy",
            "link_down_events_phy", "rx_out_of_buffer", "rx_buffer_passed_thres_phy", "rx_pci_signal_integrity",
            "tx_pci_signal_integrity", "outbound_pci_buffer_overflow"}) {
        add(name);
      }
      Write(root / "fabcheck/ethtool" / (nic.netdev + ".txt"), dump);
    }
    if (!nic.netdev.empty()) {
      fs::path net = pci / "net" / nic.netdev;
      Link("../../" + rel_pci + "/net/" + nic.netdev, root / "sys/class/net" / nic.netdev);
      Link("../../../" + bdf, net / "device");
      bool up = nic.state == "4: ACTIVE";
      Write(net / "mtu", nic.link_layer == "Ethernet" ? "9000\n" : "4092\n");
      Write(net / "operstate", up ? "up\n" : "down\n");
      Write(net / "carrier", up ? "1\n" : "0\n");
      Write(net / "speed", up ? "400000\n" : "-1\n");
      Write(net / "dev_port", "0\n");
      Write(net / "dev_id", "0x0\n");
      Write(net / "type", nic.link_layer == "Ethernet" ? "1\n" : "32\n");
      Write(net / "addr_len", nic.link_layer == "Ethernet" ? "6\n" : "20\n");
      Write(net / "address", nic.link_layer == "Ethernet"
                                 ? fmt::format("b8:59:9f:d4:4a:{:02x}\n", i)
                                 : fmt::format("00:00:10:29:fe:80:00:00:00:00:00:00:b8:59:9f:03:00:d4:4a:{:02x}\n", i));
    }
  }
}

}  // namespace fabcheck::telemetry::testing
