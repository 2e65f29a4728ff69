// Unit tests of the exporter's library on generated fabric fixtures.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "fabric_fixture.h"
#include "sys/sriov.h"
#include "sys/sysroot.h"
#include "telemetry/collector.h"
#include "telemetry/counter_catalog.h"
#include "telemetry/ethtool_stats.h"
#include "telemetry/exporter_service.h"
#include "telemetry/http_server.h"
#include "telemetry/port_reader.h"
#include "telemetry/prometheus_text.h"

namespace fabcheck::telemetry {
namespace {

namespace fs = std::filesystem;
using fixtures::FabricSpec;
using fixtures::GpuNode;

class FabricTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("fabcheck-telemetry-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
  }
  void TearDown() override { fs::remove_all(dir_); }
  sys::SysRoot Write(const FabricSpec& spec) {
    fixtures::WriteFabric(dir_.string(), spec);
    auto root = sys::SysRoot::Open(dir_.string());
    EXPECT_TRUE(root.ok()) << root.status().ToString();
    return *root;
  }
  fs::path dir_;
};

TEST(PrometheusTextTest, EscapesLabelValuesAndHelp) {
  EXPECT_EQ(EscapeLabelValue("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
  EXPECT_EQ(EscapeHelp("x \\ y\nz \"q\""), "x \\\\ y\\nz \"q\"");
}

TEST(PrometheusTextTest, FormatsValues) {
  EXPECT_EQ(FormatSampleValue(0), "0");
  EXPECT_EQ(FormatSampleValue(18527668), "18527668");
  EXPECT_EQ(FormatSampleValue(0.25), "0.25");
  EXPECT_EQ(FormatSampleValue(5e10), "50000000000");
  EXPECT_EQ(FormatSampleValue(1.8446744073709552e19), "1.8446744073709552e+19");
  EXPECT_EQ(FormatSampleValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(FormatSampleValue(std::nan("")), "NaN");
}

TEST(PrometheusTextTest, RendersHelpTypeAndSamples) {
  MetricSet set;
  set.Add("x_total", "A counter.\nSecond line", MetricType::kCounter, {{"device", "mlx5_0"}, {"port", "1"}}, 3);
  set.Add("x_total", "ignored", MetricType::kCounter, {{"device", "a\"b"}}, 4);
  set.Family("empty", "never rendered", MetricType::kGauge);
  set.Add("g", "A gauge.", MetricType::kGauge, {}, 1.5);
  EXPECT_EQ(RenderPrometheusText(set),
            "# HELP x_total A counter.\\nSecond line\n"
            "# TYPE x_total counter\n"
            "x_total{device=\"mlx5_0\",port=\"1\"} 3\n"
            "x_total{device=\"a\\\"b\"} 4\n"
            "# HELP g A gauge.\n"
            "# TYPE g gauge\n"
            "g 1.5\n");
}

TEST(CounterCatalogTest, NamesFollowPrometheusConventions) {
  EXPECT_EQ(PmaCounterMetricName("port_xmit_data"), "fabcheck_rdma_port_xmit_data_bytes_total");
  EXPECT_EQ(PmaCounterMetricName("VL15_dropped"), "fabcheck_rdma_port_vl15_dropped_total");
  EXPECT_EQ(PmaCounterMetricName("port_new_thing"), "fabcheck_rdma_port_new_thing_total");
  EXPECT_EQ(HwCounterMetricName("rnr_nak_retry_err"), "fabcheck_rdma_hw_rnr_nak_retry_err_total");
  EXPECT_EQ(HwCounterMetricName("Weird-Name.1"), "fabcheck_rdma_hw_weird_name_1_total");
  EXPECT_TRUE(FindPmaCounter("port_rcv_data")->octets_div4);
  EXPECT_FALSE(FindPmaCounter("port_rcv_packets")->octets_div4);
}

TEST_F(FabricTest, ReadsStateRateAndScaledCounters) {
  FabricSpec spec = GpuNode(2);
  sys::SysRoot root = Write(spec);
  PortReading r = ReadPort(root, "mlx5_1", 1);
  EXPECT_TRUE(r.errors.empty()) << r.errors[0].message;
  EXPECT_EQ(r.state_id, 4);
  EXPECT_EQ(r.state, "ACTIVE");
  EXPECT_EQ(r.phys_state_id, 5);
  EXPECT_EQ(r.phys_state, "LinkUp");
  EXPECT_DOUBLE_EQ(*r.rate_bytes_per_second, 5e10);
  EXPECT_EQ(r.width, 4);
  EXPECT_EQ(r.speed_name, "NDR");
  EXPECT_TRUE(r.extended_width);
  EXPECT_EQ(r.lifespan_ms, 10u);
  ASSERT_EQ(r.counters.size(), fixtures::PmaCounterFiles(spec.nics[1]).size());
  for (const CounterValue& c : r.counters) {
    uint64_t raw = fixtures::CounterValue(spec.nics[1], c.file);
    EXPECT_EQ(c.value, c.file == "port_xmit_data" || c.file == "port_rcv_data" ? raw * 4 : raw) << c.file;
    EXPECT_FALSE(c.saturated) << c.file;
  }
  EXPECT_EQ(r.hw_counters.size(), fixtures::HwCounterFiles(spec.nics[1]).size());
}

TEST_F(FabricTest, LegacyCountersSaturateAndNoPmaIsSkipped) {
  FabricSpec spec = GpuNode(2);
  spec.nics[0].extended = false;     // legacy 32-bit table, data counters stuck at 2^32-1
  spec.nics[1].no_pma_text = true;   // old kernel without PMA
  sys::SysRoot root = Write(spec);
  PortReading legacy = ReadPort(root, "mlx5_0", 1);
  EXPECT_FALSE(legacy.extended_width);
  int saturated = 0;
  for (const CounterValue& c : legacy.counters) {
    if (c.saturated) ++saturated;
    if (c.file == "port_rcv_data") {
      EXPECT_EQ(c.value, 4294967295ULL * 4);
    }
  }
  EXPECT_EQ(saturated, 4);  // xmit/rcv data and packets
  PortReading no_pma = ReadPort(root, "mlx5_1", 1);
  EXPECT_TRUE(no_pma.counters.empty());
  EXPECT_EQ(no_pma.skipped_no_pma, static_cast<int>(fixtures::PmaCounterFiles(spec.nics[1]).size()));
  EXPECT_TRUE(no_pma.errors.empty());
}

TEST_F(FabricTest, OldKernelCountersExtAreExportedAs64BitFamilies) {
  FabricSpec spec = GpuNode(2);
  spec.nics[0].extended = false;  // a pre-v4.5 kernel: legacy 32-bit counters/ ...
  spec.nics[0].counters_ext = true;  // ... and the 64-bit set in counters_ext/
  sys::SysRoot root = Write(spec);
  fs::create_directories(dir_ / "sys/class/infiniband/mlx5_0/ports/1/counters_ext/subdir");  // not a counter

  PortReading r = ReadPort(root, "mlx5_0", 1);
  EXPECT_TRUE(r.errors.empty());
  ASSERT_EQ(r.counters_ext.size(), fixtures::CountersExtFiles(spec.nics[0]).size());
  for (const CounterValue& c : r.counters_ext) {
    uint64_t raw = fixtures::CounterValue(spec.nics[0], c.file);
    bool data = c.file == "port_xmit_data_64" || c.file == "port_rcv_data_64";
    EXPECT_EQ(c.value, data ? raw * 4 : raw) << c.file;  // octets / 4, as counters/port_*_data
  }
  EXPECT_TRUE(ReadPort(root, "mlx5_1", 1).counters_ext.empty());  // current kernels have none

  FabricCollector collector(root);
  for (int scrape = 0; scrape < 2; ++scrape) {  // the second through kept handles
    MetricSet metrics;
    CollectContext context;
    context.node = "old";
    collector.Collect(context, metrics);
    const MetricFamily* data = metrics.Find("fabcheck_rdma_port_ext_rcv_data_bytes_total");
    ASSERT_NE(data, nullptr);
    EXPECT_EQ(data->type, MetricType::kCounter);
    EXPECT_NE(data->help.find("counters_ext/port_rcv_data_64"), std::string::npos);
    ASSERT_EQ(data->samples.size(), 1u);  // mlx5_1 has no counters_ext/
    EXPECT_EQ(data->samples[0].value,
              static_cast<double>(fixtures::CounterValue(spec.nics[0], "port_rcv_data_64") * 4));
    const Sample* unicast = metrics.FindSample("fabcheck_rdma_port_ext_unicast_xmit_packets_total",
                                               {{"node", "old"}, {"device", "mlx5_0"}, {"port", "1"}});
    ASSERT_NE(unicast, nullptr);
    EXPECT_EQ(unicast->value,
              static_cast<double>(fixtures::CounterValue(spec.nics[0], "port_unicast_xmit_packets")));
    for (const char* name :
         {"fabcheck_rdma_port_ext_xmit_data_bytes_total", "fabcheck_rdma_port_ext_xmit_packets_total",
          "fabcheck_rdma_port_ext_rcv_packets_total", "fabcheck_rdma_port_ext_unicast_rcv_packets_total",
          "fabcheck_rdma_port_ext_multicast_xmit_packets_total",
          "fabcheck_rdma_port_ext_multicast_rcv_packets_total"}) {
      EXPECT_NE(metrics.Find(name), nullptr) << name;
    }
    // The legacy data counter is still there, saturated: the _ext_ family is the one to rate().
    EXPECT_NE(metrics.FindSample("fabcheck_rdma_port_pma_saturated",
                                 {{"device", "mlx5_0"}, {"counter", "port_rcv_data"}}),
              nullptr);
  }
  EXPECT_EQ(ExtCounterMetricName("port_vl_xmit_data_64"), "fabcheck_rdma_port_ext_vl_xmit_data_total");

  // Garbage in counters_ext/ is an error of that source; the rest is exported.
  std::ofstream(dir_ / "sys/class/infiniband/mlx5_0/ports/1/counters_ext/port_rcv_packets_64") << "bogus\n";
  PortReading bad = ReadPort(root, "mlx5_0", 1);
  ASSERT_EQ(bad.errors.size(), 1u);
  EXPECT_EQ(bad.errors[0].source, "counters_ext");
  EXPECT_EQ(bad.errors[0].reason, "garbage");
  EXPECT_EQ(bad.counters_ext.size(), fixtures::CountersExtFiles(spec.nics[0]).size() - 1);
}

TEST_F(FabricTest, GarbageCounterIsAnErrorAndTheOthersSurvive) {
  FabricSpec spec = GpuNode(1);
  spec.nics[0].garbage_counter = "symbol_error";
  sys::SysRoot root = Write(spec);
  PortReading r = ReadPort(root, "mlx5_0", 1);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].reason, "garbage");
  EXPECT_EQ(r.errors[0].source, "counters");
  EXPECT_NE(r.errors[0].message.find("symbol_error"), std::string::npos);
  EXPECT_EQ(r.counters.size(), fixtures::PmaCounterFiles(spec.nics[0]).size() - 1);
}

TEST_F(FabricTest, RxeHasNoCountersDirectory) {
  FabricSpec spec;
  fixtures::NicSpec rxe;
  rxe.device = "rxe0";
  rxe.rxe = true;
  rxe.link_layer = "Ethernet";
  rxe.rate = "100 Gb/sec (4X EDR)";
  rxe.netdev = "veth0";
  spec.nics.push_back(rxe);
  sys::SysRoot root = Write(spec);
  PortReading r = ReadPort(root, "rxe0", 1);
  EXPECT_FALSE(r.has_counters_dir);
  EXPECT_TRUE(r.errors.empty());
  EXPECT_EQ(r.hw_counters.size(), fixtures::HwCounterFiles(rxe).size());
}

TopologyLabels LabelsFor(const FabricSpec& spec) {
  TopologyLabels labels;
  for (size_t i = 0; i < spec.nics.size(); ++i) {
    DeviceLabels& d = labels.devices[spec.nics[i].device];
    d.device = spec.nics[i].device;
    d.pci_address = "0000:18:00.0";
    d.port_netdev[1] = spec.nics[i].netdev;
    d.fw_ver = "28.39.1002";
    d.pci_link.current_speed_gts = 16.0;
    d.pci_link.max_speed_gts = 32.0;
    d.gpus.push_back({0, "0000:19:00.0", "", "PIX", true});
  }
  return labels;
}

TEST_F(FabricTest, CollectorExportsEveryCounterWithLabels) {
  FabricSpec spec = GpuNode(2, /*roce=*/true);
  sys::SysRoot root = Write(spec);
  TopologyLabels labels = LabelsFor(spec);
  MetricSet metrics;
  CollectContext context{"node-a", &labels, nullptr, nullptr};
  CollectResult result = CollectFabric(root, context, metrics);
  EXPECT_TRUE(result.errors.empty());
  const Labels port = {{"node", "node-a"}, {"device", "mlx5_1"}, {"port", "1"}, {"netdev", "ens2f0np0"}};
  const Sample* data = metrics.FindSample("fabcheck_rdma_port_rcv_data_bytes_total", port);
  ASSERT_NE(data, nullptr);
  EXPECT_DOUBLE_EQ(data->value, 4.0 * static_cast<double>(fixtures::CounterValue(spec.nics[1], "port_rcv_data")));
  const Sample* cnp = metrics.FindSample("fabcheck_rdma_hw_rp_cnp_ignored_total", port);
  ASSERT_NE(cnp, nullptr);
  EXPECT_DOUBLE_EQ(cnp->value, static_cast<double>(fixtures::CounterValue(spec.nics[1], "rp_cnp_ignored")));
  EXPECT_EQ(metrics.FindSample("fabcheck_rdma_port_up", port)->value, 1);
  EXPECT_EQ(metrics.FindSample("fabcheck_netdev_mtu_bytes", port)->value, 9000);
  EXPECT_EQ(metrics.FindSample("fabcheck_netdev_carrier", port)->value, 1);
  EXPECT_NE(metrics.FindSample("fabcheck_rdma_port_info", {{"link_layer", "Ethernet"}, {"speed", "NDR"}}), nullptr);
  EXPECT_NE(metrics.FindSample("fabcheck_rdma_gpu_affinity_info", {{"path_type", "PIX"}, {"rail", "true"}}), nullptr);
  EXPECT_DOUBLE_EQ(metrics.FindSample("fabcheck_rdma_device_pcie_link_speed_transfers_per_second",
                                      {{"device", "mlx5_0"}})->value, 16e9);
  EXPECT_EQ(metrics.FindSample("fabcheck_rdma_devices", {})->value, 2);
}

TEST_F(FabricTest, DownPortReadsAsDown) {
  FabricSpec spec = GpuNode(1);
  spec.nics[0].state = "1: DOWN";
  spec.nics[0].phys_state = "3: Disabled";
  sys::SysRoot root = Write(spec);
  MetricSet metrics;
  CollectFabric(root, {"n", nullptr, nullptr, nullptr}, metrics);
  EXPECT_EQ(metrics.FindSample("fabcheck_rdma_port_up", {{"device", "mlx5_0"}})->value, 0);
  EXPECT_EQ(metrics.FindSample("fabcheck_rdma_port_physical_state_id", {{"device", "mlx5_0"}})->value, 3);
}

TEST_F(FabricTest, VanishedDeviceIsSkippedWithAnError) {
  FabricSpec spec = GpuNode(3);
  sys::SysRoot root = Write(spec);
  // The class link stays, the device behind it is gone: what a hot-unplug in
  // the middle of a scrape looks like.
  fs::path target = fs::canonical(dir_ / "sys/class/infiniband/mlx5_1");
  fs::remove_all(target);
  MetricSet metrics;
  CollectResult result = CollectFabric(root, {"n", nullptr, nullptr, nullptr}, metrics);
  ASSERT_FALSE(result.errors.empty());
  EXPECT_EQ(result.errors[0].reason, "vanished");
  EXPECT_NE(metrics.FindSample("fabcheck_rdma_port_up", {{"device", "mlx5_0"}}), nullptr);
  EXPECT_NE(metrics.FindSample("fabcheck_rdma_port_up", {{"device", "mlx5_2"}}), nullptr);
  EXPECT_EQ(metrics.FindSample("fabcheck_rdma_port_up", {{"device", "mlx5_1"}}), nullptr);
}

TEST_F(FabricTest, KeptHandlesSeeNewValuesGarbageAndVanishedDevices) {
  FabricSpec spec = GpuNode(2);
  sys::SysRoot root = Write(spec);
  FabricCollector collector(root);
  const CollectContext context{"n", nullptr, nullptr, nullptr};
  MetricSet first;
  EXPECT_TRUE(collector.Collect(context, first).errors.empty());
  const Labels mlx5_0 = {{"device", "mlx5_0"}};
  EXPECT_EQ(first.FindSample("fabcheck_rdma_port_symbol_error_total", mlx5_0)->value,
            fixtures::CounterValue(spec.nics[0], "symbol_error"));

  // Between scrapes a counter moves and another file turns to garbage.
  const fs::path counters = dir_ / "sys/class/infiniband/mlx5_0/ports/1/counters";
  std::ofstream(counters / "symbol_error", std::ios::trunc) << "42\n";
  std::ofstream(counters / "port_rcv_errors", std::ios::trunc) << "garbage\n";
  MetricSet second;
  CollectResult result = collector.Collect(context, second);
  EXPECT_EQ(second.FindSample("fabcheck_rdma_port_symbol_error_total", mlx5_0)->value, 42);
  ASSERT_EQ(result.errors.size(), 1u);
  EXPECT_EQ(result.errors[0].reason, "garbage");
  EXPECT_EQ(second.FindSample("fabcheck_rdma_port_rcv_errors_total", mlx5_0), nullptr);

  // Then a whole device goes away: skipped with an error, the other one stays.
  fs::remove_all(fs::canonical(dir_ / "sys/class/infiniband/mlx5_1"));
  MetricSet third;
  result = collector.Collect(context, third);
  EXPECT_NE(third.FindSample("fabcheck_rdma_port_up", mlx5_0), nullptr);
  EXPECT_EQ(third.FindSample("fabcheck_rdma_port_up", {{"device", "mlx5_1"}}), nullptr);
  bool vanished = false;
  for (const auto& e : result.errors) vanished |= e.reason == "vanished";
  EXPECT_TRUE(vanished);
}

TEST_F(FabricTest, ServiceReportsErrorsAndItselfAndSharesConcurrentScrapes) {
  FabricSpec spec = GpuNode(2);
  spec.nics[1].garbage_counter = "port_rcv_errors";
  sys::SysRoot root = Write(spec);
  int loads = 0;
  ExporterOptions options;
  options.node_name = "node-b";
  ExporterService service(
      root, options,
      [&](const sys::SysRoot&) -> Result<model::Inventory> {
        ++loads;
        return model::Inventory{};
      },
      nullptr);
  MetricSet first = service.Collect();
  const Sample* errors = first.FindSample("fabcheck_exporter_read_errors", {{"reason", "garbage"}, {"device", "mlx5_1"}});
  ASSERT_NE(errors, nullptr);
  EXPECT_EQ(errors->value, 1);
  EXPECT_NE(first.FindSample("fabcheck_exporter_scrape_duration_seconds", {{"node", "node-b"}}), nullptr);
  EXPECT_EQ(first.FindSample("fabcheck_exporter_inventory_up", {})->value, 1);
  EXPECT_EQ(loads, 1);  // labels are not re-read every scrape

  std::vector<std::thread> threads;
  std::vector<std::shared_ptr<const ScrapeOutput>> texts(8);
  for (int i = 0; i < 8; ++i) threads.emplace_back([&, i] { texts[i] = service.Scrape(); });
  for (auto& t : threads) t.join();
  for (const auto& text : texts) {
    ASSERT_NE(text, nullptr);
    EXPECT_NE(text->text().find("fabcheck_rdma_port_rcv_data_bytes_total{node=\"node-b\",device=\"mlx5_0\""),
              std::string::npos);
  }
  EXPECT_EQ(loads, 1);
}

TEST_F(FabricTest, SriovGarbageIsAReadErrorNotAFailedScrape) {
  FabricSpec spec = GpuNode(2, /*roce=*/true);
  spec.nics[0].sriov_total_vfs = 4;
  spec.nics[0].vfs = {{true, true, "mlx5_core"}, {false, false, ""}};
  spec.nics[1].sriov_total_vfs = 4;
  sys::SysRoot root = Write(spec);
  auto pf = sys::sriov::ReadPhysicalFunction(root, "0000:18:00.0");
  ASSERT_TRUE(pf.ok()) << pf.status().ToString();
  ASSERT_EQ(pf->vfs.size(), 2u);
  EXPECT_EQ(pf->vfs[0].pci_address, "0000:18:00.2");
  EXPECT_EQ(pf->vfs[0].driver, "mlx5_core");
  EXPECT_EQ(pf->vfs[1].driver, "");  // no driver bound
  EXPECT_EQ(pf->vfs[1].rdma_devices.size(), 0u);
  EXPECT_EQ(sys::sriov::ListPhysicalFunctions(root), (std::vector<std::string>{"0000:18:00.0", "0000:24:00.0"}));
  EXPECT_EQ(sys::sriov::ReadPhysicalFunction(root, "0000:18:00.2").status().code(), StatusCode::kNotFound);

  // Planted: garbage in sriov_numvfs of one PF; the other PF and the totals stay.
  std::ofstream(dir_ / "sys/devices/pci0000:10/0000:10:01.0/0000:18:00.0/sriov_numvfs") << "two\n";
  ExporterOptions options;
  options.node_name = "n";
  ExporterService service(root, options, nullptr, nullptr);
  MetricSet m = service.Collect();
  EXPECT_EQ(m.FindSample("fabcheck_sriov_pf_enabled_vfs", {{"pci_address", "0000:18:00.0"}}), nullptr);
  ASSERT_NE(m.FindSample("fabcheck_sriov_pf_total_vfs", {{"pci_address", "0000:18:00.0"}}), nullptr);
  EXPECT_EQ(m.FindSample("fabcheck_sriov_pf_total_vfs", {{"pci_address", "0000:18:00.0"}})->value, 4);
  EXPECT_EQ(m.FindSample("fabcheck_sriov_pf_enabled_vfs", {{"pci_address", "0000:24:00.0"}})->value, 0);
  const Sample* error = m.FindSample("fabcheck_exporter_read_errors", {{"source", "sriov"}, {"reason", "garbage"}});
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(error->value, 1);
  // Without a kubelet nothing is said about pods.
  EXPECT_EQ(m.Find("fabcheck_k8s_vf_unreclaimed_info"), nullptr);
}

TEST_F(FabricTest, HttpServerServesMetricsAndHealth) {
  sys::SysRoot root = Write(GpuNode(1));
  ExporterService service(root, {}, nullptr, nullptr);
  HttpServer server(service);
  ASSERT_TRUE(server.Start({"127.0.0.1", 0}).ok());
  ASSERT_GT(server.port(), 0);
  // A second server on the same port is a clear error, not a crash.
  HttpServer clash(service);
  Status s = clash.Start({"127.0.0.1", server.port()});
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("--listen"), std::string::npos);
  server.Stop();
}

TEST(ListenAddressTest, Parses) {
  EXPECT_EQ(ParseListenAddress(":9877")->host, "0.0.0.0");
  EXPECT_EQ(ParseListenAddress("127.0.0.1:1")->port, 1);
  EXPECT_EQ(ParseListenAddress("[::1]:9877")->host, "::1");
  EXPECT_FALSE(ParseListenAddress("9877").ok());
  EXPECT_FALSE(ParseListenAddress("host:99999").ok());
}

TEST(EthtoolTest, ParsesEthtoolTextAndExtractsPfc) {
  auto stats = ParseEthtoolText(
      "NIC statistics:\n     rx_packets: 10\n     rx_prio3_pause: 7\n     tx_prio3_pause_duration: 1500\n"
      "     rx_prio3_buf_discard: 2\n     rx_discards_phy: 9\n     tx_pause_storm_warning_events: 1\n",
      "x");
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  PfcStats pfc = ExtractPfcStats(*stats);
  EXPECT_EQ(pfc.priorities[3].values["rx_pause"], 7u);
  EXPECT_EQ(pfc.priorities[3].values["tx_pause_duration"], 1500u);
  EXPECT_EQ(pfc.global["rx_discards_phy"], 9u);
  EXPECT_FALSE(ParseEthtoolText("garbage line\n", "x").ok());
  EXPECT_FALSE(ParseEthtoolText("rx: -1\n", "x").ok());
}

TEST_F(FabricTest, PfcCountersFromARecordedEthtoolDump) {
  FabricSpec spec = GpuNode(1, /*roce=*/true);
  sys::SysRoot root = Write(spec);
  fs::create_directories(dir_ / "fabcheck/ethtool");
  std::ofstream(dir_ / "fabcheck/ethtool/ens1f0np0.txt")
      << "NIC statistics:\n     rx_prio3_pause: 70\n     rx_prio3_pause_duration: 2500000\n"
         "     tx_prio3_pause: 5\n     rx_discards_phy: 3\n";
  TopologyLabels labels = LabelsFor(spec);
  SysrootEthtoolSource ethtool(root);
  MetricSet metrics;
  CollectResult result = CollectFabric(root, {"n", &labels, nullptr, &ethtool}, metrics);
  EXPECT_TRUE(result.errors.empty());
  EXPECT_EQ(metrics.FindSample("fabcheck_netdev_pfc_pause_frames_total", {{"direction", "rx"}, {"priority", "3"}})->value,
            70);
  EXPECT_DOUBLE_EQ(
      metrics.FindSample("fabcheck_netdev_pfc_pause_duration_seconds_total", {{"direction", "rx"}, {"priority", "3"}})
          ->value,
      2.5);
  EXPECT_EQ(metrics.FindSample("fabcheck_netdev_phy_discards_total", {{"direction", "rx"}})->value, 3);
}

TEST(EthtoolTest, LiveReadOfAMissingInterfaceSaysWhy) {
  LiveEthtoolSource source;
  auto stats = source.Read("fcexp-nope0");
  ASSERT_FALSE(stats.ok());
  EXPECT_NE(stats.status().message().find("fcexp-nope0"), std::string::npos);
  EXPECT_EQ(stats.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(stats.status().message().find("host network"), std::string::npos);
}

}  // namespace
}  // namespace fabcheck::telemetry
