// The NCCL log reader (logs/) and the NCCL rules (diagnose/) together, as
// `fabcheck nccl-log` runs them: samples written from NCCL's format strings
// (2.18, 2.23, 2.26, 2.28; see tests/data/nccl-logs/README.md), real H200
// logs, and garbage.
#include <gtest/gtest.h>

#include <algorithm>

#include "diagnose/engine.h"
#include "logs/nccl_log.h"

namespace fabcheck::logs {
namespace {

std::string Sample(const std::string& name) { return std::string(FABCHECK_TESTDATA_DIR) + "/nccl-logs/" + name; }

// Parses and runs the NCCL rules, as the nccl-log command does.
Result<model::NcclLogSummary> ParseWithRules(const std::vector<std::string>& paths) {
  auto summary = ParseNcclLogFiles(paths);
  if (summary.ok()) summary->findings = diagnose::NcclLogFindings(*summary);
  return summary;
}

model::NcclLogSummary Parse(const std::string& name) {
  auto summary = ParseWithRules({Sample(name)});
  EXPECT_TRUE(summary.ok()) << summary.status().ToString();
  return summary.ok() ? *summary : model::NcclLogSummary{};
}

model::NcclLogSummary Finish(NcclLogParser& parser) {
  auto s = parser.Finish();
  s.findings = diagnose::NcclLogFindings(s);
  return s;
}

const model::Finding* FindingById(const model::NcclLogSummary& s, const std::string& id) {
  for (const auto& f : s.findings) {
    if (f.id == id) return &f;
  }
  return nullptr;
}

TEST(NcclPathTypeName, FollowsEachVersionsTable) {
  EXPECT_EQ(NcclPathTypeName(4, 21805), "PXB");
  EXPECT_EQ(NcclPathTypeName(6, 22304), "PHB");
  EXPECT_EQ(NcclPathTypeName(7, 22602), "PHB");  // C2C added in 2.26
  EXPECT_EQ(NcclPathTypeName(5, 22602), "PXB");
  EXPECT_EQ(NcclPathTypeName(7, 22703), "P2C");  // 2.27: PXN 6, P2C 7
  EXPECT_EQ(NcclPathTypeName(6, 22803), "P2C");  // 2.28: P2C 6, PXN 7
  EXPECT_EQ(NcclPathTypeName(8, 22803), "PHB");
  EXPECT_EQ(NcclPathTypeName(8, 0), "PHB");  // unknown version: newest table
  EXPECT_EQ(NcclPathTypeName(42, 22803), "PATH42");
}

TEST(NcclVersionCode, ParsesNcclVersionStrings) {
  EXPECT_EQ(NcclVersionCode("2.28.3+cuda13.0"), 22803);
  EXPECT_EQ(NcclVersionCode("2.18.5-1+cuda12.2"), 21805);
  EXPECT_EQ(NcclVersionCode("2.x.3"), 0);
  EXPECT_EQ(NcclVersionCode(""), 0);
}

TEST(NcclLog, V218IbWithGdrAcrossTwoHosts) {
  auto s = Parse("nccl-2.18-ib-gdr.log");
  EXPECT_EQ(s.nccl_versions, std::vector<std::string>{"2.18.5+cuda12.2"});
  EXPECT_EQ(s.hosts, (std::vector<std::string>{"node-a", "node-b"}));
  EXPECT_EQ(s.ranks, 4);
  EXPECT_EQ(s.bootstrap.at("node-a"), "ib0:192.168.10.1<0>");
  EXPECT_EQ(s.network.at("node-b"), "IB");
  ASSERT_EQ(s.net_devices.size(), 4u);
  EXPECT_EQ(s.net_devices[1].name, "mlx5_1");
  EXPECT_EQ(s.net_devices[1].link_layer, "IB");
  ASSERT_FALSE(s.gdr.empty());
  EXPECT_TRUE(s.gdr[0].enabled);
  EXPECT_EQ(s.gdr[0].gpu, "18000");
  EXPECT_EQ(s.gdr[0].distance_name, "PXB");
  EXPECT_EQ(s.gdr[0].hca_name, "mlx5_0");
  // busId in brackets (2.18): kept as printed.
  auto ipc = std::find_if(s.connections.begin(), s.connections.end(),
                          [](const auto& c) { return c.transport == "P2P/IPC" && c.host == "node-a"; });
  ASSERT_NE(ipc, s.connections.end());
  EXPECT_EQ(ipc->from_device, "18000");
  EXPECT_EQ(ipc->detail, "/read");
  EXPECT_EQ(ipc->channels, (std::vector<int>{0, 1}));
  auto send = std::find_if(s.connections.begin(), s.connections.end(),
                           [](const auto& c) { return c.direction == "send" && c.host == "node-a"; });
  ASSERT_NE(send, s.connections.end());
  EXPECT_EQ(send->transport, "NET/IB");
  EXPECT_EQ(send->net_device, 1);
  EXPECT_TRUE(send->gdr);
  EXPECT_EQ(FindingById(s, "nccl.net.socket"), nullptr);
  ASSERT_NE(FindingById(s, "nccl.transport"), nullptr);
  EXPECT_EQ(FindingById(s, "nccl.transport")->severity, model::Severity::kPass);
  EXPECT_TRUE(s.init_complete);
}

TEST(NcclLog, V223SocketFallbackIsAFailure) {
  auto s = Parse("nccl-2.23-socket-fallback.log");
  EXPECT_EQ(s.nodes, 2);
  EXPECT_EQ(s.env.at("NCCL_IB_DISABLE"), "1");
  EXPECT_EQ(s.env.at("NCCL_SOCKET_IFNAME"), "eth0");
  EXPECT_EQ(s.network.at("gpu-17"), "Socket");
  const auto* socket = FindingById(s, "nccl.net.socket");
  ASSERT_NE(socket, nullptr);
  EXPECT_EQ(socket->severity, model::Severity::kFail);
  EXPECT_NE(socket->message.find("inter-node traffic used sockets"), std::string::npos);
  EXPECT_FALSE(socket->evidence.empty());
  const auto* disabled = FindingById(s, "nccl.env.ib-disable");
  ASSERT_NE(disabled, nullptr);
  EXPECT_NE(disabled->message.find("NCCL_IB_DISABLE was set"), std::string::npos);
  // mpirun's "[1,0]<stdout>:" prefix does not leak into the host name.
  EXPECT_EQ(s.hosts.front(), "gpu-17");
  EXPECT_EQ(s.transport_channels.at("P2P/CUMEM"), 2);
  EXPECT_EQ(s.transport_channels.at("SHM"), 1);
}

TEST(NcclLog, V228GdrDisabledNamesGpuNicAndDistance) {
  auto s = Parse("nccl-2.28-gdr-disabled.log");
  EXPECT_EQ(s.bootstrap.at("dgx-a01"), "bond0:10.20.0.11<0>");  // "Bootstrap:" (2.28) after a timestamp
  const auto* gdr = FindingById(s, "nccl.gdr.disabled");
  ASSERT_NE(gdr, nullptr);
  EXPECT_EQ(gdr->message, "GPUDirect disabled for GPU 0 (busId 18000) / NIC mlx5_0 (distance PHB > PXB)");
  EXPECT_NE(FindingById(s, "nccl.gdr.not-used"), nullptr);
  // The WARN is a verbs call failure now, with its meaning, not a bare WARN.
  EXPECT_EQ(FindingById(s, "nccl.warn"), nullptr);
  const auto* verbs = FindingById(s, "nccl.verbs.call-failed");
  ASSERT_NE(verbs, nullptr);
  EXPECT_NE(verbs->evidence.front().find("ibv_modify_qp failed"), std::string::npos);
  auto pxn = std::find_if(s.connections.begin(), s.connections.end(), [](const auto& c) { return c.proxy_rank >= 0; });
  ASSERT_NE(pxn, s.connections.end());
  EXPECT_EQ(pxn->net_device, 1);
  EXPECT_EQ(pxn->proxy_rank, 1);
  EXPECT_TRUE(pxn->gdr);
  EXPECT_EQ(pxn->detail, "/GDRDMA(PCI)/Shared");
  EXPECT_EQ(s.net_devices[0].link_layer, "RoCE");
}

TEST(NcclLog, V226P2pDisabledNamesTheChangedTransport) {
  auto s = Parse("nccl-2.26-p2p-disabled.log");
  const auto* p2p = FindingById(s, "nccl.env.p2p-disable");
  ASSERT_NE(p2p, nullptr);
  EXPECT_NE(p2p->message.find("SHM"), std::string::npos) << p2p->message;
  EXPECT_NE(FindingById(s, "nccl.net.ib-no-device"), nullptr);
  EXPECT_NE(FindingById(s, "nccl.gdr.hca-disabled"), nullptr);
  ASSERT_EQ(s.gdr.size(), 1u);
  EXPECT_EQ(s.gdr[0].distance_name, "PHB");  // 7 in 2.26's table
  EXPECT_EQ(s.gdr[0].limit_name, "PXB");
  // One node, no NET channels: the Socket network alone is not a failure.
  EXPECT_EQ(FindingById(s, "nccl.net.socket"), nullptr);
}

TEST(NcclLog, GarbageAndTruncationNeverCrash) {
  auto s = Parse("truncated.log");
  // Only the one well-formed channel line counts.
  ASSERT_EQ(s.connections.size(), 1u);
  EXPECT_EQ(s.connections[0].transport, "P2P/CUMEM");
  EXPECT_TRUE(s.gdr.empty());
  EXPECT_NE(FindingById(s, "nccl.log.incomplete"), nullptr);

  NcclLogParser parser;
  parser.AddText("", "empty");
  parser.AddText(std::string(1 << 16, '\0'), "zeros");
  parser.AddText("h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via\nh:1:2 [0] NCCL INFO NET/IB : Using", "cut");
  auto empty = Finish(parser);
  EXPECT_TRUE(empty.connections.empty());
  const model::Finding* none = FindingById(empty, "nccl.log.no-transport");
  ASSERT_NE(none, nullptr);
  EXPECT_EQ(none->severity, model::Severity::kUnknown);
}

TEST(NcclLog, ManyFilesMergeAndUnreadableOnesAreReported) {
  auto s = ParseWithRules({Sample("nccl-2.18-ib-gdr.log"), Sample("does-not-exist.log")});
  ASSERT_TRUE(s.ok());
  ASSERT_NE(FindingById(*s, "nccl.log.unreadable"), nullptr);
  auto none = ParseNcclLogFiles({Sample("does-not-exist.log")});
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("does-not-exist.log"), std::string::npos);
  auto two = ParseWithRules({Sample("nccl-2.18-ib-gdr.log"), Sample("nccl-2.28-gdr-disabled.log")});
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(two->nccl_versions.size(), 2u);
  EXPECT_NE(FindingById(*two, "nccl.version.mismatch"), nullptr);
  // Distances are named with each process's own version.
  bool pxb_218 = false, phb_228 = false;
  for (const auto& g : two->gdr) {
    if (g.host == "node-a" && g.distance == 4) pxb_218 = g.distance_name == "PXB";
    if (g.host == "dgx-a01" && g.distance == 8) phb_228 = g.distance_name == "PHB";
  }
  EXPECT_TRUE(pxb_218);
  EXPECT_TRUE(phb_228);
}

TEST(NcclLog, GraphLineGivesNcclsEstimate) {
  NcclLogParser parser;
  parser.AddText(
      "h:1:1 [0] NCCL INFO NCCL version 2.28.3+cuda13.0\n"
      "h:1:2 [0] NCCL INFO Pattern 4, crossNic 0, nChannels 18, bw 20.600000/20.600000, type NVL/PIX, sameChannels 1\n",
      "graph");
  auto s = parser.Finish();
  ASSERT_EQ(s.graphs.size(), 1u);
  EXPECT_EQ(s.graphs[0].pattern, 4);
  EXPECT_EQ(s.graphs[0].channels, 18);
  EXPECT_DOUBLE_EQ(s.graphs[0].bw_intra, 20.6);
  EXPECT_EQ(s.graphs[0].type_intra, "NVL");
}

}  // namespace
}  // namespace fabcheck::logs

