// Logs of several jobs given together are judged job by job: each job gets
// its own verdict, no finding cites another job's file, and what a log's
// rules say does not change with which other jobs' logs are passed beside it.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "diagnose/engine.h"
#include "diagnose/inputs.h"
#include "diagnose/jobs.h"

namespace fabcheck::diagnose {
namespace {

std::string Log(const std::string& name) { return std::string(FABCHECK_TESTDATA_DIR) + "/nccl-logs/" + name; }

model::DiagnoseReport DiagnoseFiles(const std::vector<std::string>& files) {
  auto evidence = LoadEvidence(files, {});
  EXPECT_TRUE(evidence.ok()) << evidence.status().message();
  return evidence.ok() ? Diagnose(*evidence) : model::DiagnoseReport{};
}

// (rule, severity) of the log rules' findings, with the job prefix removed.
std::multiset<std::pair<std::string, int>> LogVerdicts(const model::DiagnoseReport& r, const std::string& job) {
  std::multiset<std::pair<std::string, int>> out;
  for (const auto& d : r.findings) {
    if (d.group != "NCCL" && d.group != "input") continue;
    if (!job.empty() && d.object.rfind(job, 0) != 0) continue;
    out.insert({d.rule, static_cast<int>(d.severity)});
  }
  return out;
}

TEST(Jobs, TwoJobsAreJudgedApartWithTheirOwnVerdicts) {
  const std::string socket = Log("nccl-2.23-socket-fallback.log");  // fails: sockets between nodes
  const std::string gdr = Log("nccl-2.28-gdr-disabled.log");        // warns: GPUDirect off
  model::DiagnoseReport both = DiagnoseFiles({socket, gdr});
  ASSERT_EQ(both.jobs.size(), 2u) << "the two logs name different commIds";
  std::map<std::string, const model::DiagnoseJob*> by_file;
  for (const auto& j : both.jobs) {
    ASSERT_EQ(j.files.size(), 1u);
    by_file[j.files[0]] = &j;
  }
  ASSERT_TRUE(by_file.count(socket) && by_file.count(gdr));
  EXPECT_EQ(by_file[socket]->exit_code, DiagnoseFiles({socket}).exit_code);
  EXPECT_EQ(by_file[gdr]->exit_code, DiagnoseFiles({gdr}).exit_code);
  EXPECT_EQ(both.exit_code, 2);

  // Each log's findings are the ones it gets alone: same rules, same severities.
  EXPECT_EQ(LogVerdicts(both, by_file[socket]->id), LogVerdicts(DiagnoseFiles({socket}), ""));
  EXPECT_EQ(LogVerdicts(both, by_file[gdr]->id), LogVerdicts(DiagnoseFiles({gdr}), ""));

  // No finding of one job cites the other job's file.
  for (const auto& d : both.findings) {
    if (d.group != "NCCL") continue;
    const bool of_socket = d.object.rfind(by_file[socket]->id, 0) == 0;
    const std::string other = of_socket ? "gdr-disabled" : "socket-fallback";
    for (const auto& e : d.evidence) EXPECT_EQ(e.find(other), std::string::npos) << d.rule << ": " << e;
  }
}

TEST(Jobs, RanksOfOneJobStayOneJob) {
  // Two processes of one job: one commId, so one job and no split.
  auto evidence = LoadEvidence({Log("h200-2.28.3-process-per-gpu.rank0.log"), Log("h200-2.28.3-process-per-gpu.rank1.log")}, {});
  ASSERT_TRUE(evidence.ok());
  EXPECT_TRUE(SplitLogsByJob(*evidence).empty());
  EXPECT_TRUE(Diagnose(*evidence).jobs.empty());
}

}  // namespace
}  // namespace fabcheck::diagnose
