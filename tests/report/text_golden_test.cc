// Every command's human output, rendered from model values through the shared
// table writer, against checked-in text (tests/data/report/text/): the layout
// users compare with perftest and nccl-tests must not move by a byte.
// Inputs: the inventory goldens, doctor JSON of the bundled captures, the real
// NCCL logs of tests/data/nccl-logs, the example ladder bundles, and constructed
// perf/sweep/coll values.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>

#include "../sweep/synthetic.h"
#include "diagnose/engine.h"
#include "golden.h"
#include "logs/nccl_log.h"
#include "report/coll_text.h"
#include "report/doctor_text.h"
#include "report/inventory_text.h"
#include "report/ladder_text.h"
#include "report/nccl_log_text.h"
#include "report/perf_table.h"
#include "report/sweep_text.h"
#include "report/table.h"

namespace fabcheck::report {
namespace {

using testing::CheckGolden;
using testing::ReadTestData;

TEST(TextTable, PadsAlignsCutsAndEndsShortRows) {
  TextTable t({{"A", 4}, {"B", 5, Align::kRight}, {"C", 0, Align::kLeft, 4}}, {.indent = "> "});
  EXPECT_EQ(t.Header(), "> A        B C\n");
  EXPECT_EQ(t.Row({"x", "12", "abcdef"}), "> x       12 abc~\n");
  EXPECT_EQ(t.Row({"x", "FAILED: y"}), "> x    FAILED: y\n");  // a short row ends at its last cell
  EXPECT_EQ(t.Row({"toolong", "1", ""}), "> toolong     1 \n");  // never cut without max
  TextTable gaps({{"", 2}, {"", 3, Align::kLeft, 0, " | "}});
  EXPECT_EQ(gaps.Row({"a", "b"}), "a  | b  \n");
  EXPECT_EQ(Pad("µs", 4), "µs  ");  // pads by characters, as fmt does
  EXPECT_EQ(Cut("abc", 0), "");
}

TEST(TextGolden, Inventory) {
  for (const std::string name : {"dgx-h100", "roce", "broken", "capture-dgx-h100-example", "capture-h200-1gpu"}) {
    std::string error;
    auto inv = model::ParseInventoryJson(ReadTestData("golden/" + name + ".json"), &error);
    ASSERT_TRUE(inv) << name << ": " << error;
    inv->source = "golden " + name;
    InventoryTextOptions with_matrix;
    with_matrix.matrix = true;
    EXPECT_EQ(CheckGolden("text/inventory-" + name + ".txt", RenderInventory(*inv, with_matrix)), "");
  }
  std::string error;
  auto inv = model::ParseInventoryJson(ReadTestData("golden/dgx-h100.json"), &error);
  ASSERT_TRUE(inv) << error;
  InventoryTextOptions options;
  options.display_path = [](const std::string& p) { return "capture:" + p; };
  inv->warnings.push_back({"/sys/class/infiniband/mlx5_0/ports/1/rate", "unparsable rate 'garbage'"});
  EXPECT_EQ(CheckGolden("text/inventory-dgx-h100-nomatrix.txt", RenderInventory(*inv, options)), "");
}

TEST(TextGolden, Doctor) {
  for (const std::string name : {"capture-dgx-h100-example", "capture-h200-1gpu"}) {
    std::string error;
    auto report = model::ParseDoctorJson(ReadTestData("report/text/doctor-" + name + ".json"), &error);
    ASSERT_TRUE(report) << name << ": " << error;
    EXPECT_EQ(CheckGolden("text/doctor-" + name + ".txt", RenderDoctorText(*report, false)), "");
    EXPECT_EQ(CheckGolden("text/doctor-" + name + "-verbose.txt", RenderDoctorText(*report, true)), "");
  }
}

model::PerfEndpoint Endpoint(const std::string& role, bool verbs) {
  model::PerfEndpoint e;
  e.role = role;
  e.host = role == "client" ? "10.0.1.11" : "10.0.1.12";
  e.fabcheck_version = "0.1.0";
  e.device = verbs ? "mlx5_0" : "ens1np0";
  e.port = verbs ? 1 : 0;
  if (verbs) {
    e.gid_index = 3;
    e.gid_type = "RoCE v2";
    e.gid = "0000:0000:0000:0000:0000:ffff:0a00:010b";
  }
  e.mtu = verbs ? 4096 : 9000;
  e.memory = role == "client" ? "cuda:0" : "host";
  e.registration = role == "client" ? "dmabuf" : "host";
  e.gpudirect = role == "client";
  if (role == "client") e.numa_node = 0;
  e.cpu.percent = 12.6;
  if (role == "server") e.notes.push_back("numa: NIC node unknown, not pinned");
  return e;
}

model::PerfResult BwResult(bool verbs, bool bidir) {
  model::PerfResult r;
  r.protocol_version = 3;
  r.server = "10.0.1.12:18515";
  r.settings.transport = verbs ? "verbs" : "tcp";
  r.settings.test = model::PerfTest::kBw;
  r.settings.op = model::PerfOp::kWrite;
  r.settings.bidir = bidir;
  r.settings.iters = 5000;
  r.settings.warmup = 100;
  r.settings.streams = verbs ? 2 : 4;
  r.settings.tx_depth = 128;
  r.client = Endpoint("client", verbs);
  r.server_side = Endpoint("server", verbs);
  for (uint64_t bytes : {65536ull, 1048576ull, 8388608ull}) {
    model::PerfSizeResult s;
    s.bytes = bytes;
    s.iterations = 5000;
    double gbps = bytes == 65536 ? 301.27 : 391.4;
    s.bw = model::MakeBwFigures(bytes * 5000, 5000, bytes * 5000 * 8 / gbps / 1e9, gbps * 1.01);
    if (bidir) {
      s.bw_tx = model::MakeBwFigures(bytes * 2500, 2500, bytes * 5000 * 8 / gbps / 1e9);
      s.bw_rx = s.bw_tx;
    }
    r.results.push_back(s);
  }
  model::PerfSizeResult failed;
  failed.bytes = 16777216;
  failed.iterations = 12;
  failed.error = "peer closed the connection during the measured phase";
  r.results.push_back(failed);
  r.results[1].error = "3 buffers failed validation";
  r.error = "size 16777216: peer closed the connection";
  return r;
}

model::PerfResult LatResult() {
  model::PerfResult r = BwResult(true, false);
  r.settings.test = model::PerfTest::kLat;
  r.settings.iters = 0;
  r.settings.duration_s = 2;
  r.results.clear();
  r.error.clear();
  for (uint64_t bytes : {2ull, 4096ull}) {
    model::PerfSizeResult s;
    s.bytes = bytes;
    s.iterations = 100000;
    std::vector<double> rtt;
    for (int i = 0; i < 1000; ++i) rtt.push_back(3.2 + 0.001 * (i % 97) + (bytes > 2 ? 0.6 : 0) + (i == 500 ? 40 : 0));
    s.lat = model::MakeLatencyFigures(rtt, true);
    r.results.push_back(s);
  }
  model::PerfSizeResult none;
  none.bytes = 65536;
  r.results.push_back(none);
  return r;
}

TEST(TextGolden, Perf) {
  EXPECT_EQ(CheckGolden("text/perf-verbs-bw.txt", FormatPerfTable(BwResult(true, false))), "");
  EXPECT_EQ(CheckGolden("text/perf-verbs-bw-bidir-mibps.txt", FormatPerfTable(BwResult(true, true), {.mibps = true})),
            "");
  EXPECT_EQ(CheckGolden("text/perf-tcp-bw.txt", FormatPerfTable(BwResult(false, false))), "");
  EXPECT_EQ(CheckGolden("text/perf-verbs-lat.txt", FormatPerfTable(LatResult())), "");
}

model::SweepResult Sweep(int n, int rails) {
  model::SweepResult r;
  r.pattern = "pairwise";
  r.rails = rails;
  r.rounds_planned = n - 1;
  r.rounds_completed = n - 2;
  r.elapsed_s = 74.2;
  r.transport = "tcp";
  for (int i = 0; i < n; ++i) {
    model::SweepMember m;
    m.index = i;
    m.name = i == 3 ? "" : "node-" + std::string(i < 10 ? "0" : "") + std::to_string(i);
    m.reachable = i != n - 1;
    r.members.push_back(m);
  }
  for (int rail = 0; rail < rails; ++rail) {
    sweep::synth::Synthetic s;
    s.n = n;
    s.seed = 7 + static_cast<uint64_t>(rail);
    s.slow_nodes = {2};
    s.slow_links = {{0, 4}};
    s.mtu_nodes = {5 % n};
    auto m = sweep::synth::MakeSynthetic(s);
    m.rail = rail;
    m.bw_gbps.set(1, 4, std::nan(""));
    r.matrices.push_back(m);
    r.verdict.stats.push_back({rail, static_cast<size_t>(n * (n - 1)), 9.4, 0.12, 12.1, 0.3, 9000});
  }
  r.verdict.severity = model::Severity::kFail;
  r.verdict.summary = "node-02 is slow; node-00 <-> node-04 is a slow link";
  model::Finding f;
  f.id = "sweep.slow-node";
  f.severity = model::Severity::kFail;
  f.object = "node-02 rail 0";
  f.message = "sends at 0.19 Gb/s, 2% of the cluster median 9.4 Gb/s";
  f.evidence = {"upper quartile of its 6 peers: 0.19 Gb/s", "robust z -77"};
  f.remedy = "check the node's NIC, cable and switch port";
  r.verdict.findings.push_back(f);
  return r;
}

TEST(TextGolden, Sweep) {
  EXPECT_EQ(CheckGolden("text/sweep-8x2.txt", RenderSweepText(Sweep(8, 2))), "");
  EXPECT_EQ(CheckGolden("text/sweep-20.txt", RenderSweepText(Sweep(20, 1))), "");
  EXPECT_EQ(CheckGolden("text/sweep-20-large.txt", RenderSweepText(Sweep(20, 1), {.numeric_up_to = 4, .heatmap_up_to = 10})),
            "");
  EXPECT_EQ(SweepProgressLine(3, 7, 12.1, 16, 1), "sweep: round 3 of 7, elapsed 12.10 s, ETA 16.00 s, 1 unreachable");
}

TEST(TextGolden, NcclLogs) {
  for (const std::string name : {"nccl-2.18-ib-gdr", "nccl-2.23-socket-fallback", "nccl-2.28-gdr-disabled",
                                 "h200-2.28.3-single-process", "truncated"}) {
    logs::NcclLogParser parser;
    parser.AddText(ReadTestData("nccl-logs/" + name + ".log"), name + ".log");
    // As `fabcheck nccl-log` prints it: the summary, then diagnose's verdicts.
    model::NcclLogSummary summary = parser.Finish();
    summary.findings = diagnose::NcclLogFindings(summary);
    EXPECT_EQ(CheckGolden("text/nccl-log-" + name + ".txt",
                          FormatNcclLogSummary(summary) + FormatNcclFindings(summary.findings)),
              "");
  }
}

model::CollReport Coll() {
  model::CollReport r;
  r.fabcheck_version = "0.1.0";
  r.nccl_version = "2.28.3";
  r.nccl_library = "/usr/lib/x86_64-linux-gnu/libnccl.so.2";
  r.cuda_runtime_version = "13.0";
  r.mode = "process-per-gpu";
  r.nranks = 2;
  r.args = {{"iters", "20"}, {"warmup", "5"}, {"check", "1"}, {"dtype", "float"}, {"redop", "sum"}};
  r.ranks = {{0, "h200-a", 0, "0000:18:00.0", "NVIDIA H200"}, {1, "h200-a", 1, "0000:2a:00.0", "NVIDIA H200"}};
  for (const std::string op : {"all_reduce", "alltoall"}) {
    model::CollOpResult o;
    o.op = op;
    for (uint64_t size : {8ull, 1048576ull, 1073741824ull, 8589934592ull}) {
      model::CollRow row;
      row.size_bytes = size;
      row.count = size / 4;
      row.type = "float";
      row.redop = op == "all_reduce" ? "sum" : "none";
      double t = 8.2 + static_cast<double>(size) / 173.14e3;
      row.out_of_place = {t, static_cast<double>(size) / t / 1e3, static_cast<double>(size) / t / 1e3, 0};
      row.in_place = {t * 1.01, static_cast<double>(size) / t / 1.01e3, static_cast<double>(size) / t / 1.01e3,
                      op == "alltoall" ? std::optional<int64_t>() : std::optional<int64_t>(0)};
      o.rows.push_back(row);
    }
    o.avg_busbw_gbps = 91.2345;
    r.results.push_back(o);
  }
  r.results[1].wrong = 3;
  r.average_bus_bandwidth_gbps = 90.1;
  r.expected = {346.6, "NVLink (NV18, 18 links x 26.6 GB/s)"};
  model::Finding f;
  f.id = "coll.busbw";
  f.severity = model::Severity::kWarn;
  f.message = "all_reduce busbw 173 GB/s is 50% of NCCL's ring estimate";
  f.evidence = {"Pattern 4, nChannels 16, bw 21.7/21.7, type NVL/PIX"};
  f.remedy = "check NVLink with nvidia-smi nvlink -s";
  r.findings.push_back(f);
  r.nccl_log_file = "/tmp/fabcheck-nccl";
  return r;
}

TEST(TextGolden, Coll) {
  model::CollReport r = Coll();
  EXPECT_EQ(CheckGolden("text/coll-no-log.txt", FormatCollReport(r)), "");
  logs::NcclLogParser parser;
  parser.AddText(ReadTestData("nccl-logs/h200-2.28.3-process-per-gpu.rank0.log"), "rank0.log");
  parser.AddText(ReadTestData("nccl-logs/h200-2.28.3-process-per-gpu.rank1.log"), "rank1.log");
  r.nccl_log = parser.Finish();
  // As `fabcheck coll` adds them: the log's verdicts, also among the report's findings.
  r.nccl_log->findings = diagnose::NcclLogFindings(*r.nccl_log);
  for (const auto& f : r.nccl_log->findings) r.findings.push_back(f);
  EXPECT_EQ(CheckGolden("text/coll-with-log.txt", FormatCollReport(r)), "");
}

// nccl-tests' own strings (src/util.cu, all_reduce_perf 2.19 output).
TEST(TextGolden, NcclTestsFields) {
  EXPECT_EQ(FormatFloatField(12.345, 6), " 12.35");
  EXPECT_EQ(FormatFloatField(346.61, 6), "346.61");
  EXPECT_EQ(FormatFloatField(1234.5, 6), "1234.5");
  EXPECT_EQ(FormatFloatField(123456.7, 6), "123457");
  EXPECT_EQ(FormatFloatField(49612.3, 7), "49612.3");
  EXPECT_EQ(FormatFloatField(0, 6), "  0.00");
  model::CollRow row;
  row.size_bytes = 8589934592;
  row.count = 2147483648;
  row.type = "float";
  row.redop = "sum";
  row.root = -1;
  row.out_of_place = {49612.3, 173.14, 173.14, 0};
  row.in_place = {49500.0, 173.54, 173.54, std::nullopt};
  EXPECT_EQ(FormatCollRow(row),
            "  8589934592    2147483648     float     sum      -1  49612.3  173.14  173.14       0  49500.0  173.54  "
            "173.54    N/A\n");
  EXPECT_EQ(FormatCollFooter(0, 173.34), "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 173.34 \n#\n");
  EXPECT_NE(FormatCollTableHeader().find("#       size         count      type   redop    root     time   algbw   busbw "
                                         " #wrong     time   algbw   busbw  #wrong"),
            std::string::npos)
      << FormatCollTableHeader();
}

TEST(TextGolden, GpuCopy) {
  model::GpuCopyReport r;
  r.cuda_runtime_version = "13.0";
  r.cuda_driver_version = 13000;
  model::GpuInfo g;
  g.index = 0;
  g.name = "NVIDIA H200";
  g.pci_bus_id = "0000:00:06.0";
  g.numa_node = 0;
  g.pcie_gts = 16;
  g.pcie_width = 16;
  g.pcie_max_gts = 32;
  g.pcie_max_width = 16;
  r.gpus.push_back(g);
  g.index = 1;
  g.pcie_gts = 0;
  r.gpus.push_back(g);
  for (const std::string kind : {"h2d", "d2h", "d2d", "p2p"}) {
    model::GpuCopyMeasurement m;
    m.kind = kind;
    m.gpu = 0;
    m.peer_gpu = kind == "p2p" ? 1 : -1;
    m.numa_node = 0;
    m.numa_local = kind != "d2h";
    m.bytes = 268435456;
    m.iterations = 10;
    m.gbps = kind == "d2d" ? 3702.5 : 25.61;
    m.expected_gbps = kind == "d2d" ? 0 : 31.5;
    m.link = kind == "d2d" ? "HBM" : "PCIe Gen4 x16";
    r.measurements.push_back(m);
  }
  model::Finding f;
  f.id = "gpu.pcie.downgraded";
  f.severity = model::Severity::kWarn;
  f.object = "GPU 0";
  f.message = "the PCIe link runs at PCIe Gen4 x16 but can do PCIe Gen5 x16";
  f.remedy = "reseat the GPU";
  r.findings.push_back(f);
  EXPECT_EQ(CheckGolden("text/gpu-copy.txt", FormatGpuCopyReport(r)), "");
}

// The ladder's verdict over the example cluster's manifests (planted faults:
// failures with evidence and fix, warnings, dropped members).
TEST(TextGolden, LadderVerdict) {
  for (const std::string name : {"example-8", "example-8-baseline"}) {
    auto manifest = nlohmann::json::parse(ReadTestData("bundles/" + name + "/manifest.json")).get<model::LadderManifest>();
    EXPECT_EQ(CheckGolden("text/ladder-" + name + ".txt", RenderLadderVerdict(manifest, "")), "");
    EXPECT_EQ(CheckGolden("text/ladder-" + name + "-bundle.txt", RenderLadderVerdict(manifest, "/tmp/" + name)), "");
  }
  EXPECT_EQ(LadderProgressLine("L1L2.cluster", 2, 4, 6, 3, 6, 4.12, 3.4),
            "[2/4 L1L2.cluster] 6 members, 3/6 done, 4.1 s elapsed, ETA 3 s");
  EXPECT_EQ(LadderProgressLine("L0.reach", 1, 4, 1, 0, 0, 0.04, -1), "[1/4 L0.reach] 1 member, 0.0 s elapsed");
}

}  // namespace
}  // namespace fabcheck::report