namespace fabcheck::logs {
namespace {

// Real logs from the H200 machine (2 GPUs joined by NVLink, no NIC).
TEST(NcclLogH200, SingleProcessUsedP2pDirectPointer) {
  auto s = Parse("h200-2.28.3-single-process.log");
  EXPECT_EQ(s.nccl_versions, std::vector<std::string>{"2.28.3+cuda13.0"});
  EXPECT_EQ(s.ranks, 2);
  ASSERT_FALSE(s.connections.empty());
  for (const auto& c : s.connections) EXPECT_EQ(c.transport, "P2P/direct pointer");
  ASSERT_NE(FindingById(s, "nccl.transport"), nullptr);
  EXPECT_EQ(FindingById(s, "nccl.transport")->severity, model::Severity::kPass);
  EXPECT_EQ(FindingById(s, "nccl.gdr.hca-disabled"), nullptr);  // the Socket "HCA" is not a NIC
  ASSERT_NE(FindingById(s, "nccl.net.ib-no-device"), nullptr);
  EXPECT_EQ(FindingById(s, "nccl.net.ib-no-device")->severity, model::Severity::kInfo);  // one node
  bool ring = false;
  for (const auto& g : s.graphs) ring |= g.pattern == 4 && g.type_intra == "NVL";
  EXPECT_TRUE(ring);
}

TEST(NcclLogH200, ProcessPerGpuUsedP2pCumemOnBothRanks) {
  auto s = ParseWithRules({Sample("h200-2.28.3-process-per-gpu.rank0.log"), Sample("h200-2.28.3-process-per-gpu.rank1.log")});
  ASSERT_TRUE(s.ok());
  ASSERT_EQ(s->connections.size(), 2u);
  for (const auto& c : s->connections) EXPECT_EQ(c.transport, "P2P/CUMEM");
  EXPECT_TRUE(s->init_complete);
}

TEST(NcclLogH200, P2pDisabledNamesShm) {
  auto s = Parse("h200-2.28.3-p2p-disabled.log");
  const auto* p2p = FindingById(s, "nccl.env.p2p-disable");
  ASSERT_NE(p2p, nullptr);
  EXPECT_NE(p2p->message.find("SHM"), std::string::npos) << p2p->message;
  for (const auto& c : s.connections) EXPECT_EQ(c.transport, "SHM");
}

}  // namespace
}  // namespace fabcheck::logs
