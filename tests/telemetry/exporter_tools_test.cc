// The exporter against the real tools of its ecosystem, all on loopback:
// promtool's linter, node_exporter's infiniband collector on the same sysroot,
// and a Prometheus server that scrapes the exporter and answers a query.
// Each test skips with the reason when its Debian package is not installed
// (scripts/debian-packages.txt lists prometheus and prometheus-node-exporter).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "fabric_fixture.h"
#include "pod_resources_metrics.h"
#include "process_helpers.h"

namespace fabcheck::telemetry::testing {
namespace {

namespace fs = std::filesystem;
using fixtures::FabricSpec;
using fixtures::GpuNode;
using fixtures::NicSpec;
using fixtures::WriteFabric;

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class ExporterToolsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("fcexp-tools-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The fixtures every check runs on: generated nodes with planted faults,
  // and the inventory's fixture sysroots when they are in the tree.
  std::vector<std::pair<std::string, std::string>> Fixtures() {
    std::vector<std::pair<std::string, std::string>> out;
    auto add = [&](const std::string& name, const FabricSpec& spec) {
      std::string root = (dir_ / name).string();
      WriteFabric(root, spec);
      out.emplace_back(name, root);
    };
    add("ib-8", GpuNode(8));
    FabricSpec roce = GpuNode(2, /*roce=*/true);
    for (auto& nic : roce.nics) nic.ethtool_dump = true;
    add("roce-2-ethtool", roce);
    FabricSpec faults = GpuNode(5);
    faults.nics[0].extended = false;
    faults.nics[0].counters_ext = true;  // a pre-v4.5 kernel: legacy counters/ and the 64-bit counters_ext/
    faults.nics[1].no_pma_text = true;
    faults.nics[2].garbage_counter = "symbol_error";
    faults.nics[3].state = "1: DOWN";
    faults.nics[3].phys_state = "3: Disabled";
    faults.nics[4].rate = "100 Gb/sec (4X EDR)";
    NicSpec rxe;
    rxe.device = "rxe0";
    rxe.rxe = true;
    rxe.link_layer = "Ethernet";
    rxe.netdev = "veth-fc0";
    faults.nics.push_back(rxe);
    add("faults", faults);
    // SR-IOV: a PF with VFs (netdev and RDMA device, one moved away, one vfio-pci) and one with none enabled.
    FabricSpec sriov = GpuNode(2, /*roce=*/true);
    sriov.nics[0].sriov_total_vfs = 8;
    sriov.nics[0].vfs = {{true, true, "mlx5_core"}, {false, true, "mlx5_core"}, {false, false, "vfio-pci"}};
    sriov.nics[1].sriov_total_vfs = 8;
    add("sriov", sriov);
    for (const char* dir : {"tests/data", "tests/inventory"}) {
      fs::path base = fs::path(FABCHECK_SOURCE_DIR) / dir;
      if (!fs::is_directory(base)) continue;
      for (const auto& entry : fs::recursive_directory_iterator(base)) {
        if (entry.is_directory() && fs::is_directory(entry.path() / "sys/class/infiniband") &&
            entry.path().filename() != "sys") {
          out.emplace_back(fs::relative(entry.path(), FABCHECK_SOURCE_DIR).string(), entry.path().string());
        }
        if (entry.is_regular_file() && entry.path().string().ends_with(".tar.gz")) {
          out.emplace_back(fs::relative(entry.path(), FABCHECK_SOURCE_DIR).string(), entry.path().string());
        }
      }
    }
    return out;
  }

  std::string Once(const std::string& sysroot) {
    CommandResult r = RunCommand(std::string(FABCHECK_BINARY) + " --log-level error exporter --once --node-name t --sysroot '" +
                                 sysroot + "' 2>/dev/null");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return r.output;
  }

  fs::path dir_;
};

TEST_F(ExporterToolsTest, PromtoolCheckMetricsIsCleanOnEveryFixture) {
  std::string promtool = FindTool("promtool");
  if (promtool.empty()) GTEST_SKIP() << "promtool not installed (Debian package prometheus)";
  for (const auto& [name, root] : Fixtures()) {
    SCOPED_TRACE(name);
    std::string text = Once(root);
    ASSERT_NE(text.find("fabcheck_exporter_scrape_duration_seconds"), std::string::npos);
    fs::path file = dir_ / (fs::path(name).filename().string() + ".prom");
    std::ofstream(file) << text;
    CommandResult check = RunCommand(promtool + " check metrics < '" + file.string() + "'");
    EXPECT_EQ(check.exit_code, 0) << check.output;
    EXPECT_EQ(check.output, "") << check.output;
  }
}

TEST_F(ExporterToolsTest, FaultsAreSkippedWithErrorMetricsNotFailedScrapes) {
  auto fixtures = Fixtures();
  std::string text = Once(fixtures[2].second);
  auto samples = ParsePrometheusText(text);
  bool garbage = false;
  for (const auto& s : samples) {
    if (s.name == "fabcheck_exporter_read_errors" && s.Label("reason") == "garbage" && s.Label("device") == "mlx5_2") {
      garbage = s.value == 1;
    }
  }
  EXPECT_TRUE(garbage) << text;
  // The garbage file is the only thing missing from mlx5_2.
  EXPECT_NE(text.find("fabcheck_rdma_port_link_downed_total{node=\"t\",device=\"mlx5_2\""), std::string::npos);
  EXPECT_EQ(text.find("fabcheck_rdma_port_symbol_error_total{node=\"t\",device=\"mlx5_2\""), std::string::npos);
  EXPECT_NE(text.find("fabcheck_rdma_port_pma_saturated{node=\"t\",device=\"mlx5_0\""), std::string::npos);
  EXPECT_NE(text.find("fabcheck_rdma_hw_rcvd_seq_err_total{node=\"t\",device=\"rxe0\""), std::string::npos);
}

// node_exporter name -> fabcheck name (rdma-facts §5.1).
const std::map<std::string, std::string>& NodeExporterNames() {
  static const std::map<std::string, std::string> kNames = {
      {"state_id", "fabcheck_rdma_port_state_id"},
      // counters_ext/ (pre-v4.5 kernels)
      {"legacy_data_received_bytes_total", "fabcheck_rdma_port_ext_rcv_data_bytes_total"},
      {"legacy_data_transmitted_bytes_total", "fabcheck_rdma_port_ext_xmit_data_bytes_total"},
      {"legacy_packets_received_total", "fabcheck_rdma_port_ext_rcv_packets_total"},
      {"legacy_packets_transmitted_total", "fabcheck_rdma_port_ext_xmit_packets_total"},
      {"legacy_unicast_packets_received_total", "fabcheck_rdma_port_ext_unicast_rcv_packets_total"},
      {"legacy_unicast_packets_transmitted_total", "fabcheck_rdma_port_ext_unicast_xmit_packets_total"},
      {"legacy_multicast_packets_received_total", "fabcheck_rdma_port_ext_multicast_rcv_packets_total"},
      {"legacy_multicast_packets_transmitted_total", "fabcheck_rdma_port_ext_multicast_xmit_packets_total"},
      {"physical_state_id", "fabcheck_rdma_port_physical_state_id"},
      {"rate_bytes_per_second", "fabcheck_rdma_port_rate_bytes_per_second"},
      {"excessive_buffer_overrun_errors_total", "fabcheck_rdma_port_excessive_buffer_overrun_errors_total"},
      {"link_downed_total", "fabcheck_rdma_port_link_downed_total"},
      {"link_error_recovery_total", "fabcheck_rdma_port_link_error_recovery_total"},
      {"local_link_integrity_errors_total", "fabcheck_rdma_port_local_link_integrity_errors_total"},
      {"multicast_packets_received_total", "fabcheck_rdma_port_multicast_rcv_packets_total"},
      {"multicast_packets_transmitted_total", "fabcheck_rdma_port_multicast_xmit_packets_total"},
      {"port_constraint_errors_received_total", "fabcheck_rdma_port_rcv_constraint_errors_total"},
      {"port_constraint_errors_transmitted_total", "fabcheck_rdma_port_xmit_constraint_errors_total"},
      {"port_data_received_bytes_total", "fabcheck_rdma_port_rcv_data_bytes_total"},
      {"port_data_transmitted_bytes_total", "fabcheck_rdma_port_xmit_data_bytes_total"},
      {"port_discards_transmitted_total", "fabcheck_rdma_port_xmit_discards_total"},
      {"port_errors_received_total", "fabcheck_rdma_port_rcv_errors_total"},
      {"port_packets_received_total", "fabcheck_rdma_port_rcv_packets_total"},
      {"port_packets_transmitted_total", "fabcheck_rdma_port_xmit_packets_total"},
      {"port_transmit_wait_total", "fabcheck_rdma_port_xmit_wait_total"},
      {"unicast_packets_received_total", "fabcheck_rdma_port_unicast_rcv_packets_total"},
      {"unicast_packets_transmitted_total", "fabcheck_rdma_port_unicast_xmit_packets_total"},
      {"port_receive_remote_physical_errors_total", "fabcheck_rdma_port_rcv_remote_physical_errors_total"},
      {"port_receive_switch_relay_errors_total", "fabcheck_rdma_port_rcv_switch_relay_errors_total"},
      {"symbol_error_total", "fabcheck_rdma_port_symbol_error_total"},
      {"vl15_dropped_total", "fabcheck_rdma_port_vl15_dropped_total"},
      {"duplicate_requests_packets_total", "fabcheck_rdma_hw_duplicate_request_total"},
      {"implied_nak_seq_errors_total", "fabcheck_rdma_hw_implied_nak_seq_err_total"},
      {"local_ack_timeout_errors_total", "fabcheck_rdma_hw_local_ack_timeout_err_total"},
      {"np_cnp_packets_sent_total", "fabcheck_rdma_hw_np_cnp_sent_total"},
      {"np_ecn_marked_roce_packets_received_total", "fabcheck_rdma_hw_np_ecn_marked_roce_packets_total"},
      {"out_of_buffer_drops_total", "fabcheck_rdma_hw_out_of_buffer_total"},
      {"out_of_sequence_packets_received_total", "fabcheck_rdma_hw_out_of_sequence_total"},
      {"packet_sequence_errors_total", "fabcheck_rdma_hw_packet_seq_err_total"},
      {"req_cqes_errors_total", "fabcheck_rdma_hw_req_cqe_error_total"},
      {"req_cqes_flush_errors_total", "fabcheck_rdma_hw_req_cqe_flush_error_total"},
      {"req_remote_access_errors_total", "fabcheck_rdma_hw_req_remote_access_errors_total"},
      {"req_remote_invalid_request_errors_total", "fabcheck_rdma_hw_req_remote_invalid_request_total"},
      {"resp_cqes_errors_total", "fabcheck_rdma_hw_resp_cqe_error_total"},
      {"resp_cqes_flush_errors_total", "fabcheck_rdma_hw_resp_cqe_flush_error_total"},
      {"resp_local_length_errors_total", "fabcheck_rdma_hw_resp_local_length_error_total"},
      {"resp_remote_access_errors_total", "fabcheck_rdma_hw_resp_remote_access_errors_total"},
      {"rnr_nak_retry_packets_received_total", "fabcheck_rdma_hw_rnr_nak_retry_err_total"},
      {"roce_adp_retransmits_total", "fabcheck_rdma_hw_roce_adp_retrans_total"},
      {"roce_adp_retransmits_timeout_total", "fabcheck_rdma_hw_roce_adp_retrans_to_total"},
      {"roce_slow_restart_used_total", "fabcheck_rdma_hw_roce_slow_restart_total"},
      {"roce_slow_restart_cnps_total", "fabcheck_rdma_hw_roce_slow_restart_cnps_total"},
      {"roce_slow_restart_total", "fabcheck_rdma_hw_roce_slow_restart_trans_total"},
      {"rp_cnp_packets_handled_total", "fabcheck_rdma_hw_rp_cnp_handled_total"},
      {"rp_cnp_ignored_packets_received_total", "fabcheck_rdma_hw_rp_cnp_ignored_total"},
      {"rx_atomic_requests_total", "fabcheck_rdma_hw_rx_atomic_requests_total"},
      {"rx_dct_connect_requests_total", "fabcheck_rdma_hw_rx_dct_connect_total"},
      {"rx_read_requests_total", "fabcheck_rdma_hw_rx_read_requests_total"},
      {"rx_write_requests_total", "fabcheck_rdma_hw_rx_write_requests_total"},
      {"rx_icrc_encapsulated_errors_total", "fabcheck_rdma_hw_rx_icrc_encapsulated_total"},
  };
  return kNames;
}

TEST_F(ExporterToolsTest, ValuesEqualNodeExporterInfinibandCollector) {
  std::string node_exporter = FindTool("prometheus-node-exporter");
  if (node_exporter.empty()) node_exporter = FindTool("node_exporter");
  if (node_exporter.empty()) GTEST_SKIP() << "node_exporter not installed (Debian package prometheus-node-exporter)";
  int compared_total = 0;
  for (const auto& [name, root] : Fixtures()) {
    if (root.ends_with(".tar.gz")) continue;  // node_exporter reads a directory
    SCOPED_TRACE(name);
    int port = FreePort();
    BackgroundProcess ne;
    ASSERT_TRUE(ne.Start({node_exporter, "--path.sysfs=" + root + "/sys", "--path.procfs=" + root + "/proc",
                          "--collector.disable-defaults", "--collector.infiniband",
                          "--web.listen-address=127.0.0.1:" + std::to_string(port)},
                         (dir_ / "node_exporter.log").string()));
    std::string theirs = HttpGet(port, "/metrics", 20);
    ne.Stop();
    ASSERT_FALSE(theirs.empty()) << ReadAll(dir_ / "node_exporter.log");
    std::map<std::string, double> ours;
    for (const auto& s : ParsePrometheusText(Once(root))) {
      ours[s.name + "|" + s.Label("device") + "|" + s.Label("port")] = s.value;
    }
    int compared = 0;
    for (const auto& s : ParsePrometheusText(theirs)) {
      if (!s.name.starts_with("node_infiniband_")) continue;
      std::string short_name = s.name.substr(std::string("node_infiniband_").size());
      if (short_name == "info" || short_name == "lifespan_seconds") continue;  // labels-only / integer-divided ms
      auto mapped = NodeExporterNames().find(short_name);
      ASSERT_NE(mapped, NodeExporterNames().end()) << "node_exporter exports " << s.name << ", which has no mapping";
      std::string key = mapped->second + "|" + s.Label("device") + "|" + s.Label("port");
      auto it = ours.find(key);
      ASSERT_NE(it, ours.end()) << "fabcheck lacks " << key << " (node_exporter: " << s.value << ")";
      EXPECT_DOUBLE_EQ(it->second, s.value) << key;
      ++compared;
    }
    compared_total += compared;
  }
  // Not vacuous: the 8-NIC fixture alone has dozens of shared series per port.
  EXPECT_GT(compared_total, 8 * 20);
}

TEST_F(ExporterToolsTest, PrometheusScrapesTheExporterAndAnswersAQuery) {
  std::string prometheus = FindTool("prometheus");
  if (prometheus.empty()) GTEST_SKIP() << "prometheus not installed (Debian package prometheus)";
  FabricSpec spec = GpuNode(2);
  std::string root = (dir_ / "root").string();
  WriteFabric(root, spec);
  int exporter_port = FreePort();
  BackgroundProcess exporter;
  ASSERT_TRUE(exporter.Start({FABCHECK_BINARY, "exporter", "--sysroot", root, "--node-name", "n1", "--listen",
                              "127.0.0.1:" + std::to_string(exporter_port)},
                             (dir_ / "exporter.log").string()));
  ASSERT_FALSE(HttpGet(exporter_port, "/healthz", 20).empty()) << ReadAll(dir_ / "exporter.log");

  fs::path rules = fs::path(FABCHECK_SOURCE_DIR) / "deploy/prometheus/fabcheck-rules.yaml";
  std::ofstream(dir_ / "prometheus.yml") << "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                                         << "rule_files: ['" << rules.string() << "']\n"
                                         << "scrape_configs:\n  - job_name: fabcheck\n    static_configs:\n"
                                         << "      - targets: ['127.0.0.1:" << exporter_port << "']\n";
  int prom_port = FreePort();
  BackgroundProcess prom;
  ASSERT_TRUE(prom.Start({prometheus, "--config.file=" + (dir_ / "prometheus.yml").string(),
                          "--storage.tsdb.path=" + (dir_ / "tsdb").string(),
                          "--web.listen-address=127.0.0.1:" + std::to_string(prom_port)},
                         (dir_ / "prometheus.log").string()));
  const std::string query =
      "/api/v1/query?query=fabcheck_rdma_port_rcv_data_bytes_total%7Bdevice%3D%22mlx5_1%22%7D";
  double expected = 4.0 * static_cast<double>(CounterValue(spec.nics[1], "port_rcv_data"));
  std::string answer;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(45);
  while (std::chrono::steady_clock::now() < deadline) {
    answer = HttpGet(prom_port, query, 5);
    if (answer.find("\"result\":[{") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  ASSERT_NE(answer.find("\"result\":[{"), std::string::npos)
      << answer << "\n" << ReadAll(dir_ / "prometheus.log") << ReadAll(dir_ / "exporter.log");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(answer, m, std::regex(R"re("value":\[[0-9.]+,"([^"]+)"\])re"))) << answer;
  EXPECT_DOUBLE_EQ(std::stod(m[1].str()), expected);
  EXPECT_NE(answer.find("\"node\":\"n1\""), std::string::npos);
  // The rules loaded into the real server.
  std::string rules_answer = HttpGet(prom_port, "/api/v1/rules", 5);
  EXPECT_NE(rules_answer.find("FabcheckCnpIgnored"), std::string::npos) << rules_answer;
  EXPECT_EQ(rules_answer.find("\"health\":\"err\""), std::string::npos) << rules_answer;
}

TEST_F(ExporterToolsTest, SriovFixtureExportsPfAndVfCounts) {
  auto fixtures = Fixtures();
  auto it = std::find_if(fixtures.begin(), fixtures.end(), [](const auto& f) { return f.first == "sriov"; });
  ASSERT_NE(it, fixtures.end());
  std::string text = Once(it->second);
  EXPECT_NE(text.find("fabcheck_sriov_pf_total_vfs{node=\"t\",pci_address=\"0000:18:00.0\",device=\"mlx5_0\","
                      "netdev=\"ens1f0np0\"} 8"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("fabcheck_sriov_pf_enabled_vfs{node=\"t\",pci_address=\"0000:18:00.0\",device=\"mlx5_0\","
                      "netdev=\"ens1f0np0\"} 3"),
            std::string::npos);
  EXPECT_NE(text.find("fabcheck_sriov_pf_vfs_with_netdev{node=\"t\",pci_address=\"0000:18:00.0\",device=\"mlx5_0\","
                      "netdev=\"ens1f0np0\"} 1"),
            std::string::npos);
  EXPECT_NE(text.find("fabcheck_sriov_pf_enabled_vfs{node=\"t\",pci_address=\"0000:24:00.0\",device=\"mlx5_1\","
                      "netdev=\"ens2f0np0\"} 0"),
            std::string::npos);
  // The VFs' RDMA devices are ports like any other.
  EXPECT_NE(text.find("fabcheck_rdma_port_up{node=\"t\",device=\"mlx5_2\""), std::string::npos);
  // No kubelet: nobody can say a VF is unreclaimed.
  EXPECT_EQ(text.find("fabcheck_k8s_"), std::string::npos);
}

// A capture of the SR-IOV node carries the PF and VF files: the exporter
// reads the same PFs and VFs from the capture as from the node.
TEST_F(ExporterToolsTest, SnapshotCarriesSriovFiles) {
  auto fixtures = Fixtures();
  auto it = std::find_if(fixtures.begin(), fixtures.end(), [](const auto& f) { return f.first == "sriov"; });
  ASSERT_NE(it, fixtures.end());
  const std::string capture =
      (fs::temp_directory_path() / ("fabcheck-sriov-capture-" + std::to_string(::getpid()) + ".tar.gz")).string();
  CommandResult snap = RunCommand(std::string(FABCHECK_BINARY) + " --log-level error snapshot --sysroot '" +
                                  it->second + "' -o '" + capture + "'");
  ASSERT_EQ(snap.exit_code, 0) << snap.output;
  auto sriov_lines = [](const std::string& text) {
    std::string out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("fabcheck_sriov_", 0) == 0) out += line + "\n";
    }
    return out;
  };
  std::string live = sriov_lines(Once(it->second));
  std::string captured = sriov_lines(Once(capture));
  fs::remove(capture);
  EXPECT_NE(live.find("fabcheck_sriov_vf_info"), std::string::npos) << live;
  EXPECT_EQ(captured, live);
}

// promtool's own unit tests of the alert rules (deploy/prometheus/fabcheck-rules.test.yaml).
TEST_F(ExporterToolsTest, PromtoolTestRulesPass) {
  std::string promtool = FindTool("promtool");
  if (promtool.empty()) GTEST_SKIP() << "promtool not installed (Debian package prometheus)";
  fs::path dir = fs::path(FABCHECK_SOURCE_DIR) / "deploy/prometheus";
  CommandResult check = RunCommand(promtool + " check rules '" + (dir / "fabcheck-rules.yaml").string() + "' 2>&1");
  EXPECT_EQ(check.exit_code, 0) << check.output;
  CommandResult test = RunCommand("cd '" + dir.string() + "' && " + promtool + " test rules fabcheck-rules.test.yaml 2>&1");
  EXPECT_EQ(test.exit_code, 0) << test.output;
  EXPECT_NE(test.output.find("SUCCESS"), std::string::npos) << test.output;
}

// The dashboard is JSON Grafana imports: unique panel IDs, panels that do not overlap, a query per panel.
TEST_F(ExporterToolsTest, DashboardIsValidGrafanaJson) {
  std::string text = ReadAll(fs::path(FABCHECK_SOURCE_DIR) / "deploy/grafana/fabcheck-rdma-dashboard.json");
  auto dashboard = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(dashboard.is_discarded()) << "deploy/grafana/fabcheck-rdma-dashboard.json is not valid JSON";
  ASSERT_TRUE(dashboard.contains("panels") && dashboard["panels"].is_array());
  std::set<int> ids;
  std::set<std::pair<int, int>> cells;  // (x, y) of every grid cell taken
  int k8s_panels = 0;
  for (const auto& panel : dashboard["panels"]) {
    ASSERT_TRUE(panel.contains("id") && panel["id"].is_number_integer()) << panel.dump();
    EXPECT_TRUE(ids.insert(panel["id"].get<int>()).second) << "duplicate panel id " << panel["id"];
    const auto& grid = panel["gridPos"];
    int x = grid["x"], y = grid["y"], w = grid["w"], h = grid["h"];
    EXPECT_LE(x + w, 24) << panel["title"];
    for (int i = x; i < x + w; ++i) {
      for (int j = y; j < y + h; ++j) EXPECT_TRUE(cells.insert({i, j}).second) << panel["title"] << " overlaps";
    }
    if (panel["type"] == "row") continue;
    ASSERT_TRUE(panel.contains("targets") && !panel["targets"].empty()) << panel["title"];
    for (const auto& target : panel["targets"]) EXPECT_FALSE(target["expr"].get<std::string>().empty());
    if (panel["targets"].dump().find("fabcheck_k8s_") != std::string::npos ||
        panel["targets"].dump().find("fabcheck_sriov_") != std::string::npos) {
      ++k8s_panels;
    }
  }
  EXPECT_GE(k8s_panels, 6);
}

TEST_F(ExporterToolsTest, DashboardAndAlertsUseOnlyExportedMetrics) {
  std::set<std::string> exported;
  for (const auto& [name, root] : Fixtures()) {
    for (const auto& s : ParsePrometheusText(Once(root))) exported.insert(s.name);
  }
  // Present only with PodResources (telemetry_pod_resources_test checks each is exported).
  for (const char* name : kPodResourcesMetrics) exported.insert(name);
  const std::regex metric(R"(fabcheck_[a-z0-9_]+)");
  for (const char* file : {"deploy/grafana/fabcheck-rdma-dashboard.json", "deploy/prometheus/fabcheck-rules.yaml"}) {
    std::string text = ReadAll(fs::path(FABCHECK_SOURCE_DIR) / file);
    ASSERT_FALSE(text.empty()) << file;
    int used = 0;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), metric); it != std::sregex_iterator(); ++it) {
      std::string name = it->str();
      if (name == "fabcheck_rdma_fabric" || name == "fabcheck_rdma_hw_") continue;
      ++used;
      EXPECT_TRUE(exported.count(name)) << file << " uses " << name << ", which the exporter does not export";
    }
    EXPECT_GT(used, 10) << file;
  }
}

}  // namespace
}  // namespace fabcheck::telemetry::testing
