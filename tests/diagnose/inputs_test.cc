// The evidence loader (metrics text, counter samples, perf/sweep/coll JSON,
// mixed directories, garbage) and the counter, perf and kv rules over what it read.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "diagnose/engine.h"
#include "diagnose/inputs.h"

#include <nlohmann/json.hpp>

namespace fabcheck::diagnose {
namespace {

namespace fs = std::filesystem;

class Dir {
 public:
  Dir() {
    char name[] = "/tmp/fabcheck-diagnose-XXXXXX";
    path_ = ::mkdtemp(name);
  }
  ~Dir() { fs::remove_all(path_); }
  std::string Write(const std::string& name, const std::string& text) {
    std::string p = path_ + "/" + name;
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// One scrape of the exporter: the port's counters at `t` (ms timestamps on the samples).
std::string Scrape(double t, uint64_t seq, uint64_t ack, uint64_t link_down, uint64_t ecn, uint64_t cnp_sent,
                   uint64_t cnp_handled, uint64_t xmit) {
  auto ms = static_cast<uint64_t>(t * 1000);
  std::string l = "{node=\"gpu-7\",device=\"mlx5_0\",port=\"1\"}";
  return "# HELP fabcheck_rdma_hw_packet_seq_err_total NAK sequence errors\n"
         "# TYPE fabcheck_rdma_hw_packet_seq_err_total counter\n"
         "fabcheck_rdma_hw_packet_seq_err_total" + l + " " + std::to_string(seq) + " " + std::to_string(ms) + "\n" +
         "fabcheck_rdma_hw_local_ack_timeout_err_total" + l + " " + std::to_string(ack) + " " + std::to_string(ms) + "\n" +
         "fabcheck_rdma_port_link_downed_total" + l + " " + std::to_string(link_down) + " " + std::to_string(ms) + "\n" +
         "fabcheck_rdma_hw_np_ecn_marked_roce_packets_total" + l + " " + std::to_string(ecn) + " " + std::to_string(ms) + "\n" +
         "fabcheck_rdma_hw_np_cnp_sent_total" + l + " " + std::to_string(cnp_sent) + " " + std::to_string(ms) + "\n" +
         "fabcheck_rdma_hw_rp_cnp_handled_total" + l + " " + std::to_string(cnp_handled) + " " + std::to_string(ms) + "\n" +
         "fabcheck_rdma_port_xmit_data_bytes_total" + l + " " + std::to_string(xmit) + " " + std::to_string(ms) + "\n" +
         "fabcheck_netdev_pfc_pause_frames_total{node=\"gpu-7\",netdev=\"eth2\",direction=\"rx\",priority=\"3\"} " +
         std::to_string(seq * 100) + " " + std::to_string(ms) + "\n";
}

const model::Diagnosis* One(const model::DiagnoseReport& r, const std::string& rule) {
  for (const auto& d : r.findings) {
    if (d.rule == rule) return &d;
  }
  return nullptr;
}

TEST(Metrics, ParsesExporterNamesBackToCounters) {
  auto readings = ParseMetricsText(Scrape(1.7e9, 5, 1, 0, 9, 0, 0, 100), 0);
  ASSERT_EQ(readings.size(), 8u);
  EXPECT_EQ(readings[0].counter, "packet_seq_err");
  EXPECT_EQ(readings[0].object, "mlx5_0/1");
  EXPECT_EQ(readings[0].member, "gpu-7");
  EXPECT_DOUBLE_EQ(readings[0].time, 1.7e9);
  EXPECT_EQ(readings[2].counter, "link_downed");
  EXPECT_EQ(readings[6].counter, "port_xmit_data");
  EXPECT_EQ(readings[7].counter, "rx_prio3_pause");
  EXPECT_EQ(readings[7].object, "eth2");
  auto ne = ParseMetricsText("node_infiniband_packet_sequence_errors_total{device=\"mlx5_1\",port=\"1\"} 7\n", 5);
  ASSERT_EQ(ne.size(), 1u);
  EXPECT_EQ(ne[0].counter, "packet_seq_err");
  EXPECT_TRUE(ParseMetricsText("garbage {{{ \"\n x{a=\"} nan\n", 0).empty());
}

TEST(Counters, RisingTwiceAlarmsOnceIsInformationResetsAreHandled) {
  Dir d;
  // packet_seq_err rises in 3 intervals; link_downed once; ECN marks without CNPs; a reset of local_ack_timeout_err.
  std::vector<std::string> files = {
      d.Write("m1.txt", Scrape(1.7e9 + 1000, 100, 50, 0, 0, 0, 0, 1000)),
      d.Write("m2.txt", Scrape(1.7e9 + 1060, 400, 60, 1, 5000, 0, 0, 9000)),
      d.Write("m3.txt", Scrape(1.7e9 + 1120, 900, 3, 1, 12000, 0, 0, 19000)),
      d.Write("m4.txt", Scrape(1.7e9 + 1180, 1500, 9, 1, 20000, 0, 0, 29000)),
  };
  auto ev = LoadEvidence({d.path()}, {});
  ASSERT_TRUE(ev.ok());
  auto r = Diagnose(*ev);
  const auto* retrans = One(r, "counters.retransmission");
  ASSERT_NE(retrans, nullptr);
  EXPECT_EQ(retrans->severity, model::Severity::kWarn);
  EXPECT_EQ(retrans->confidence, model::Confidence::kHigh);
  EXPECT_EQ(retrans->object, "gpu-7 mlx5_0/1");
  bool seq = false;
  for (const auto& e : retrans->evidence) {
    seq |= e.find("packet_seq_err: +1400 over 180 s (7.78/s), rising in 3 of 3 intervals") != std::string::npos;
  }
  EXPECT_TRUE(seq) << retrans->evidence.front();
  const auto* link = One(r, "counters.link-errors");
  ASSERT_NE(link, nullptr);
  EXPECT_EQ(link->severity, model::Severity::kInfo);  // rose in one interval only
  EXPECT_NE(link->message.find("not yet persistent"), std::string::npos);
  const auto* reset = One(r, "counters.reset");
  ASSERT_NE(reset, nullptr);
  EXPECT_NE(reset->evidence.front().find("local_ack_timeout_err went down"), std::string::npos);
  const auto* ecn = One(r, "counters.ecn-no-cnp");
  ASSERT_NE(ecn, nullptr);
  EXPECT_EQ(ecn->severity, model::Severity::kWarn);
  EXPECT_NE(ecn->message.find("no CNP was ever sent"), std::string::npos) << ecn->message;
  EXPECT_NE(One(r, "counters.pause"), nullptr);
  EXPECT_EQ(r.exit_code, 1);
}

TEST(Counters, NoCnpUnderTrafficWithoutMarksIsAQuietNote) {
  Dir d;
  std::vector<std::string> files = {d.Write("a.txt", Scrape(0 + 1e9, 0, 0, 0, 0, 0, 0, 1000)),
                                    d.Write("b.txt", Scrape(60 + 1e9, 0, 0, 0, 0, 0, 0, 90000))};
  auto ev = LoadEvidence(files, {});
  ASSERT_TRUE(ev.ok());
  auto r = Diagnose(*ev);
  const auto* ecn = One(r, "counters.ecn-no-cnp");
  ASSERT_NE(ecn, nullptr);
  EXPECT_EQ(ecn->severity, model::Severity::kInfo);
  EXPECT_EQ(One(r, "counters.retransmission"), nullptr);
}

TEST(Counters, LadderCounterSamplesJson) {
  Dir d;
  auto sample = [](double t, uint64_t v) {
    return "{\"member\":\"n1\",\"rung\":\"L3\",\"phase\":\"x\",\"time_unix\":" + std::to_string(t) +
           ",\"values\":{\"mlx5_0/1\":{\"hw_counters/rnr_nak_retry_err\":" + std::to_string(v) + "}}}";
  };
  std::vector<std::string> files = {d.Write("s1.json", sample(100, 0)), d.Write("s2.json", sample(130, 50)),
                                    d.Write("s3.json", sample(160, 90))};
  auto ev = LoadEvidence(files, {});
  ASSERT_TRUE(ev.ok());
  auto r = Diagnose(*ev);
  const auto* retrans = One(r, "counters.retransmission");
  ASSERT_NE(retrans, nullptr);
  EXPECT_EQ(retrans->severity, model::Severity::kWarn);
  EXPECT_NE(retrans->message.find("rnr_nak_retry_err"), std::string::npos);
  EXPECT_NE(retrans->next.find("--device mlx5_0"), std::string::npos) << retrans->next;
}

std::string PerfJson(const std::string& transport, const std::vector<std::pair<uint64_t, double>>& sizes,
                     const std::vector<std::pair<uint64_t, std::string>>& failed) {
  std::string results;
  for (const auto& [bytes, gbps] : sizes) {
    if (!results.empty()) results += ",";
    results += "{\"bytes\":" + std::to_string(bytes) + ",\"iterations\":100,\"bw\":{\"avg_gbps\":" +
               std::to_string(gbps) + ",\"peak_gbps\":0,\"avg_mibps\":0,\"mpps\":0,\"bytes\":0,\"messages\":0,\"elapsed_s\":1}}";
  }
  for (const auto& [bytes, error] : failed) {
    if (!results.empty()) results += ",";
    results += "{\"bytes\":" + std::to_string(bytes) + ",\"iterations\":0,\"error\":\"" + error + "\"}";
  }
  return "{\"schema\":\"fabcheck.perf/v1\",\"server\":\"10.0.0.2:18515\",\"settings\":{\"transport\":\"" + transport +
         "\"},\"client\":{\"role\":\"client\",\"host\":\"10.0.0.1\",\"device\":\"mlx5_0\",\"mtu\":9000},"
         "\"server_endpoint\":{\"role\":\"server\",\"host\":\"10.0.0.2\"},\"results\":[" + results + "]}";
}

TEST(Perf, TcpPlateauHalfRateAndLargeMessages) {
  Dir d;
  std::string tcp = d.Write("tcp.json", PerfJson("tcp", {{65536, 18.5}, {1 << 20, 21.0}}, {}));
  std::string half = d.Write("half.json", PerfJson("verbs", {{1 << 20, 196.0}}, {}));
  std::string large = d.Write("large.json", PerfJson("verbs", {{4096, 80.0}, {8192, 120.0}},
                                                     {{1 << 20, "timed out after 30 s waiting for completions"}}));
  auto ev = LoadEvidence({tcp, half, large}, {.line_gbps = 400});
  ASSERT_TRUE(ev.ok());
  for (const auto& in : ev->inputs) EXPECT_EQ(in.status, "read") << in.path << ": " << in.status;
  auto r = Diagnose(*ev);
  const auto* plateau = One(r, "perf.tcp-plateau");
  ASSERT_NE(plateau, nullptr);
  EXPECT_EQ(plateau->severity, model::Severity::kFail);
  EXPECT_NE(plateau->message.find("21.0 Gb/s"), std::string::npos) << plateau->message;
  EXPECT_NE(plateau->next.find("--transport verbs"), std::string::npos);
  const auto* h = One(r, "perf.half-rate");
  ASSERT_NE(h, nullptr);
  EXPECT_NE(h->message.find("49%"), std::string::npos) << h->message;
  EXPECT_TRUE(std::any_of(h->causes.begin(), h->causes.end(), [](const auto& c) { return c.find("x8") != std::string::npos; }));
  const auto* l = One(r, "perf.large-messages");
  ASSERT_NE(l, nullptr);
  EXPECT_NE(l->message.find("worked up to 8192 B"), std::string::npos) << l->message;
  EXPECT_NE(l->next.find("ping -M do -s 8972 10.0.0.2"), std::string::npos) << l->next;
}

TEST(Perf, SweepPathMtuHole) {
  Dir d;
  std::string sweep = d.Write(
      "sweep.json",
      R"({"schema":"fabcheck.sweep/v1","members":[{"name":"a","data_addresses":["10.1.0.1"]},{"name":"b","data_addresses":["10.1.0.2"]}],)"
      R"("pairs":[{"a":0,"b":1,"rail":0,"bw_gbps":95.0,"path_mtu":1500,"local_mtu":9000,"transport":"tcp"}]})");
  auto ev = LoadEvidence({sweep}, {});
  ASSERT_TRUE(ev.ok());
  auto r = Diagnose(*ev);
  const auto* l = One(r, "perf.large-messages");
  ASSERT_NE(l, nullptr);
  EXPECT_NE(l->message.find("frames above 1500 bytes do not get from a to b"), std::string::npos) << l->message;
}

TEST(Counters, SnapshotTreesOverTime) {
  Dir d;
  std::vector<std::string> roots;
  const uint64_t values[] = {10, 40, 90};
  for (int i = 0; i < 3; ++i) {
    std::string root = d.path() + "/snap" + std::to_string(i);
    fs::create_directories(root + "/sys/class/infiniband/mlx5_2/ports/1/hw_counters");
    fs::create_directories(root + "/sys/class/infiniband/mlx5_2/ports/1/counters");
    fs::create_directories(root + "/fabcheck");
    std::ofstream(root + "/sys/class/infiniband/mlx5_2/ports/1/hw_counters/out_of_sequence") << values[i] << "\n";
    std::ofstream(root + "/sys/class/infiniband/mlx5_2/ports/1/counters/symbol_error") << "0\n";
    std::ofstream(root + "/fabcheck/capture.json")
        << "{\"hostname\":\"gpu-3\",\"taken_at\":\"2026-12-01T10:0" << i << ":00Z\"}";
    roots.push_back(root);
  }
  auto ev = LoadEvidence(roots, {});
  ASSERT_TRUE(ev.ok());
  for (const auto& in : ev->inputs) EXPECT_EQ(in.status, "read") << in.path;
  auto r = Diagnose(*ev);
  const auto* retrans = One(r, "counters.retransmission");
  ASSERT_NE(retrans, nullptr);
  EXPECT_EQ(retrans->object, "gpu-3 mlx5_2/1");
  EXPECT_NE(retrans->evidence.front().find("+80 over 120 s"), std::string::npos) << retrans->evidence.front();
  EXPECT_EQ(retrans->severity, model::Severity::kWarn);
}

TEST(Coll, ARealReportsSizesAndBusbwAreRead) {
  // `fabcheck coll --json` on one H200: three collectives, 1 MiB .. 1 GiB.
  auto ev = LoadEvidence({std::string(FABCHECK_TESTDATA_DIR) + "/coll/h200-1gpu-2.28.3.json"}, {});
  ASSERT_TRUE(ev.ok()) << ev.status().message();
  ASSERT_EQ(ev->colls.size(), 3u);
  for (const auto& c : ev->colls) {
    EXPECT_EQ(c.bytes, 1ull << 30) << c.op;
    ASSERT_EQ(c.sizes.size(), 11u) << c.op;
    EXPECT_EQ(c.sizes.front().first, 1u << 20) << c.op;
    EXPECT_EQ(c.nodes, 1) << c.op;
  }
}

TEST(Inputs, MixedGarbageAndUnreadableInputsAreReportedNotFatal) {
  Dir d;
  std::string bad_json = d.Write("bad.json", "{\"schema\": ");
  std::string other = d.Write("other.json", "{\"schema\":\"fabcheck.k8s/v1\"}");
  std::string binary;
  for (int i = 0; i < 100000; ++i) binary.push_back(static_cast<char>(i * 31 % 256));
  std::string bin = d.Write("core.log", binary);
  auto ev = LoadEvidence({bad_json, other, bin, "/nonexistent/x.log"}, {});
  ASSERT_TRUE(ev.ok());
  ASSERT_EQ(ev->inputs.size(), 4u);
  EXPECT_NE(ev->inputs[0].status.find("not valid JSON"), std::string::npos);
  EXPECT_NE(ev->inputs[1].status.find("not evidence"), std::string::npos);
  EXPECT_EQ(ev->inputs[2].status, "read");
  EXPECT_NE(ev->inputs[3].status.find("/nonexistent/x.log"), std::string::npos);
  auto r = Diagnose(*ev);
  const auto* binary_finding = One(r, "input.binary");
  ASSERT_NE(binary_finding, nullptr);
  EXPECT_EQ(binary_finding->severity, model::Severity::kUnknown);
  EXPECT_FALSE(LoadEvidence({}, {}).ok());
}

}  // namespace
}  // namespace fabcheck::diagnose

namespace fabcheck::diagnose {
namespace {

// A kv result as `fabcheck kv run --json` writes it: below its L3 figure with
// an MTU mismatch between the ends.
std::string KvJson(double ratio, bool mismatch) {
  nlohmann::json j = {
      {"schema", "fabcheck.kv/v1"},
      {"server", "10.0.0.2:18520"},
      {"transport", "tcp"},
      {"inflight", 2},
      {"sizing", {{"model", {{"name", "Llama-3-70B"}, {"attention", "gqa"}, {"layers", 80}}},
                  {"page_tokens", 16}, {"tokens", 8192}, {"page_bytes", 65536}}},
      {"l3", {{"op", "send"}, {"size", 65536}, {"streams", 2}, {"gbytes_per_s", 2.0}, {"gbps", 16.0}}},
      {"kv", {{"requests", 10}, {"gbytes_per_s", 2.0 * ratio}, {"request", {{"p99_ms", 900.0}}}}},
      {"ratio_to_l3", ratio},
      {"goal_ratio", 0.7},
      {"client", {{"host", "10.0.0.1"}, {"device", "eth1"}, {"mtu", 9000}}},
      {"server_endpoint", {{"host", "10.0.0.2"}, {"device", "eth1"}, {"mtu", mismatch ? 1500 : 9000}}},
      {"findings", nlohmann::json::array()}};
  if (mismatch) {
    j["findings"].push_back({{"id", "kv.mtu-mismatch"},
                             {"severity", "fail"},
                             {"group", "L2"},
                             {"object", "10.0.0.1 (eth1) -> 10.0.0.2 (eth1)"},
                             {"message", "the two ends disagree on the active MTU: 9000 here, 1500 on the decode side"},
                             {"evidence", {"prefill 10.0.0.1 the active MTU: 9000"}},
                             {"remedy", "set the same MTU on both ends"}});
  }
  return j.dump();
}

TEST(Kv, ShortfallNamesTheRungAndMismatchIsReported) {
  Dir d;
  std::string below = d.Write("kv.json", KvJson(0.4, /*mismatch=*/true));
  auto ev = LoadEvidence({below}, {});
  ASSERT_TRUE(ev.ok());
  ASSERT_EQ(ev->inputs.size(), 1u);
  EXPECT_EQ(ev->inputs[0].kind, "kv");
  EXPECT_EQ(ev->inputs[0].status, "read");
  ASSERT_EQ(ev->pairs.size(), 1u);  // its L3 figure, for the perf rules
  EXPECT_DOUBLE_EQ(ev->pairs[0].bw_gbps, 16.0);
  auto r = Diagnose(*ev);
  const auto* k = One(r, "kv.below-l3");
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->severity, model::Severity::kWarn);
  EXPECT_NE(k->message.find("0.40x"), std::string::npos) << k->message;
  EXPECT_NE(k->next.find("rung L2"), std::string::npos) << k->next;
  const auto* m = One(r, "kv.ends-mismatch");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->severity, model::Severity::kFail);
  EXPECT_NE(m->message.find("1500"), std::string::npos);
}

TEST(Kv, AtTheGoalNothingIsSaid) {
  Dir d;
  auto ev = LoadEvidence({d.Write("kv.json", KvJson(0.95, /*mismatch=*/false))}, {});
  ASSERT_TRUE(ev.ok());
  auto r = Diagnose(*ev);
  EXPECT_EQ(One(r, "kv.below-l3"), nullptr);
  EXPECT_EQ(One(r, "kv.ends-mismatch"), nullptr);
}

}  // namespace
}  // namespace fabcheck::diagnose

