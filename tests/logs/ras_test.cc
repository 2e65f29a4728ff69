// NCCL's RAS report (ncclras text), written from NCCL 2.30's format strings
// (src/ras/client_support.cc): the summary, dead and missing processes, the
// ranks an incomplete communicator misses.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "logs/nccl_ras.h"

namespace fabcheck::logs {
namespace {

std::string Sample() {
  std::ifstream in(std::string(FABCHECK_TESTDATA_DIR) + "/nccl-logs/ras/ncclras-2.30-dead-process.txt");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(NcclRas, RecognisedByItsHead) {
  EXPECT_TRUE(LooksLikeRasText(Sample()));
  EXPECT_FALSE(LooksLikeRasText("node-a:1:1 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n"));
}

TEST(NcclRas, SummaryDeadProcessAndMissingRank) {
  RasReport r = ParseRasText(Sample());
  EXPECT_EQ(r.nccl_version, "2.30.7+cuda13.0");
  EXPECT_EQ(r.nodes, 2);
  EXPECT_EQ(r.processes, 16);
  EXPECT_EQ(r.gpus, 16);
  ASSERT_EQ(r.unreachable.size(), 1u);  // the network section's "missing process" is the same one, not repeated
  EXPECT_EQ(r.unreachable[0].state, "dead");
  EXPECT_EQ(r.unreachable[0].pid, 48213);
  EXPECT_EQ(r.unreachable[0].node, "10.10.1.12");
  EXPECT_EQ(r.unreachable[0].gpus, "5");
  ASSERT_EQ(r.missing_ranks.size(), 1u);
  EXPECT_EQ(r.missing_ranks[0].rank, 13);
  EXPECT_EQ(r.missing_ranks[0].comm, "#0-0 (9b2c4e1f00a7d361)");
  EXPECT_EQ(r.missing_ranks[0].pid, 48213);
  EXPECT_EQ(r.timeouts, 2);
}

TEST(NcclRas, IncompleteErrorsAndUnknownRanks) {
  RasReport r = ParseRasText(
      "Errors\n======\n\nINCOMPLETE\n  Missing communicator data from 2 job processes\n"
      "  Process 11 on node gpu-7 managing GPUs 0,1\n  [could not find information on 1 process]\n\n"
      "#1-0 (00000000000000ab) INCOMPLETE\n  Missing communicator data from 1 rank\n"
      "  Rank 4 -- [process information not found]\n\n"
      "#2-0 (00000000000000cd) ERROR\n  Asynchronous errors on 2 ranks\n\n");
  ASSERT_EQ(r.unreachable.size(), 1u);
  EXPECT_EQ(r.unreachable[0].state, "missing");
  EXPECT_EQ(r.unreachable[0].gpus, "0,1");
  ASSERT_EQ(r.missing_ranks.size(), 1u);
  EXPECT_EQ(r.missing_ranks[0].node, "");
  ASSERT_EQ(r.comm_errors.size(), 1u);
  EXPECT_NE(r.comm_errors[0].find("Asynchronous errors on 2 ranks"), std::string::npos);
}

}  // namespace
}  // namespace fabcheck::logs
