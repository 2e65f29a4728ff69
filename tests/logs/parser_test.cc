// The parser on NCCL 2.5 to 2.28 formats, on logs as users paste them, on
// real logs from public bug reports (tests/data/nccl-logs/real/, each with
// its source) and on hostile input.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>

#include "logs/nccl_log.h"
#include "../sanitizer_allowance.h"

namespace fabcheck::logs {
namespace {

std::string Real(const std::string& name) { return std::string(FABCHECK_TESTDATA_DIR) + "/nccl-logs/real/" + name; }

model::NcclLogSummary ParseText(const std::string& text) {
  NcclLogParser p;
  p.AddText(text, "t.log");
  return p.Finish();
}

model::NcclLogSummary ParseReal(const std::string& name) {
  auto s = ParseNcclLogFiles({Real(name)});
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? *s : model::NcclLogSummary{};
}

std::vector<const model::NcclEvent*> Events(const model::NcclLogSummary& s, const std::string& kind) {
  std::vector<const model::NcclEvent*> out;
  for (const auto& e : s.events) {
    if (e.kind == kind) out.push_back(&e);
  }
  return out;
}

std::string F(const model::NcclEvent* e, const std::string& k) {
  auto it = e->fields.find(k);
  return it == e->fields.end() ? "" : it->second;
}

TEST(NcclVersionCode, EveryPrintedFormat) {
  EXPECT_EQ(NcclVersionCode("2.28.3+cuda13.0"), 22803);
  EXPECT_EQ(NcclVersionCode("2.7.8"), 20708);
  EXPECT_EQ(NcclVersionCode("2.21.5,"), 22105);
  auto s = ParseText(
      "NCCL version 2.7.8+cuda10.2\n"
      "h:1:1 [0] NCCL INFO NCCL version 2.18.5+cuda12.2\n"
      "[rank0]: torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system "
      "error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5\n"
      "# nccl-tests version 2.13.8 nccl-headers=21903 nccl-library=21903\n");
  EXPECT_EQ(s.nccl_versions, (std::vector<std::string>{"2.7.8+cuda10.2", "2.18.5+cuda12.2", "2.20.5", "2.19.3"}));
}

TEST(Channels, FormatsFrom25To228) {
  auto s = ParseText(
      "a:1:1 [0] NCCL INFO Ring 00 : 0[0] -> 1[1] via P2P/IPC\n"
      "a:1:1 [0] NCCL INFO Ring 00 : 3 -> 0 [receive] via NET/IB/0/GDRDMA\n"
      "a:1:1 [0] NCCL INFO Ring 01 : 0[0] -> 1[1] via direct shared memory\n"
      "a:1:1 [0] NCCL INFO Channel 00 : 1[1b000] -> 2[1c000] via P2P/IPC\n"
      "a:1:1 [0] NCCL INFO Channel 02/0 : 0[0] -> 8[0] [send] via NET/IB/1/GDRDMA\n"
      "a:1:1 [0] NCCL INFO Ring 00 : 0 -> 1 -> 0\n"
      "a:1:1 [0] NCCL INFO Channel 00/04 :    0   1\n");
  ASSERT_EQ(s.connections.size(), 5u);
  EXPECT_EQ(s.connections[1].transport, "NET/IB");
  EXPECT_EQ(s.connections[1].direction, "receive");
  EXPECT_TRUE(s.connections[1].gdr);
  EXPECT_EQ(s.connections[2].transport, "SHM");
  EXPECT_EQ(s.connections[3].from_device, "1b000");
  EXPECT_EQ(s.connections[4].net_device, 1);
}

TEST(Channels, NetworkNamesWithSpaces) {
  auto s = ParseReal("aws-ofi-24-mpirun-ring-libfabric.log");
  auto it = std::find_if(s.connections.begin(), s.connections.end(),
                         [](const auto& c) { return c.transport == "NET/AWS Libfabric"; });
  ASSERT_NE(it, s.connections.end());
  EXPECT_EQ(it->net_device, 0);
  EXPECT_EQ(it->host, "ip-172-32-38-1");
  EXPECT_EQ(s.transport_channels.at("P2P/IPC"), 3);
  // Hosts carry no launcher prefix.
  for (const auto& h : s.hosts) EXPECT_EQ(h.find('<'), std::string::npos) << h;
  EXPECT_EQ(Events(s, "plugin-load").size(), 1u);  // "NET/OFI Couldn't open AV"
  auto net = ParseText("h:1:1 [0] NCCL INFO Using network AWS Libfabric\n");
  EXPECT_EQ(net.network.at("h"), "AWS Libfabric");
}

TEST(Hosts, OnlyRealHostNamesFromInterleavedAndCutLines) {
  // Two processes writing one file: a line cut mid-way and glued to the next,
  // and the tail of a line cut inside the host name.
  auto s = ParseText(
      "gpu-17:88231:88302 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read\n"
      "gpu-18:77110:77180 [0] NCCL INFO Channel 00/0 : 2[0] -> 3[1] via P2P/CUMEM/read\n"
      "gpu-17:88231:88302 [0] NCCL INFO Channel 01/0 : 0[0] -> 1[1] via P2P/CUMEM/read\n"
      "gpu-18:77110:77180 [0] NCCL INFO Channel 01/0 : 2[0] -> 3[1] via P2P/CUMEM/read\n"
      "gpu-17:88231:88302 [0] NCCL INFO Channel 00/0 : 3[1] -> 0[0] [rgpu-18:77110:77180 [0] NCCL INFO Connected all rings\n"
      "7:88231:88302 [0] NCCL INFO Channel 02/0 : 0[0] -> 1[1] via P2P/CUMEM/read\n"
      "gpu-17:882gpu-18:77110:77180 [0] NCCL INFO Channel 03/0 : 2[0] -> 3[1] via P2P/CUMEM/read\n");
  EXPECT_EQ(s.hosts, (std::vector<std::string>{"gpu-17", "gpu-18"}));
  for (const auto& c : s.connections) EXPECT_TRUE(c.host == "gpu-17" || c.host == "gpu-18") << c.host;
}

TEST(Hosts, PrefixRemovedLinesCountWithoutAHost) {
  auto s = ParseText(
      "NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.0.1<0>\n"
      "[4] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0/GDRDMA\n");
  EXPECT_TRUE(s.hosts.empty());
  ASSERT_EQ(s.connections.size(), 1u);
  EXPECT_EQ(s.connections[0].transport, "NET/IB");
  ASSERT_EQ(s.net_devices.size(), 1u);
  EXPECT_EQ(s.net_devices[0].name, "mlx5_0");
}

TEST(Hosts, ManyHostsAreLinear) {
  // 100k hosts (each one line) must not be quadratic (was 89 s).
  std::string text;
  text.reserve(100000 * 80);
  for (int i = 0; i < 100000; ++i) {
    text += "node-" + std::to_string(i) + ":1000:1001 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.0.1<0>\n";
  }
  auto start = std::chrono::steady_clock::now();
  auto s = ParseText(text);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(s.hosts.size(), 100000u);
  EXPECT_LT(seconds, 10.0 * test_support::kSanitizerTimeFactor);
}

TEST(RealLogs, Status12WithGidsFromTheIbextPlugin) {
  auto s = ParseReal("nccl-1405-ibext-status12.log");
  auto wc = Events(s, "wc-error");
  ASSERT_EQ(wc.size(), 2u);  // two GID pairs; the third line repeats the first pair
  EXPECT_EQ(F(wc[0], "status"), "12");
  EXPECT_EQ(F(wc[0], "status_name"), "IBV_WC_RETRY_EXC_ERR");
  EXPECT_EQ(F(wc[0], "peer_ip"), "10.216.210.236");
  EXPECT_EQ(F(wc[0], "local_gid"), "fd00:1148:9000:5000:4:200:3:ff22");
  EXPECT_EQ(F(wc[0], "remote_gid"), "fd00:1148:9000:5000:4:200:3:ff1f");  // "remoteGidsfd00..." as printed
  EXPECT_EQ(wc[0]->count, 2);
  EXPECT_EQ(wc[0]->host, "kp-ddp-worker-0");
  EXPECT_EQ(wc[0]->line, 2);
  EXPECT_EQ(s.hosts, std::vector<std::string>{"kp-ddp-worker-0"});
}

TEST(RealLogs, OptionalSymbolProbesOfAHealthyRunAreNoFailure) {
  // NCCL 2.28.3 on rdma-core 50 (an H200 host) probes mlx5dv symbols its
  // libmlx5 lacks and says so at INFO; the run is healthy.
  auto s = ParseNcclLogFiles({std::string(FABCHECK_TESTDATA_DIR) + "/nccl-logs/h200-2.28.3-single-process.log"});
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(Events(*s, "verbs").empty());
  // The same line at WARN is a failure.
  auto w = ParseText("host1:10:20 [0] NCCL WARN dlvsym failed on ibv_reg_mr - libibverbs.so.1: undefined symbol\n");
  EXPECT_EQ(Events(w, "verbs").size(), 1u);
}

TEST(RealLogs, OldFormatWithErrorAndLinkLocalPeer) {
  auto s = ParseReal("nccl-928-error4-2.18.log");
  auto wc = Events(s, "wc-error");
  ASSERT_EQ(wc.size(), 3u);
  EXPECT_EQ(F(wc[0], "status"), "4");
  EXPECT_EQ(F(wc[0], "status_name"), "IBV_WC_LOC_PROT_ERR");
  EXPECT_EQ(F(wc[0], "peer_ip"), "fe80::966d:ae03:8b:df78");
  EXPECT_EQ(F(wc[0], "request"), "Send");
  auto oldest = ParseText("h:1:1 [0] transport/net_ib.cc:774 NCCL WARN NET/IB : Got completion with error 12, opcode 1, len 0, vendor err 129\n");
  ASSERT_EQ(Events(oldest, "wc-error").size(), 1u);
  EXPECT_EQ(F(Events(oldest, "wc-error")[0], "status"), "12");
  EXPECT_EQ(F(Events(oldest, "wc-error")[0], "peer"), "");
}

TEST(RealLogs, ModifyQpNoSuchDeviceOnNccl278) {
  auto s = ParseReal("nccl-799-modify-qp-nodev-2.7.8.log");
  EXPECT_EQ(s.nccl_versions, std::vector<std::string>{"2.7.8+cuda10.2"});
  auto v = Events(s, "verbs");
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(F(v[0], "call"), "ibv_modify_qp");
  EXPECT_EQ(F(v[0], "errno"), "ENODEV");
  EXPECT_EQ(s.bootstrap.at("72bf7b08-26f3-4ebc-8b9d-85df3e4414c0"), "eth1:9.73.133.81<0>");
  ASSERT_EQ(s.net_devices.size(), 1u);
  EXPECT_EQ(s.net_devices[0].link_layer, "RoCE");
  EXPECT_TRUE(Events(s, "plugin-load").empty());  // "No plugin found" is normal
}

TEST(RealLogs, SocketAbortAndPeerClosed) {
  auto s = ParseReal("nccl-tests-166-socket-abort.log");
  auto sock = Events(s, "socket");
  ASSERT_EQ(sock.size(), 2u);
  EXPECT_EQ(F(sock[0], "addr"), "10.0.0.2<45763>");
  EXPECT_EQ(F(sock[0], "errno"), "ECONNABORTED");
  EXPECT_EQ(F(sock[1], "op"), "closed");
  EXPECT_EQ(F(sock[1], "peer_ip"), "node1");
}

TEST(RealLogs, ColourRemainsAndSocketFallback) {
  auto s = ParseReal("pytorch-68893-colour-remains-socket.log");
  EXPECT_EQ(s.hosts, std::vector<std::string>{"ip-172-31-0-137"});
  EXPECT_EQ(s.network.at("ip-172-31-0-137"), "Socket");
  EXPECT_EQ(s.transport_channels.at("NET/Socket"), 1);
  EXPECT_EQ(Events(s, "ib-unavailable").size(), 1u);
  EXPECT_EQ(s.nccl_versions, std::vector<std::string>{"2.7.8+cuda11.1"});
}

TEST(RealLogs, WatchdogTimeoutsAndLastCompletedWork) {
  auto s = ParseReal("llamafactory-7396-watchdog.log");
  auto t = Events(s, "timeout");
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(F(t[0], "op"), "ALLREDUCE");
  EXPECT_EQ(F(t[0], "seq"), "1580");
  EXPECT_EQ(F(t[0], "rank"), "0");
  bool rank3 = false;
  for (const auto& seen : s.ranks_seen) {
    if (seen.rank == 3) rank3 = seen.last_completed == 1579 && !seen.timed_out;
  }
  EXPECT_TRUE(rank3);
}

TEST(RealLogs, RayPrefixesRemoteExitedAndRepeated) {
  auto s = ParseReal("openrlhf-621-ray-remote-exited.log");
  EXPECT_EQ(Events(s, "peer-gone").size(), 1u);
  EXPECT_EQ(s.nccl_versions, std::vector<std::string>{"2.21.5"});
  auto nested = ParseReal("fastsafetensors-36-ray-nested.log");
  EXPECT_EQ(nested.hosts, std::vector<std::string>{"spark2"});
  EXPECT_EQ(nested.nodes, 2);
}

TEST(RealLogs, CloudWatchPasteWithGluedTimestamps) {
  auto s = ParseReal("aws-ofi-889-cloudwatch-glued.log");
  EXPECT_EQ(s.hosts, std::vector<std::string>{"ip-10-36-29-253"});
  EXPECT_EQ(s.bootstrap.at("ip-10-36-29-253"), "eth0:10.36.29.253<0>");
  EXPECT_EQ(s.nccl_versions, std::vector<std::string>{"2.21.5+cuda12.8"});
  EXPECT_EQ(s.env.at("NCCL_SOCKET_IFNAME"), "eth0");
}

TEST(RealLogs, PdshPrefixAndIbextPlugin) {
  auto s = ParseReal("nccl-1059-pdsh-prefix.log");
  EXPECT_EQ(s.hosts, (std::vector<std::string>{"MLVM2", "MLVM"}));
  EXPECT_TRUE(Events(s, "plugin-load").empty());
  auto ib = ParseReal("nccl-1000-ibext-plugin.log");
  EXPECT_EQ(ib.plugin.at("dso-s1-r1-a100-02"), "IBext");
  bool collnet = false;
  for (const auto* e : Events(ib, "feature")) collnet |= F(e, "name") == "CollNet";
  EXPECT_TRUE(collnet);
}

TEST(RealLogs, RingOrderLinesAreNotConnections) {
  auto s = ParseReal("nccl-tests-185-ring-order.log");
  EXPECT_TRUE(s.connections.empty());
  EXPECT_EQ(s.hosts, (std::vector<std::string>{"dgxh100-3", "dgxh100-4"}));
}

TEST(Plugins, LoadFailuresAndNotFound) {
  auto s = ParseText(
      "h:1:1 [0] NCCL INFO NET/Plugin: Plugin load returned 2 : /usr/lib/x86_64-linux-gnu/libc.so.6: version "
      "`GLIBC_2.34' not found (required by /opt/amazon/ofi-nccl/lib/libnccl-net.so).\n"
      "h:1:1 [0] NCCL INFO NET/Plugin: Could not find: libnccl-net.so. Using internal network plugin.\n"
      "h:1:1 [0] init.cc:285 NCCL WARN Error: network AWS Libfabric not found.\n");
  auto load = Events(s, "plugin-load");
  ASSERT_EQ(load.size(), 1u);
  EXPECT_NE(F(load[0], "error").find("GLIBC_2.34"), std::string::npos);
  auto nf = Events(s, "net-not-found");
  ASSERT_EQ(nf.size(), 1u);
  EXPECT_EQ(F(nf[0], "net"), "AWS Libfabric");
}

TEST(Sockets, ExceededRetryCountAndRetries) {
  auto s = ParseText(
      "h:1:1 [0] NCCL INFO socketPollConnect: connect to 10.0.0.9<41234> returned Connection refused, retrying "
      "(1/34) after sleep for 100 msec\n"
      "h:1:1 [0] misc/socket.cc:582 NCCL WARN socketPollConnect: connect to 10.0.0.9<41234> returned Connection "
      "refused, exceeded error retry count after 35 attempts\n"
      "h:1:1 [0] NCCL INFO Call to connect returned Connection timed out, retrying\n");
  auto sock = Events(s, "socket");
  ASSERT_EQ(sock.size(), 1u);
  EXPECT_EQ(F(sock[0], "errno"), "ECONNREFUSED");
  EXPECT_EQ(F(sock[0], "peer_ip"), "10.0.0.9");
  EXPECT_EQ(Events(s, "socket-retry").size(), 2u);
}

TEST(Hostile, BinaryNulsAndHugeLinesNeverCrash) {
  std::string garbage;
  for (int i = 0; i < 200000; ++i) garbage.push_back(static_cast<char>((i * 7919) % 256));
  std::string text = garbage + "\n" + std::string(1 << 20, 'x') + " NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC\n" +
                     std::string(4096, '\0') + "\nh:1:1 [0] NCCL INFO Using network IB\n";
  auto s = ParseText(text);
  EXPECT_GT(s.binary_lines, 0);
  EXPECT_EQ(s.network.at("h"), "IB");
  EXPECT_TRUE(s.connections.empty());  // the 1 MB line's tail is past what a NCCL line can be
}

}  // namespace
}  // namespace fabcheck::logs

namespace fabcheck::logs {
namespace {

TEST(Framework, RelayedLastErrorOfAPyTorchTraceback) {
  NcclLogParser p;
  p.AddText(
      "[rank1]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
      "ProcessGroupNCCL.cpp:1970, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5\n"
      "[rank1]: ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.\n"
      "[rank1]: Last error:\n"
      "[rank1]: socketStartConnect: Connect to 10.0.0.2<45763> failed : Connection refused\n",
      "trace.txt");
  auto s = p.Finish();
  bool refused = false, system = false;
  for (const auto& e : s.events) {
    refused |= e.kind == "socket" && e.fields.at("errno") == "ECONNREFUSED" && e.rank == 1;
    system |= e.kind == "nccl-error" && e.fields.at("error") == "ncclSystemError";
  }
  EXPECT_TRUE(refused);
  EXPECT_TRUE(system);
  EXPECT_EQ(s.nccl_versions, std::vector<std::string>{"2.20.5"});
}

}  // namespace
}  // namespace fabcheck::logs