namespace fabcheck::diagnose {
namespace {

TEST(Kv, FanResultsAreReadTransferByTransfer) {
  Dir d;
  nlohmann::json fan = {{"schema", "fabcheck.kv-fan/v1"},
                        {"mode", "fan-in"},
                        {"hub", "decode1"},
                        {"members",
                         {{{"prefill", "p1"}, {"decode", "decode1"}, {"result", nlohmann::json::parse(KvJson(0.4, false))}},
                          {{"prefill", "p2"}, {"decode", "decode1"}, {"error", "agent p2: unreachable"}},
                          {{"prefill", "p3"}, {"decode", "decode1"}, {"result", nlohmann::json::parse(KvJson(0.9, false))}}}}};
  auto ev = LoadEvidence({d.Write("fan.json", fan.dump())}, {});
  ASSERT_TRUE(ev.ok()) << ev.status().ToString();
  ASSERT_EQ(ev->kvs.size(), 2u) << "the two transfers that have a result";
  EXPECT_NE(ev->inputs[0].path.find("(transfer 1)"), std::string::npos) << ev->inputs[0].path;
  auto r = Diagnose(*ev);
  ASSERT_NE(One(r, "kv.below-l3"), nullptr) << "the short transfer is named";
}

}  // namespace
}  // namespace fabcheck::diagnose

