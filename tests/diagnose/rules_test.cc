// Each diagnose rule on the evidence that makes it fire (real logs from
// public bug reports where they exist, tests/data/nccl-logs/real/), and
// quiet on evidence that must not.
#include <gtest/gtest.h>

#include <algorithm>

#include <set>

#include "diagnose/engine.h"
#include "diagnose/registry.h"
#include "diagnose/evidence.h"
#include "logs/nccl_log.h"

namespace fabcheck::diagnose {
namespace {

std::string Real(const std::string& name) { return std::string(FABCHECK_TESTDATA_DIR) + "/nccl-logs/real/" + name; }

std::vector<model::Diagnosis> FromFiles(const std::vector<std::string>& files) {
  auto s = logs::ParseNcclLogFiles(files);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  Evidence ev;
  if (s.ok()) ev.nccl = *s;
  return Diagnose(ev).findings;
}

std::vector<model::Diagnosis> FromText(const std::string& text) {
  logs::NcclLogParser p;
  p.AddText(text, "job.log");
  Evidence ev;
  ev.nccl = p.Finish();
  return Diagnose(ev).findings;
}

std::vector<const model::Diagnosis*> All(const std::vector<model::Diagnosis>& ds, const std::string& rule) {
  std::vector<const model::Diagnosis*> out;
  for (const auto& d : ds) {
    if (d.rule == rule) out.push_back(&d);
  }
  return out;
}

const model::Diagnosis* One(const std::vector<model::Diagnosis>& ds, const std::string& rule) {
  auto all = All(ds, rule);
  return all.empty() ? nullptr : all.front();
}

bool Has(const std::vector<std::string>& list, const std::string& needle) {
  return std::any_of(list.begin(), list.end(), [&](const auto& s) { return s.find(needle) != std::string::npos; });
}

TEST(WcError, Status12NamesHcaGidsPeerAndTheTestBetweenThem) {
  // Two nodes: the bootstrap lines map the peer's address to its host.
  auto ds = FromText(
      "node-a:100:100 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n"
      "node-b:200:200 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.2<0>\n"
      "node-a:100:300 [0] transport/net_ib.cc:2470 NCCL WARN NET/IB: Got completion from peer 10.0.0.2<40001> with "
      "status=12 opcode=0 len=0 vendor err 129 (Recv) localGid ::ffff:10.0.0.1 remoteGids::ffff:10.0.0.2 hca mlx5_3\n");
  const auto* d = One(ds, "nccl.ib.wc-error");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->severity, model::Severity::kFail);
  EXPECT_EQ(d->confidence, model::Confidence::kHigh);
  EXPECT_NE(d->message.find("IBV_WC_RETRY_EXC_ERR"), std::string::npos) << d->message;
  EXPECT_NE(d->object.find("node-a mlx5_3 -> node-b (10.0.0.2)"), std::string::npos) << d->object;
  EXPECT_TRUE(Has(d->evidence, "job.log:3:"));
  EXPECT_TRUE(Has(d->evidence, "local GID ::ffff:10.0.0.1, remote GID ::ffff:10.0.0.2"));
  EXPECT_TRUE(Has(d->causes, "PFC"));
  EXPECT_TRUE(Has(d->causes, "GID"));
  EXPECT_TRUE(Has(d->causes, "MTU"));
  EXPECT_NE(d->next.find("between exactly node-a (mlx5_3, GID ::ffff:10.0.0.1) and node-b"), std::string::npos) << d->next;
  EXPECT_NE(d->next.find("fabcheck perf run 10.0.0.2 --transport verbs --device mlx5_3"), std::string::npos) << d->next;
}

TEST(WcError, RealIbextStatus12GroupsByPeer) {
  auto ds = FromFiles({Real("nccl-1405-ibext-status12.log")});
  auto wc = All(ds, "nccl.ib.wc-error");
  ASSERT_EQ(wc.size(), 1u);  // one host, one peer
  EXPECT_NE(wc[0]->message.find("3 times"), std::string::npos) << wc[0]->message;
  EXPECT_TRUE(Has(wc[0]->evidence, "nccl-1405-ibext-status12.log:2:"));
}

TEST(WcError, LocalProtectionAndLinkLocalPeers) {
  auto ds = FromFiles({Real("nccl-928-error4-2.18.log")});
  auto wc = All(ds, "nccl.ib.wc-error");
  ASSERT_EQ(wc.size(), 3u);
  EXPECT_NE(wc[0]->message.find("IBV_WC_LOC_PROT_ERR"), std::string::npos);
  EXPECT_TRUE(Has(wc[0]->causes, "GPUDirect"));
  EXPECT_NE(wc[0]->fix.find("GDR"), std::string::npos);
}

TEST(WcError, EveryStatusIsDecodedByName) {
  for (int status : {1, 2, 9, 10, 11, 13, 19, 21}) {
    auto ds = FromText("h:1:1 [0] net_ib.cc:1 NCCL WARN NET/IB : Got completion from peer 10.0.0.9<1> with error " +
                       std::to_string(status) + ", opcode 0, len 0, vendor err 0 (Send)\n");
    const auto* d = One(ds, "nccl.ib.wc-error");
    ASSERT_NE(d, nullptr) << status;
    EXPECT_NE(d->message.find("IBV_WC_"), std::string::npos) << d->message;
    EXPECT_FALSE(d->causes.empty());
  }
}

TEST(WcFlush, PointsAtTheFirstError) {
  auto ds = FromFiles({Real("nccl-1814-status12-then-flush.log")});
  const auto* flush = One(ds, "nccl.ib.wc-flush");
  ASSERT_NE(flush, nullptr);
  EXPECT_EQ(flush->severity, model::Severity::kInfo);
  EXPECT_NE(flush->message.find("consequences of the first error at"), std::string::npos) << flush->message;
  EXPECT_NE(flush->message.find(":8"), std::string::npos) << flush->message;  // the status=12 line
  auto wc = All(ds, "nccl.ib.wc-error");
  ASSERT_EQ(wc.size(), 1u);  // status 5 is not reported as a cause of its own
  // NVLS was in use too.
  ASSERT_NE(One(ds, "nccl.features"), nullptr);
  EXPECT_NE(One(ds, "nccl.features")->message.find("NVLS"), std::string::npos);
  // Alone, a flush says the first error is elsewhere.
  auto alone = FromText("h:1:1 [0] x.cc:1 NCCL WARN NET/IB : Got completion from peer 10.0.0.7<1> with status=5 "
                        "opcode=0 len=0 vendor err 249 (Recv)\n");
  ASSERT_NE(One(alone, "nccl.ib.wc-flush"), nullptr);
  EXPECT_EQ(One(alone, "nccl.ib.wc-flush")->severity, model::Severity::kWarn);
  EXPECT_NE(One(alone, "nccl.ib.wc-flush")->fix.find("10.0.0.7"), std::string::npos);
}

TEST(Bootstrap, RefusedNamesAddressAndInterface) {
  auto ds = FromText(
      "h1:1:1 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth0\n"
      "h1:1:1 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n"
      "h1:1:1 [0] misc/socket.cc:582 NCCL WARN socketPollConnect: connect to 10.0.0.9<41234> returned Connection "
      "refused, exceeded error retry count after 35 attempts\n");
  const auto* d = One(ds, "nccl.bootstrap.connect");
  ASSERT_NE(d, nullptr);
  EXPECT_NE(d->message.find("10.0.0.9<41234>"), std::string::npos) << d->message;
  EXPECT_NE(d->message.find("bootstrapped on eth0"), std::string::npos) << d->message;
  EXPECT_TRUE(Has(d->causes, "died or never started"));
  EXPECT_TRUE(Has(d->evidence, "NCCL_SOCKET_IFNAME set by environment to eth0"));
  auto timedout = FromText("h1:1:1 [0] x:1 NCCL WARN Net : Connect to 10.0.0.9<4> failed : Connection timed out\n");
  ASSERT_NE(One(timedout, "nccl.bootstrap.connect"), nullptr);
  EXPECT_TRUE(Has(One(timedout, "nccl.bootstrap.connect")->causes, "wrong interface"));
}

TEST(Bootstrap, RealAbortClosedPeerAndRemoteExited) {
  auto ds = FromFiles({Real("nccl-tests-166-socket-abort.log")});
  EXPECT_EQ(All(ds, "nccl.bootstrap.connect").size(), 2u);
  auto ray = FromFiles({Real("openrlhf-621-ray-remote-exited.log")});
  const auto* gone = One(ray, "nccl.bootstrap.connect");
  ASSERT_NE(gone, nullptr);
  EXPECT_NE(gone->message.find("remote process exited"), std::string::npos);
}

TEST(Verbs, MeaningPerCallAndErrno) {
  auto ds = FromFiles({Real("nccl-799-modify-qp-nodev-2.7.8.log")});
  const auto* d = One(ds, "nccl.verbs.call-failed");
  ASSERT_NE(d, nullptr);
  EXPECT_NE(d->message.find("ENODEV"), std::string::npos);
  EXPECT_TRUE(Has(d->causes, "GID"));
  EXPECT_TRUE(Has(d->causes, "network namespace"));
  auto mem = FromText("h:1:1 [0] misc/ibvwrap.cc:1 NCCL WARN Call to ibv_reg_mr failed with error Cannot allocate memory\n");
  ASSERT_NE(One(mem, "nccl.verbs.call-failed"), nullptr);
  EXPECT_TRUE(Has(One(mem, "nccl.verbs.call-failed")->causes, "memlock"));
  auto qp = FromText("h:1:1 [0] misc/ibvwrap.cc:1 NCCL WARN Call to ibv_create_qp failed with error Cannot allocate "
                     "memory errno 12\n");
  ASSERT_NE(One(qp, "nccl.verbs.call-failed"), nullptr);
  EXPECT_TRUE(Has(One(qp, "nccl.verbs.call-failed")->causes, "resource limit"));
}

TEST(Plugins, LoadFailureNotFoundAndWhatWasUsed) {
  auto ds = FromText(
      "h:1:1 [0] NCCL INFO NET/Plugin: Plugin load returned 2 : /lib/x86_64-linux-gnu/libc.so.6: version "
      "`GLIBC_2.34' not found (required by /opt/amazon/ofi-nccl/lib/libnccl-net.so).\n"
      "h:1:1 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\n"
      "h:1:1 [0] NCCL INFO Using network Socket\n"
      "h:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0\n");
  const auto* load = One(ds, "nccl.plugin.load-failed");
  ASSERT_NE(load, nullptr);
  EXPECT_EQ(load->severity, model::Severity::kFail);  // fell back to sockets across nodes
  EXPECT_TRUE(Has(load->causes, "glibc"));
  auto nf = FromText("h:1:1 [0] init.cc:285 NCCL WARN Error: network AWS Libfabric not found.\n");
  ASSERT_NE(One(nf, "nccl.plugin.net-not-found"), nullptr);
  EXPECT_NE(One(nf, "nccl.plugin.net-not-found")->message.find("AWS Libfabric"), std::string::npos);
  auto ib = FromFiles({Real("nccl-1000-ibext-plugin.log")});
  ASSERT_NE(One(ib, "nccl.plugin.used"), nullptr);
  EXPECT_NE(One(ib, "nccl.plugin.used")->message.find("IBext"), std::string::npos);
  // A plugin that loaded, then NCCL used its internal IB.
  auto fb = FromText("h:1:1 [0] NCCL INFO NET/Plugin: Loaded net plugin gIB (v8)\nh:1:1 [0] NCCL INFO Using network IB\n");
  ASSERT_NE(One(fb, "nccl.plugin.used"), nullptr);
  EXPECT_NE(One(fb, "nccl.plugin.used")->message.find("internal IB"), std::string::npos);
  // "No plugin found" is not a failure.
  EXPECT_EQ(One(FromFiles({Real("nccl-1059-pdsh-prefix.log")}), "nccl.plugin.load-failed"), nullptr);
}

TEST(Transport, SettingsAndWarningsOnlyWhenTheNetworkIsNeeded) {
  auto net = FromText("h:1:1 [0] NCCL INFO NCCL_NET set by environment to Socket\n"
                      "h:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0\n");
  ASSERT_NE(One(net, "nccl.env.ib-disable"), nullptr);
  EXPECT_NE(One(net, "nccl.env.ib-disable")->message.find("NCCL_NET=Socket"), std::string::npos);
  const char* hca = "h:1:1 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'\n";
  // A bare excerpt says nothing about the node count: absence of channel lines
  // is not evidence of one node, so it stays a warning (of medium confidence).
  auto excerpt = FromText(hca);
  ASSERT_NE(One(excerpt, "nccl.gdr.hca-disabled"), nullptr);
  EXPECT_EQ(One(excerpt, "nccl.gdr.hca-disabled")->severity, model::Severity::kWarn);
  EXPECT_EQ(One(excerpt, "nccl.gdr.hca-disabled")->confidence, model::Confidence::kMedium);
  // NCCL saying nNodes 1 is evidence: then it costs nothing.
  auto one_node = FromText(std::string(hca) +
                           "h:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks 2 nNodes 1 localRanks 2 localRank 0 MNNVL 0\n");
  ASSERT_NE(One(one_node, "nccl.gdr.hca-disabled"), nullptr);
  EXPECT_EQ(One(one_node, "nccl.gdr.hca-disabled")->severity, model::Severity::kInfo);
  auto with_net = FromText(std::string(hca) + "h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0\n");
  EXPECT_EQ(One(with_net, "nccl.gdr.hca-disabled")->severity, model::Severity::kWarn);
  auto pxn = FromText("h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/1(1)/GDRDMA\n");
  ASSERT_NE(One(pxn, "nccl.features"), nullptr);
  EXPECT_NE(One(pxn, "nccl.features")->message.find("PXN"), std::string::npos);
  auto socket = FromFiles({Real("pytorch-68893-colour-remains-socket.log")});
  ASSERT_NE(One(socket, "nccl.net.socket"), nullptr);
  EXPECT_TRUE(Has(One(socket, "nccl.net.socket")->causes, "libibverbs"));
}

TEST(Hang, WhoTimedOutWhoIsBehindWhoWasSilent) {
  auto ds = FromFiles({Real("llamafactory-7396-watchdog.log")});
  const auto* d = One(ds, "nccl.hang.timeout");
  ASSERT_NE(d, nullptr);
  EXPECT_NE(d->message.find("3 rank(s) timed out in ALLREDUCE (SeqNum 1580"), std::string::npos) << d->message;
  EXPECT_EQ(d->object, "ranks 0, 2, 4");
  EXPECT_TRUE(Has(d->causes, "rank(s) 1, 3 did not report the timeout"));
  EXPECT_TRUE(Has(d->evidence, "rank 3: last completed NCCL work 1579"));
  EXPECT_TRUE(Has(d->evidence, "rank 3 was last heard from at"));
  EXPECT_NE(d->next.find("rank(s) 1, 3"), std::string::npos) << d->next;
  // Behind: one rank's last completed work is lower than the others'.
  auto behind = FromText(
      "[rank0]:[E1 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation timeout: "
      "WorkNCCL(SeqNum=9, OpType=ALLGATHER, NumelIn=1, NumelOut=2, Timeout(ms)=600000) ran for 600010 milliseconds "
      "before timing out.\n"
      "[rank0]:[E1 ProcessGroupNCCL.cpp:1664] [PG 0 Rank 0] Exception (either an error or timeout) detected by "
      "watchdog at work: 9, last enqueued NCCL work: 9, last completed NCCL work: 8.\n"
      "[rank1]:[E1 ProcessGroupNCCL.cpp:1664] [PG 0 Rank 1] Exception (either an error or timeout) detected by "
      "watchdog at work: 7, last enqueued NCCL work: 9, last completed NCCL work: 6.\n");
  const auto* b = One(behind, "nccl.hang.timeout");
  ASSERT_NE(b, nullptr);
  EXPECT_TRUE(Has(b->causes, "rank(s) 1 are behind (last completed work 6 while others reached 8)"));
}

TEST(Catalog, EveryRuleHasAUniqueIdAndItsText) {
  std::set<std::string> ids;
  for (const Rule* r : AllRules()) {
    EXPECT_TRUE(ids.insert(r->id).second) << "duplicate " << r->id;
    EXPECT_GT(std::string(r->title).size(), 10u) << r->id;
    EXPECT_GT(std::string(r->why).size(), 20u) << r->id;
    EXPECT_GT(std::string(r->fix).size(), 10u) << r->id;
    EXPECT_EQ(FindRule(r->id), r);
  }
  // Every rule the issue asks for is there.
  for (const char* id : {"nccl.ib.wc-error", "nccl.ib.wc-flush", "nccl.bootstrap.connect", "nccl.verbs.call-failed",
                         "nccl.plugin.load-failed", "nccl.plugin.net-not-found", "nccl.plugin.used", "nccl.features",
                         "nccl.hang.timeout", "counters.retransmission", "counters.link-errors", "counters.discards",
                         "counters.pause", "counters.ecn-no-cnp", "counters.reset", "perf.tcp-plateau",
                         "perf.large-messages", "perf.half-rate"}) {
    EXPECT_NE(FindRule(id), nullptr) << id;
  }
  std::string md = CatalogMarkdown();
  EXPECT_NE(md.find("### nccl.ib.wc-error"), std::string::npos);
  // An empty evidence fires nothing.
  EXPECT_TRUE(Diagnose(Evidence{}).findings.empty());
}

}  // namespace
}  // namespace fabcheck::diagnose
