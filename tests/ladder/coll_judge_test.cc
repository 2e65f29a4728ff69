// Rung L4's judgement: rank layout, the NICs' busbw line, each collective's
// verdict, and what NCCL used per member (on real NCCL logs).
#include "ladder/coll_judge.h"

#include <gtest/gtest.h>

#include <fstream>

#include "diagnose/engine.h"
#include "logs/nccl_log.h"

namespace fabcheck::ladder {
namespace {

const std::string kLogs = std::string(FABCHECK_TESTDATA_DIR) + "/nccl-logs/";

model::Inventory NodeWithPorts(std::vector<double> rates, std::string state = "ACTIVE") {
  model::Inventory inv;
  for (size_t i = 0; i < rates.size(); ++i) {
    model::RdmaDevice d;
    d.name = "mlx5_" + std::to_string(i);
    model::RdmaPort p;
    p.state = state;
    p.rate_gbps = rates[i];
    d.ports.push_back(p);
    inv.rdma_devices.push_back(d);
  }
  return inv;
}

// A report as rank 0 prints it (the coll model through its own JSON).
nlohmann::json Report(int nranks, const std::string& op, std::vector<std::pair<uint64_t, double>> rows,
                      int64_t wrong = 0) {
  model::CollReport r;
  r.nranks = nranks;
  model::CollOpResult o;
  o.op = op;
  o.wrong = wrong;
  for (const auto& [bytes, busbw] : rows) {
    model::CollRow row;
    row.size_bytes = bytes;
    row.out_of_place.busbw_gbps = busbw;
    row.in_place.busbw_gbps = busbw;
    o.rows.push_back(row);
  }
  r.results.push_back(o);
  r.expected.busbw_gbps = 400;
  r.expected.basis = "NCCL's ring estimate";
  return r;
}

TEST(CollPlan, ConsecutiveBlocksOneRankPerGpuMembersWithoutGpusLeftOut) {
  auto plan = PlanCollRanks({{"a", 8}, {"b", 0}, {"c", 4}, {"d", 8}});
  ASSERT_EQ(plan.size(), 3u);
  EXPECT_EQ(plan[0].member, "a");
  EXPECT_EQ(plan[0].first_rank, 0);
  EXPECT_EQ(plan[1].member, "c");
  EXPECT_EQ(plan[1].first_rank, 8);
  EXPECT_EQ(plan[2].first_rank, 12);
  EXPECT_EQ(WorldOf(plan), 20);
  EXPECT_EQ(WorldOf({}), 0);
}

TEST(CollExpectation, TheSlowestNodesActivePortsTimesTheLine) {
  auto fast = NodeWithPorts({400, 400, 400, 400, 400, 400, 400, 400});
  auto slow = NodeWithPorts({400, 400, 400, 400, 400, 400, 400, 200});
  auto line = NicExpectation({&fast, &slow}, 0.8);
  ASSERT_TRUE(line.busbw_gbps);
  EXPECT_NEAR(*line.busbw_gbps, 3000.0 / 8 * 0.8, 1e-9);
  EXPECT_NE(line.basis.find("1 x 200 Gb/s + 7 x 400 Gb/s"), std::string::npos) << line.basis;
  EXPECT_NE(line.basis.find("80%"), std::string::npos) << line.basis;
  // A port that is down does not count; a node with no rate known gives no line.
  auto down = NodeWithPorts({400}, "DOWN");
  EXPECT_FALSE(NicExpectation({&fast, &down}, 0.8).busbw_gbps);
  model::Inventory unknown = NodeWithPorts({400});
  unknown.rdma_devices[0].ports[0].rate_gbps.reset();
  EXPECT_FALSE(NicExpectation({&fast, &unknown}, 0.8).busbw_gbps);
  EXPECT_FALSE(NicExpectation({&fast, nullptr}, 0.8).busbw_gbps);
}

TEST(CollVerdict, BusbwBelowTheLineFailsAboveItPasses) {
  CollExpectationLine line{320.0, "8 x 400 Gb/s x 80%"};
  auto low = JudgeCollectives(Report(16, "all_reduce", {{1 << 20, 2.0}, {1ull << 30, 11.5}}), line, true);
  ASSERT_EQ(low.size(), 1u);
  EXPECT_EQ(low[0].verdict, model::RungVerdict::kFail);
  EXPECT_EQ(low[0].max_bytes, 1ull << 30);
  EXPECT_DOUBLE_EQ(low[0].busbw_gbps, 11.5);
  EXPECT_EQ(low[0].sweep.size(), 2u);
  EXPECT_NE(low[0].reason.find("4% of the expected 320.0 GB/s"), std::string::npos) << low[0].reason;
  auto good = JudgeCollectives(Report(16, "all_reduce", {{1ull << 30, 350}}), line, true);
  EXPECT_EQ(good[0].verdict, model::RungVerdict::kPass);
}

TEST(CollVerdict, WrongElementsFailSmallSizesAndOneRankAreNotJudged) {
  CollExpectationLine line{320.0, "x"};
  auto wrong = JudgeCollectives(Report(16, "all_reduce", {{1ull << 30, 350}}, 12), line, true);
  EXPECT_EQ(wrong[0].verdict, model::RungVerdict::kFail);
  EXPECT_NE(wrong[0].reason.find("12 elements wrong"), std::string::npos);
  auto small = JudgeCollectives(Report(16, "all_reduce", {{1 << 20, 1.0}}), line, true);
  EXPECT_EQ(small[0].verdict, model::RungVerdict::kPass);
  EXPECT_NE(small[0].reason.find("latency"), std::string::npos) << small[0].reason;
  auto one = JudgeCollectives(Report(1, "all_reduce", {{1ull << 30, 0}}), line, false);
  EXPECT_EQ(one[0].verdict, model::RungVerdict::kPass);
  EXPECT_NE(one[0].reason.find("one rank"), std::string::npos) << one[0].reason;
}

TEST(CollVerdict, InsideOneNodeNcclsTopologyEstimateIsTheLine) {
  // 8 ranks on one member: the NICs do not bound it; 0.8 x NCCL's 400 GB/s does.
  auto checks = JudgeCollectives(Report(8, "all_reduce", {{1ull << 30, 300}}), {}, false);
  ASSERT_TRUE(checks[0].expected_gbps);
  EXPECT_DOUBLE_EQ(*checks[0].expected_gbps, 320);
  EXPECT_EQ(checks[0].verdict, model::RungVerdict::kFail);
}

TEST(CollVerdict, AMalformedReportFailsSayingSo) {
  nlohmann::json huge_ranks = Report(16, "all_reduce", {{1ull << 30, 350}});
  huge_ranks["nranks"] = 1e30;  // out of an int's range: refused, not cast
  nlohmann::json text_estimate = Report(16, "all_reduce", {{1ull << 30, 350}});
  text_estimate["nranks"] = "sixteen";
  for (const auto& bad : {nlohmann::json::array(), nlohmann::json{{"results", 3}},
                          nlohmann::json{{"results", {{{"op", "all_reduce"}, {"rows", {{{"size_bytes", "x"}}}}}}}},
                          huge_ranks, text_estimate}) {
    auto checks = JudgeCollectives(bad, {}, true);
    ASSERT_EQ(checks.size(), 1u) << bad.dump();
    EXPECT_EQ(checks[0].verdict, model::RungVerdict::kFail);
    EXPECT_NE(checks[0].reason.find("malformed"), std::string::npos) << checks[0].reason;
  }
}

TEST(CollVerdict, ARealReportOfOneH200) {
  // `fabcheck coll --json --op all_reduce,all_gather,alltoall --sizes 1M:1G`
  // on the one-GPU H200 machine (NCCL 2.28.3): one rank, so nothing to judge
  // against a line, but every collective and size is read.
  std::ifstream in(std::string(FABCHECK_TESTDATA_DIR) + "/coll/h200-1gpu-2.28.3.json");
  auto report = nlohmann::json::parse(in);
  auto checks = JudgeCollectives(report, {}, false);
  ASSERT_EQ(checks.size(), 3u);
  EXPECT_EQ(checks[0].op, "all_reduce");
  EXPECT_EQ(checks[2].op, "alltoall");
  for (const auto& c : checks) {
    EXPECT_EQ(c.verdict, model::RungVerdict::kPass) << c.op << ": " << c.reason;
    EXPECT_EQ(c.sweep.size(), 11u) << c.op;
    EXPECT_EQ(c.max_bytes, 1ull << 30) << c.op;
  }
}

model::NcclTransportCheck CheckLog(const std::string& file, bool multi_node) {
  auto summary = logs::ParseNcclLogFiles({kLogs + file});
  EXPECT_TRUE(summary.ok()) << summary.status().message();
  return CheckNcclTransport("m", *summary, diagnose::NcclLogFindings(*summary), multi_node);
}

TEST(CollNccl, ASocketFallbackBetweenNodesFails) {
  auto n = CheckLog("nccl-2.23-socket-fallback.log", true);
  EXPECT_EQ(n.verdict, model::RungVerdict::kFail);
  EXPECT_NE(n.reason.find("NET/Socket"), std::string::npos) << n.reason;
}

TEST(CollNccl, NetIbWithGpuDirectPassesAndNamesTheHcas) {
  auto n = CheckLog("nccl-2.18-ib-gdr.log", true);
  EXPECT_EQ(n.verdict, model::RungVerdict::kPass) << n.reason;
  EXPECT_TRUE(n.gpudirect);
  EXPECT_FALSE(n.hcas.empty());
  EXPECT_TRUE(std::any_of(n.transports.begin(), n.transports.end(),
                          [](const std::string& t) { return t.rfind("NET/IB", 0) == 0; }));
}

TEST(CollNccl, GpuDirectOffWarnsAndNoLogIsNotRun) {
  auto n = CheckLog("nccl-2.28-gdr-disabled.log", true);
  EXPECT_NE(n.verdict, model::RungVerdict::kPass) << n.reason;
  auto none = CheckNcclTransport("m", model::NcclLogSummary{}, {}, true);
  EXPECT_EQ(none.verdict, model::RungVerdict::kNotRun);
}

TEST(CollNccl, OneNodeOnNvlinkPasses) {
  auto n = CheckLog("h200-2.28.3-single-process.log", false);
  EXPECT_EQ(n.verdict, model::RungVerdict::kPass) << n.reason;
}

}  // namespace
}  // namespace fabcheck::ladder
