// The ladder manifest (fabcheck.ladder/v1) survives JSON both ways with every
// field, and a damaged one is refused with a message naming the field.
#include <gtest/gtest.h>

#include "fabcheck/model/ladder.h"

namespace fabcheck::model {
namespace {

LadderManifest FullManifest() {
  LadderManifest m;
  m.fabcheck_version = "0.1.0";
  m.created_at = "2026-12-01T10:00:00Z";
  m.coordinator = "head01";
  m.parameters = {{"rungs", "L1-L3"}, {"keep_going", true}};
  m.start_unix = 1000.5;
  m.end_unix = 1042.25;
  m.interrupted = true;
  LadderMember a;
  a.id = "n1";
  a.name = "n1";
  a.control = "10.0.0.1:18521";
  a.data_addresses = {"192.168.1.1", "192.168.2.1"};
  a.node_type = "8xH100 8xCX7";
  a.inventory_file = "members/n1/inventory.json";
  a.doctor_file = "members/n1/doctor.json";
  a.snapshot_file = "members/n1/snapshot.tar.gz";
  a.rack = "r1";
  a.leaf = "leaf3";
  LadderMember b = a;
  b.id = "n2@10.0.0.2";
  b.reachable = false;
  b.error = "no answer";
  b.dropped_at = "L3";
  b.dropped_reason = "stopped answering";
  m.members = {a, b};

  RungResult r;
  r.id = "L3";
  r.title = "L3 RDMA perftest";
  r.verdict = RungVerdict::kFail;
  r.reason = "1 of 2 pairs below 90%";
  r.parameters = {{"pattern", "ring"}, {"pass_fraction", 0.9}};
  r.start_unix = 1010;
  r.end_unix = 1020;
  r.members = {"n1", "n2@10.0.0.2"};
  r.members_passed = {"n1"};
  Finding f;
  f.id = "ladder.l3.bw-low";
  f.severity = Severity::kFail;
  f.group = "L3";
  f.object = "n1 -> n2@10.0.0.2 rail 0";
  f.message = "bandwidth low";
  f.evidence = {"12.5 Gb/s measured"};
  f.remedy = "check the link";
  r.findings = {f};
  ConsistencyCheck c;
  c.setting = "netdev_mtu";
  c.majority = "9000";
  c.values = {{"n1", "9000"}, {"n2@10.0.0.2", "1500"}};
  c.outliers = {"n2@10.0.0.2"};
  c.verdict = RungVerdict::kFail;
  r.consistency = {c};
  PairTest p;
  p.a = "n1";
  p.b = "n2@10.0.0.2";
  p.rail = 1;
  p.transport = "tcp";
  p.rdma = false;
  p.device_a = "eth1";
  p.device_b = "eth1";
  p.gid_a = "fe80::1";
  p.path_mtu = 1500;
  p.local_mtu = 9000;
  p.bw_gbps = 12.5;
  p.expected_gbps = 360;
  p.expected_basis = "400 Gb/s port x 90%";
  p.lat_p50_us = 3.5;
  p.lat_p99_us = 9.25;
  p.sweep = {{4096, 1.5}, {1 << 20, 12.5}};
  p.verdict = RungVerdict::kFail;
  p.reason = "RDMA not used: tcp";
  p.evidence_file = "rungs/L3/n1-n2.json";
  PairTest unmeasured;
  unmeasured.a = "n2@10.0.0.2";
  unmeasured.b = "n1";
  r.pairs = {p, unmeasured};
  CollectiveCheck coll;
  coll.op = "all_reduce";
  coll.max_bytes = 1ull << 30;
  coll.busbw_gbps = 350;
  coll.expected_gbps = 370;
  coll.expected_basis = "4 x 400 Gb/s";
  coll.sweep = {{1 << 20, 100}};
  coll.wrong = 2;
  coll.verdict = RungVerdict::kWarn;
  coll.reason = "below";
  r.collectives = {coll};
  NcclTransportCheck nccl;
  nccl.member = "n1";
  nccl.transports = {"NET/IB/GDRDMA"};
  nccl.hcas = {"mlx5_0:1"};
  nccl.interface = "net1";
  nccl.gpudirect = true;
  nccl.verdict = RungVerdict::kPass;
  r.nccl = {nccl};
  CounterDelta d;
  d.member = "n1";
  d.object = "mlx5_0/1";
  d.counter = "port_rcv_errors";
  d.before = 10;
  d.after = 7;
  d.delta = -3;
  d.interval_s = 9.5;
  r.counter_deltas = {d};
  r.evidence_files = {"rungs/L3/n1-n2.json"};
  RungResult skipped;
  skipped.id = "L4";
  skipped.title = "L4 collectives";
  skipped.reason = "no GPU on n1";
  m.rungs = {r, skipped};
  m.verdict.go = false;
  m.verdict.first_failing_rung = "L3";
  m.verdict.not_run = {"L4"};
  m.verdict.summary = "no-go: L3";
  m.verdict.exit_code = 2;
  return m;
}

TEST(LadderManifest, RoundTripsEveryField) {
  LadderManifest m = FullManifest();
  nlohmann::json j = m;
  std::string error;
  auto back = ParseLadderManifest(j.dump(), &error);
  ASSERT_TRUE(back) << error;
  // Serialising again gives the same document: nothing was lost or defaulted.
  EXPECT_EQ(nlohmann::json(*back), j);
  EXPECT_EQ(back->members[1].id, "n2@10.0.0.2");
  EXPECT_FALSE(back->members[1].reachable);
  EXPECT_EQ(back->rungs[0].pairs[0].path_mtu, 1500);
  EXPECT_EQ(back->rungs[0].pairs[0].sweep[1].bytes, 1u << 20);
  EXPECT_FALSE(back->rungs[0].pairs[1].bw_gbps.has_value());
  EXPECT_EQ(back->rungs[0].counter_deltas[0].delta, -3);
  EXPECT_EQ(back->rungs[1].verdict, RungVerdict::kNotRun);
  EXPECT_EQ(back->rungs[0].parameters["pass_fraction"], 0.9);
  EXPECT_TRUE(back->interrupted);
  EXPECT_EQ(j["rungs"][0]["pairs"][1]["bw_gbps"], nullptr);  // unknown is null, not 0
}

TEST(LadderManifest, CounterSampleRoundTrips) {
  CounterSample s;
  s.member = "n1";
  s.rung = "L3";
  s.phase = "before";
  s.time_unix = 5.5;
  s.values["mlx5_0/1"]["port_xmit_data"] = 1ull << 40;
  s.values["eth0"]["rx_prio3_pause"] = 7;
  nlohmann::json j = s;
  auto back = j.get<CounterSample>();
  EXPECT_EQ(nlohmann::json(back), j);
  EXPECT_EQ(back.values["mlx5_0/1"]["port_xmit_data"], 1ull << 40);
}

TEST(LadderManifest, ACounterSampleWithAValueNoCounterHoldsIsRefused) {
  // Found by the counter_samples fuzz target.
  auto j = nlohmann::json::parse(R"({"member": "m", "values": {"mlx5_0/1": {"port_rcv_errors": 3.11778e66}}})");
  EXPECT_THROW((void)j.get<model::CounterSample>(), nlohmann::json::exception);
  auto ok = nlohmann::json::parse(R"({"member": "m", "values": {"mlx5_0/1": {"port_rcv_errors": 7}}})");
  EXPECT_EQ(ok.get<model::CounterSample>().values["mlx5_0/1"]["port_rcv_errors"], 7u);
}

TEST(LadderManifest, VerdictNames) {
  for (auto v : {RungVerdict::kPass, RungVerdict::kWarn, RungVerdict::kFail, RungVerdict::kNotRun}) {
    EXPECT_EQ(ParseRungVerdict(RungVerdictName(v)), v);
  }
  EXPECT_EQ(RungVerdictName(RungVerdict::kNotRun), "not_run");
  EXPECT_FALSE(ParseRungVerdict("passed"));
}

TEST(LadderManifest, OlderDocumentsWithFewerKeysLoad) {
  std::string error;
  auto m = ParseLadderManifest(
      R"({"schema": "fabcheck.ladder/v1", "verdict": {"go": true}, "rungs": [{"id": "L1L2.node", "verdict": "pass"}]})",
      &error);
  ASSERT_TRUE(m) << error;
  EXPECT_TRUE(m->verdict.go);
  EXPECT_EQ(m->rungs[0].verdict, RungVerdict::kPass);
  EXPECT_TRUE(m->members.empty());
}

TEST(LadderManifest, RefusesOtherSchemasAndGarbageNamingTheField) {
  std::string error;
  EXPECT_FALSE(ParseLadderManifest("not json", &error));
  EXPECT_NE(error.find("not valid JSON"), std::string::npos);
  EXPECT_FALSE(ParseLadderManifest("[1]", &error));
  EXPECT_NE(error.find("not a JSON object"), std::string::npos);
  EXPECT_FALSE(ParseLadderManifest(R"({"schema": "fabcheck.sweep/v1"})", &error));
  EXPECT_NE(error.find("fabcheck.sweep/v1"), std::string::npos);
  EXPECT_FALSE(ParseLadderManifest(R"({"verdict": {"go": true}})", &error));
  EXPECT_NE(error.find("no \"schema\""), std::string::npos);

  nlohmann::json j = FullManifest();
  j["rungs"][0]["pairs"][0]["bw_gbps"] = "fast";
  EXPECT_FALSE(ParseLadderManifest(j.dump(), &error));
  EXPECT_NE(error.find("bw_gbps"), std::string::npos) << error;
  EXPECT_NE(error.find("rungs"), std::string::npos) << error;

  j = FullManifest();
  j["rungs"][0]["verdict"] = "great";
  EXPECT_FALSE(ParseLadderManifest(j.dump(), &error));
  EXPECT_NE(error.find("unknown verdict"), std::string::npos) << error;

  j = FullManifest();
  j["members"][0].erase("id");
  EXPECT_FALSE(ParseLadderManifest(j.dump(), &error));
  EXPECT_NE(error.find("missing 'id'"), std::string::npos) << error;

  j = FullManifest();
  j.erase("verdict");
  EXPECT_FALSE(ParseLadderManifest(j.dump(), &error));
  EXPECT_NE(error.find("verdict"), std::string::npos) << error;

  j = FullManifest();
  j["members"] = "n1,n2";
  EXPECT_FALSE(ParseLadderManifest(j.dump(), &error));
  EXPECT_NE(error.find("members"), std::string::npos) << error;
}

}  // namespace
}  // namespace fabcheck::model
