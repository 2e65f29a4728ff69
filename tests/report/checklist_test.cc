// Every go-live checklist item on the example cluster: the faults planted in
// the current run fail the items they belong to (naming the member), the
// healthy baseline run passes what a host can observe, and missing evidence
// turns an item unknown, never pass.
#include <gtest/gtest.h>

#include <algorithm>

#include "example_fixture.h"
#include "report/checklist.h"
#include "report/golive.h"

namespace fabcheck::report {
namespace {

using model::ChecklistStatus;
using testing::Baseline;
using testing::Current;

bool Names(const model::ChecklistItem& item, const std::string& member) {
  return std::find(item.members.begin(), item.members.end(), member) != item.members.end();
}

bool Mentions(const model::ChecklistItem& item, const std::string& text) {
  return std::any_of(item.evidence.begin(), item.evidence.end(),
                     [&](const std::string& e) { return e.find(text) != std::string::npos; });
}

model::RungResult* Rung(BundleEvidence& e, const std::string& id) {
  for (auto& r : e.manifest.rungs) {
    if (r.id == id) return &r;
  }
  return nullptr;
}

TEST(Checklist, TenItemsInTheSeedsOrder) {
  auto items = EvaluateChecklist(Current());
  ASSERT_EQ(items.size(), 10u);
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(items[i].number, i + 1);
    EXPECT_FALSE(items[i].title.empty());
    EXPECT_FALSE(items[i].summary.empty()) << items[i].id;
  }
  EXPECT_EQ(items[5].title, "Confirmed that NCCL actually uses the expected HCA, interface, and GPUDirect path.");
}

TEST(Checklist, FabricChoiceIsManualWithTheObservedFabric) {
  auto item = CheckFabricChoice(Current());
  EXPECT_EQ(item.status, ChecklistStatus::kManual);
  EXPECT_TRUE(Mentions(item, "RoCE (Ethernet link layer): 64 ports on 8 members")) << item.evidence[0];
  EXPECT_FALSE(item.record.empty());
  BundleEvidence none = Current();
  none.inventories.clear();
  EXPECT_EQ(CheckFabricChoice(none).status, ChecklistStatus::kManual);
  EXPECT_NE(CheckFabricChoice(none).summary.find("no inventory"), std::string::npos);
}

TEST(Checklist, TopologyRecordsFailOnThePcieDowngrade) {
  auto item = CheckTopologyRecords(Current());
  EXPECT_EQ(item.status, ChecklistStatus::kFail);
  EXPECT_TRUE(Names(item, "dgx-03"));
  EXPECT_FALSE(Names(item, "dgx-01"));
  EXPECT_TRUE(Mentions(item, "pcie.downgraded"));
  EXPECT_FALSE(item.remedy.empty());
  EXPECT_EQ(CheckTopologyRecords(Baseline()).status, ChecklistStatus::kPass);
  // A member without its rack, or without its inventory, leaves the record incomplete.
  BundleEvidence no_rack = Baseline();
  no_rack.manifest.members[1].rack.clear();
  EXPECT_EQ(CheckTopologyRecords(no_rack).status, ChecklistStatus::kUnknown);
  BundleEvidence no_inventory = Baseline();
  no_inventory.inventories.erase("dgx-04");
  no_inventory.doctors.erase("dgx-04");
  auto missing = CheckTopologyRecords(no_inventory);
  EXPECT_EQ(missing.status, ChecklistStatus::kUnknown);
  EXPECT_TRUE(Names(missing, "dgx-04"));
  // Without the doctor's judgement, a NIC link below its maximum in the inventory still fails.
  BundleEvidence inventory_only = Current();
  inventory_only.doctors.clear();
  inventory_only.manifest.rungs.clear();
  auto raw = CheckTopologyRecords(inventory_only);
  EXPECT_EQ(raw.status, ChecklistStatus::kFail);
  EXPECT_TRUE(Names(raw, "dgx-03"));
}

TEST(Checklist, NetworkIsolationJudgesTheHostSide) {
  auto item = CheckNetworkIsolation(Baseline());
  EXPECT_EQ(item.status, ChecklistStatus::kManual) << item.summary;
  EXPECT_FALSE(item.record.empty());
  BundleEvidence shared = Baseline();
  auto& m = shared.manifest.members[2];
  m.data_addresses[0] = m.control.substr(0, m.control.find(':'));
  auto bad = CheckNetworkIsolation(shared);
  EXPECT_EQ(bad.status, ChecklistStatus::kFail);
  EXPECT_TRUE(Names(bad, m.id));
  BundleEvidence same_subnet = Baseline();
  auto& s = same_subnet.manifest.members[0];
  auto& inv = same_subnet.inventories[s.id];
  for (auto& nd : inv.netdevs) {
    for (auto& a : nd.addresses) {
      if (a.address == s.data_addresses[3]) a.address = "192.168.1.77", a.prefix_len = 24;
    }
  }
  s.data_addresses[3] = "192.168.1.77";
  EXPECT_EQ(CheckNetworkIsolation(same_subnet).status, ChecklistStatus::kFail);
  BundleEvidence none = Baseline();
  for (auto& mem : none.manifest.members) mem.data_addresses.clear();
  EXPECT_EQ(CheckNetworkIsolation(none).status, ChecklistStatus::kUnknown);
}

TEST(Checklist, VersionsPinnedFailsOnDrift) {
  EXPECT_EQ(CheckVersionsPinned(Baseline()).status, ChecklistStatus::kManual);
  BundleEvidence drift = Baseline();
  for (auto& c : Rung(drift, "L1L2.cluster")->consistency) {
    if (c.setting == "firmware") {
      c.values["dgx-06"] = "28.36.1010";
      c.outliers = {"dgx-06"};
    }
  }
  auto item = CheckVersionsPinned(drift);
  EXPECT_EQ(item.status, ChecklistStatus::kFail);
  EXPECT_TRUE(Names(item, "dgx-06"));
  EXPECT_TRUE(Mentions(item, "28.36.1010"));
  BundleEvidence none = Baseline();
  none.manifest.rungs.clear();
  auto unknown = CheckVersionsPinned(none);
  EXPECT_EQ(unknown.status, ChecklistStatus::kManual);
  EXPECT_NE(unknown.summary.find("no L1L2.cluster"), std::string::npos);
}

TEST(Checklist, RoceConsistencyFailsOnTheMtuOutlierAndPathHoles) {
  auto item = CheckRoceConsistency(Current());
  EXPECT_EQ(item.status, ChecklistStatus::kFail);
  EXPECT_TRUE(Names(item, "dgx-05"));
  EXPECT_TRUE(Mentions(item, "netdev_mtu = 4200 where the majority has 9000"));
  EXPECT_EQ(CheckRoceConsistency(Baseline()).status, ChecklistStatus::kPass);
  BundleEvidence hole = Baseline();
  auto& pair = Rung(hole, "L2.path")->pairs[3];
  pair.path_mtu = 1500;
  auto holed = CheckRoceConsistency(hole);
  EXPECT_EQ(holed.status, ChecklistStatus::kFail);
  EXPECT_TRUE(Names(holed, pair.a));
  EXPECT_TRUE(Mentions(holed, "path MTU 1500 below the interface MTU 9000"));
  BundleEvidence none = Baseline();
  none.manifest.rungs.clear();
  none.doctors.clear();
  EXPECT_EQ(CheckRoceConsistency(none).status, ChecklistStatus::kUnknown);
}

TEST(Checklist, NcclPathFailsOnTheTcpFallback) {
  auto item = CheckNcclPath(Current());
  EXPECT_EQ(item.status, ChecklistStatus::kFail);
  EXPECT_TRUE(Names(item, "dgx-06"));
  EXPECT_EQ(item.members.size(), 1u);
  EXPECT_TRUE(Mentions(item, "NET/Socket: NCCL fell back to TCP"));
  auto good = CheckNcclPath(Baseline());
  EXPECT_EQ(good.status, ChecklistStatus::kPass) << good.summary;
  // L4 not run: unknown with how to get the evidence, never a pass.
  BundleEvidence not_run = Baseline();
  auto* l4 = Rung(not_run, "L4");
  l4->verdict = model::RungVerdict::kNotRun;
  l4->reason = "not run: no GPU on the members";
  l4->nccl.clear();
  auto unknown = CheckNcclPath(not_run);
  EXPECT_EQ(unknown.status, ChecklistStatus::kUnknown);
  EXPECT_NE(unknown.summary.find("no GPU"), std::string::npos);
  EXPECT_FALSE(unknown.record.empty());
  // An HCA that is not the node's, GPUDirect off, a doctor failure: each fails.
  BundleEvidence wrong_hca = Baseline();
  Rung(wrong_hca, "L4")->nccl[0].hcas = {"mlx5_9:1"};
  EXPECT_EQ(CheckNcclPath(wrong_hca).status, ChecklistStatus::kFail);
  BundleEvidence no_gdr = Baseline();
  Rung(no_gdr, "L4")->nccl[1].gpudirect = false;
  Rung(no_gdr, "L4")->nccl[1].transports = {"NET/IB"};
  auto staged = CheckNcclPath(no_gdr);
  EXPECT_EQ(staged.status, ChecklistStatus::kFail);
  EXPECT_TRUE(Mentions(staged, "without GDRDMA"));
  BundleEvidence no_peermem = not_run;
  model::Finding f;
  f.id = "gdr.no-peer-memory";
  f.severity = model::Severity::kFail;
  f.object = "node";
  f.message = "neither nvidia_peermem nor dma-buf";
  no_peermem.doctors["dgx-02"].findings.push_back(f);
  auto doctor = CheckNcclPath(no_peermem);
  EXPECT_EQ(doctor.status, ChecklistStatus::kFail);
  EXPECT_TRUE(Names(doctor, "dgx-02"));
}

model::BaselineGroup* Group(BundleEvidence& e, const std::string& rung, const std::string& scope) {
  for (auto& g : Rung(e, rung)->baselines) {
    if (g.scope == scope) return &g;
  }
  return nullptr;
}

TEST(Checklist, BaselinesReadTheLaddersGroups) {
  // The healthy run: a passing group in every scope, perf and NCCL, with the GPUDirect A/B.
  auto healthy = CheckBaselines(Baseline());
  EXPECT_EQ(healthy.status, ChecklistStatus::kPass) << healthy.summary;
  EXPECT_TRUE(Mentions(healthy, "perf single-node (dgx-01): pass: dgx-01 -> dgx-01 391.4 Gb/s"));
  EXPECT_TRUE(Mentions(healthy, "perf cross-rack (dgx-01, dgx-05): pass"));
  EXPECT_TRUE(Mentions(healthy, "NCCL gdr-off (dgx-01, dgx-02) [NCCL_NET_GDR_LEVEL=LOC]: pass"));
  EXPECT_TRUE(Mentions(healthy, "GPUDirect A/B all_reduce: 352.0 GB/s with GPUDirect RDMA, 214.7 GB/s without"));
  EXPECT_TRUE(healthy.record.empty());

  // The current run: L3 and L4 failed, so the groups (on the members that
  // passed) are no baseline of the cluster; the failing pair's ends are named.
  auto item = CheckBaselines(Current());
  EXPECT_EQ(item.status, ChecklistStatus::kFail);
  EXPECT_TRUE(Names(item, "dgx-02"));
  EXPECT_TRUE(Names(item, "dgx-07"));
  EXPECT_TRUE(Mentions(item, "L3 pair dgx-02 -> dgx-07 rail 1: "));
  EXPECT_NE(item.summary.find("L3 and L4 failed"), std::string::npos) << item.summary;

  // A failing group fails the item, naming its members.
  BundleEvidence slow = Baseline();
  auto* cross = Group(slow, "L3", "cross-rack");
  ASSERT_NE(cross, nullptr);
  cross->verdict = model::RungVerdict::kFail;
  cross->reason = "dgx-01 -> dgx-05 148.2 Gb/s";
  auto failed = CheckBaselines(slow);
  EXPECT_EQ(failed.status, ChecklistStatus::kFail);
  EXPECT_TRUE(Names(failed, "dgx-05"));
  EXPECT_NE(failed.summary.find("baseline groups fail"), std::string::npos) << failed.summary;

  // A scope this cluster cannot form (one rack) does not hold the item back.
  BundleEvidence one_rack = Baseline();
  for (const char* rung : {"L3", "L4"}) {
    auto* g = Group(one_rack, rung, "cross-rack");
    ASSERT_NE(g, nullptr);
    *g = {};
    g->scope = "cross-rack";
    g->applicable = false;
    g->reason = "every member that passed the rung sits in rack r01";
  }
  auto inapplicable = CheckBaselines(one_rack);
  EXPECT_EQ(inapplicable.status, ChecklistStatus::kPass) << inapplicable.summary;
  EXPECT_TRUE(Mentions(inapplicable, "perf cross-rack: not applicable: every member"));

  // Racks unknown (no --topology): the rack groups did not run; unknown, with the fix.
  BundleEvidence no_racks = Baseline();
  for (const char* rung : {"L3", "L4"}) {
    for (const char* scope : {"same-rack", "cross-rack"}) {
      auto* g = Group(no_racks, rung, scope);
      *g = {};
      g->scope = scope;
      g->reason = "no rack is recorded for the members: give `fabcheck ladder --topology FILE` (docs/fabric.md)";
    }
  }
  auto unknown = CheckBaselines(no_racks);
  EXPECT_EQ(unknown.status, ChecklistStatus::kUnknown);
  ASSERT_FALSE(unknown.record.empty());
  EXPECT_NE(unknown.record[0].find("--topology FILE"), std::string::npos) << unknown.record[0];

  // Measured over TCP only (a warning): not an RDMA baseline, so unknown.
  BundleEvidence tcp = Baseline();
  Group(tcp, "L3", "two-nodes")->verdict = model::RungVerdict::kWarn;
  EXPECT_EQ(CheckBaselines(tcp).status, ChecklistStatus::kUnknown);

  // A bundle without groups (--no-baselines, or an older ladder): unknown,
  // sending the user to the ladder that runs them.
  BundleEvidence none = Baseline();
  Rung(none, "L3")->baselines.clear();
  Rung(none, "L4")->baselines.clear();
  auto without = CheckBaselines(none);
  EXPECT_EQ(without.status, ChecklistStatus::kUnknown);
  ASSERT_EQ(without.record.size(), 1u);
  EXPECT_NE(without.record[0].find("fabcheck ladder --topology FILE"), std::string::npos) << without.record[0];
}

TEST(Checklist, ManualItemsSayWhatToRecord) {
  for (const auto& item : {CheckMetricsCorrelation(Current()), CheckRehearsals(Current()), CheckTenantIsolation(Current())}) {
    EXPECT_EQ(item.status, ChecklistStatus::kManual) << item.id;
    EXPECT_GE(item.record.size(), 3u) << item.id;
  }
  EXPECT_TRUE(Mentions(CheckMetricsCorrelation(Current()), "leaf switch recorded for 8 of 8 members"));
  EXPECT_TRUE(Mentions(CheckMetricsCorrelation(Current()), "ports on 2 members"));
}

TEST(GoLive, VerdictCountsRungsAndMembers) {
  ReportOptions options;
  options.fabcheck_version = "test";
  auto r = BuildReport(Current(), options);
  EXPECT_FALSE(r.go);
  EXPECT_EQ(r.first_failing_rung, "L1L2.node");
  EXPECT_EQ(r.counts.pass + r.counts.fail + r.counts.unknown + r.counts.manual, 10);
  EXPECT_EQ(r.counts.fail, 4);  // topology (PCIe), RoCE (MTU), NCCL (TCP), baselines (slow pair)
  EXPECT_EQ(r.exit_code, 2);
  ASSERT_EQ(r.rungs.size(), 5u);
  EXPECT_EQ(r.rungs[0].verdict, "fail");
  EXPECT_EQ(r.rungs[0].members, 8);
  EXPECT_EQ(r.rungs[0].passed, 7);
  ASSERT_EQ(r.members.size(), 8u);
  const auto& dgx03 = r.members[2];
  EXPECT_EQ(dgx03.id, "dgx-03");
  EXPECT_EQ(dgx03.dropped_at, "L1L2.node");
  EXPECT_EQ(dgx03.rung_status, (std::vector<std::string>{"fail", "dropped", "dropped", "dropped", "dropped"}));
  EXPECT_EQ(r.members[4].rung_status[1], "fail");  // dgx-05, the MTU outlier
  EXPECT_EQ(r.members[0].rung_status, (std::vector<std::string>{"pass", "pass", "pass", "pass", "pass"}));
  EXPECT_EQ(r.node_types, std::vector<std::string>{"8xH100 8xCX7-400G RoCE"});
  auto healthy = BuildReport(Baseline(), options);
  EXPECT_TRUE(healthy.go);
  EXPECT_EQ(healthy.counts.fail, 0);
  EXPECT_EQ(healthy.counts.unknown, 0);  // its baseline groups pass in every scope
  EXPECT_EQ(healthy.exit_code, model::ExitCodeOf(healthy.findings, /*strict=*/false));
  EXPECT_NE(healthy.exit_code, 2);
  // An unknown item (here: the same run without its baseline groups) is
  // shown, never a pass, and exits 1 only with --strict (docs/verdicts.md);
  // warnings exit 1 either way.
  BundleEvidence no_groups = Baseline();
  Rung(no_groups, "L3")->baselines.clear();
  Rung(no_groups, "L4")->baselines.clear();
  auto unknown = BuildReport(no_groups, options);
  EXPECT_GT(unknown.counts.unknown, 0);
  EXPECT_EQ(unknown.exit_code, healthy.exit_code);
  options.strict = true;
  EXPECT_EQ(BuildReport(no_groups, options).exit_code, 1);
}

}  // namespace
}  // namespace fabcheck::report
