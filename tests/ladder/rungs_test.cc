// Rung selection, the stop rule and the go / no-go verdict.
#include "ladder/rungs.h"

#include <gtest/gtest.h>

namespace fabcheck::ladder {
namespace {

using V = std::vector<std::string>;

TEST(RungSelection, LevelsRangesAndIds) {
  EXPECT_EQ(*ParseRungSelection("all"), AllRungs());
  EXPECT_EQ(*ParseRungSelection("L1-L3"), (V{"L1L2.node", "L1L2.cluster", "L2.path", "L3"}));
  EXPECT_EQ(*ParseRungSelection("L1"), (V{"L1L2.node", "L1L2.cluster"}));
  EXPECT_EQ(*ParseRungSelection("L2"), (V{"L1L2.node", "L1L2.cluster", "L2.path"}));
  EXPECT_EQ(*ParseRungSelection("L3"), (V{"L3"}));
  EXPECT_EQ(*ParseRungSelection("L3-L4"), (V{"L3", "L4"}));
  // IDs in any order come back in ladder order, without duplicates.
  EXPECT_EQ(*ParseRungSelection("L3,L1L2.node,L3"), (V{"L1L2.node", "L3"}));
  EXPECT_EQ(*ParseRungSelection("l1-l2"), (V{"L1L2.node", "L1L2.cluster", "L2.path"}));
}

TEST(RungSelection, RefusesWhatItDoesNotKnow) {
  for (const char* bad : {"", ",", "L5", "L3-L1", "L0-L2", "L1-", "fast", "L1L2"}) {
    auto r = ParseRungSelection(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_NE(r.status().message().find("valid:"), std::string::npos) << r.status().message();
    }
  }
}

model::RungResult Rung(const std::string& id, model::RungVerdict v, V members, V passed, std::string reason = "") {
  model::RungResult r;
  r.id = id;
  r.verdict = v;
  r.members = members;
  r.members_passed = passed;
  r.reason = reason;
  return r;
}

TEST(StopRule, AFailureStopsUnlessKeepGoingAndKeepGoingDropsTheFailed) {
  auto r = Rung("L1L2.node", model::RungVerdict::kFail, {"a", "b", "c"}, {"a", "c"});
  auto stop = DecideStop(r, {"a", "b", "c"}, /*keep_going=*/false);
  EXPECT_TRUE(stop.stop);
  EXPECT_EQ(stop.dropped, V{"b"});
  auto go_on = DecideStop(r, {"a", "b", "c"}, /*keep_going=*/true);
  EXPECT_FALSE(go_on.stop);
  EXPECT_EQ(go_on.next_members, (V{"a", "c"}));
  EXPECT_EQ(go_on.dropped, V{"b"});
}

TEST(StopRule, NobodyPassedStopsEvenWithKeepGoing) {
  auto r = Rung("L3", model::RungVerdict::kFail, {"a", "b"}, {});
  auto d = DecideStop(r, {"a", "b"}, /*keep_going=*/true);
  EXPECT_TRUE(d.stop);
  EXPECT_EQ(d.dropped, (V{"a", "b"}));
}

TEST(StopRule, NotRunPassesMembersOnAndWarningsClimb) {
  auto not_run = Rung("L4", model::RungVerdict::kNotRun, {"a", "b"}, {});
  auto d = DecideStop(not_run, {"a", "b"}, false);
  EXPECT_FALSE(d.stop);
  EXPECT_EQ(d.next_members, (V{"a", "b"}));
  auto warn = Rung("L1L2.cluster", model::RungVerdict::kWarn, {"a", "b"}, {"a", "b"});
  EXPECT_FALSE(DecideStop(warn, {"a", "b"}, false).stop);
}

TEST(Verdict, GoOnlyWhenEverySelectedRungRanAndPassed) {
  V selected = {"L1L2.node", "L1L2.cluster", "L2.path", "L3"};
  std::vector<model::RungResult> rungs = {Rung("L1L2.node", model::RungVerdict::kPass, {"a"}, {"a"}),
                                          Rung("L1L2.cluster", model::RungVerdict::kWarn, {"a"}, {"a"}),
                                          Rung("L2.path", model::RungVerdict::kPass, {"a"}, {"a"}),
                                          Rung("L3", model::RungVerdict::kPass, {"a"}, {"a"}),
                                          Rung("L4", model::RungVerdict::kNotRun, {}, {}, "not asked for (--rungs)")};
  rungs[3].parameters = {{"rdma_tested", true}};
  auto v = ComputeVerdict(rungs, selected, false);
  EXPECT_TRUE(v.go);
  EXPECT_EQ(v.exit_code, 1);  // go with warnings
  EXPECT_EQ(v.not_run, V{"L4"});
  EXPECT_NE(v.summary.find("GO with warnings"), std::string::npos) << v.summary;

  // A selected rung that did not run is not a pass.
  auto blocked = ComputeVerdict(rungs, {"L1L2.node", "L1L2.cluster", "L2.path", "L3", "L4"}, false);
  EXPECT_FALSE(blocked.go);
  EXPECT_EQ(blocked.exit_code, 2);
  EXPECT_NE(blocked.summary.find("L4 not run"), std::string::npos) << blocked.summary;

  // L3 over TCP only never makes a go.
  rungs[3].verdict = model::RungVerdict::kWarn;
  rungs[3].parameters = {{"rdma_tested", false}};
  auto tcp = ComputeVerdict(rungs, selected, false);
  EXPECT_FALSE(tcp.go);
  EXPECT_NE(tcp.summary.find("RDMA not tested"), std::string::npos) << tcp.summary;

  // The first failing rung is named; an interruption is never a go.
  rungs[3].parameters = {{"rdma_tested", true}};
  rungs[2].verdict = model::RungVerdict::kFail;
  rungs[2].reason = "MTU hole";
  auto fail = ComputeVerdict(rungs, selected, false);
  EXPECT_FALSE(fail.go);
  EXPECT_EQ(fail.first_failing_rung, "L2.path");
  EXPECT_EQ(fail.exit_code, 2);
  rungs[2].verdict = model::RungVerdict::kPass;
  auto interrupted = ComputeVerdict(rungs, selected, true);
  EXPECT_FALSE(interrupted.go);
  EXPECT_EQ(interrupted.exit_code, 3);

  // Nothing ran: could not run.
  std::vector<model::RungResult> none = {Rung("L3", model::RungVerdict::kNotRun, {}, {}, "needs two members")};
  auto empty = ComputeVerdict(none, {"L3"}, false);
  EXPECT_FALSE(empty.go);
  EXPECT_EQ(empty.exit_code, 2);
}

}  // namespace
}  // namespace fabcheck::ladder
