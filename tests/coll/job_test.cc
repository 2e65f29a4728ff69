// The parts of a coll job that need no GPU: the ranks' command line and the
// exit code of a report.
#include "coll/job.h"

#include <gtest/gtest.h>

namespace fabcheck::coll {
namespace {

TEST(RankArgv, EveryOptionReachesTheRanksButTheLaunchersOwn) {
  std::vector<std::string> argv = {"fabcheck", "--log-level", "info", "coll", "--op", "all", "--nprocs", "8",
                                   "--gpus=0-3", "--check", "--token-file", "/t", "--coordinator", "h:1",
                                   "--rendezvous=tcp:h:2", "--world", "8", "--sizes", "1M", "--json"};
  EXPECT_EQ(RankArgv(argv), (std::vector<std::string>{"fabcheck", "--log-level", "info", "coll", "--op", "all",
                                                      "--check", "--sizes", "1M", "--json"}));
}

TEST(ExitCodeOf, WorstFindingDecides) {
  model::CollReport report;
  EXPECT_EQ(ExitCodeOf(report), 0);
  model::Finding warn;
  warn.severity = model::Severity::kWarn;
  report.findings.push_back(warn);
  EXPECT_EQ(ExitCodeOf(report), 1);
  model::Finding fail;
  fail.severity = model::Severity::kFail;
  report.findings.push_back(fail);
  EXPECT_EQ(ExitCodeOf(report), 2);
}

}  // namespace
}  // namespace fabcheck::coll
