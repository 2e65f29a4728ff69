// The parts of a coll job that need no GPU: the ranks' command line and the
// exit code of a report.
#include "coll/job.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "coll/coll.h"

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

namespace fabcheck::coll {
namespace {

// The user's own NCCL_DEBUG_FILE with %h/%p: the files it names are this
// run's NCCL log, not "no log, transport unknown" (they used to be lost).
TEST(NcclLogFiles, TheUsersDebugFilePatternIsFollowed) {
  std::string dir = ::testing::TempDir() + "/fc-nccl-debug-file-" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/fabcheck-logs");
  std::ofstream(dir + "/job.gpu01.4242.log") << "gpu01:4242:4242 [0] NCCL INFO Bootstrap : Using eth0\n";
  std::ofstream(dir + "/job.gpu01.notapid.log") << "not this pattern\n";
  std::ofstream(dir + "/other.gpu01.4242.log") << "another prefix\n";
  const char* saved = std::getenv("NCCL_DEBUG_FILE");
  std::string previous = saved ? saved : "";
  ::setenv("NCCL_DEBUG_FILE", (dir + "/job.%h.%p.log").c_str(), 1);
  auto files = NcclLogFiles(dir + "/fabcheck-logs");
  EXPECT_EQ(files, std::vector<std::string>{dir + "/job.gpu01.4242.log"});
  // Written before the run started: an older run's log, not this one's.
  auto later = std::filesystem::file_time_type::clock::now() + std::chrono::hours(1);
  EXPECT_TRUE(NcclLogFiles(dir + "/fabcheck-logs", later).empty());
  if (saved) {
    ::setenv("NCCL_DEBUG_FILE", previous.c_str(), 1);
  } else {
    ::unsetenv("NCCL_DEBUG_FILE");
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace fabcheck::coll