namespace fabcheck::diagnose {
namespace {

// A log whose first line starts with '[' (mpirun --tag-output) was sniffed as
// JSON and skipped ("not valid JSON"); it is a log, read like `diagnose -`.
TEST(Inputs, BracketPrefixedLogIsReadAsALog) {
  std::string path = std::string(FABCHECK_TESTDATA_DIR) + "/nccl-logs/nccl-2.23-socket-fallback.log";
  auto ev = LoadEvidence({path}, {});
  ASSERT_TRUE(ev.ok());
  ASSERT_EQ(ev->inputs.size(), 1u);
  EXPECT_EQ(ev->inputs[0].kind, "log");
  EXPECT_EQ(ev->inputs[0].status, "read");
  ASSERT_TRUE(ev->nccl.has_value());
  EXPECT_GT(ev->nccl->nccl_lines, 0);
  EXPECT_FALSE(ev->nccl->connections.empty());
}

// A directory of job logs in every prefix style users paste: each is read as a log.
TEST(Inputs, EveryPrefixStyleInADirectoryIsReadAsALog) {
  Dir d;
  const std::string line = "node-a:4242:4242 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n";
  const std::pair<const char*, std::string> files[] = {
      {"torchrun.log", "[default0]:" + line},
      {"mpirun.log", "[1,0]<stdout>:" + line},
      {"srun.log", "0: " + line},
      {"kubectl.log", "[pod/trainer-0/pytorch] " + line},
      {"ray.log", "(RayTrainWorker pid=123, ip=10.0.0.5) " + line},
      {"stamped.log", "[2026-11-02 09:14:03] " + line},
      {"nccl25.log", " [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\n"},
  };
  for (const auto& [name, text] : files) d.Write(name, text);
  auto ev = LoadEvidence({d.path()}, {});
  ASSERT_TRUE(ev.ok());
  ASSERT_EQ(ev->inputs.size(), std::size(files));
  for (const auto& in : ev->inputs) {
    EXPECT_EQ(in.kind, "log") << in.path;
    EXPECT_EQ(in.status, "read") << in.path;
  }
  ASSERT_TRUE(ev->nccl.has_value());
  EXPECT_EQ(ev->nccl->nccl_lines, static_cast<int>(std::size(files)));
}

}  // namespace
}  // namespace fabcheck::diagnose
