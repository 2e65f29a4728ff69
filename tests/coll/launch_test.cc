// The ranks an agent starts for L4: when one fails the others get SIGTERM,
// and a rank that ignores it used to run on forever (no SIGKILL followed, even
// at the deadline), keeping the agent's one L4 slot busy until it restarted.
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <future>

#include "base/temp_dir.h"
#include "coll/launch.h"

namespace fabcheck::coll {
namespace {

using namespace std::chrono_literals;

TEST(RunLocalRanks, ARankThatIgnoresSigtermIsKilledAfterTheGrace) {
  auto dir = TempDir::Create("fabcheck-launch-test");
  ASSERT_TRUE(dir.ok());
  const std::string pid_file = (*dir)->path() + "/stubborn.pid";
  LaunchSpec spec;
  spec.nprocs = 2;
  spec.executable = "/bin/sh";
  // Local rank 0 fails at once; local rank 1 ignores SIGTERM and would sleep for an hour.
  spec.argv = {"sh", "-c",
               "if [ \"$FABCHECK_LOCAL_RANK\" = 0 ]; then sleep 0.3; exit 3; fi; trap '' TERM; echo $$ > " + pid_file +
                   "; exec sleep 3600"};
  spec.timeout_seconds = 4;
  spec.term_grace_seconds = 1;
  auto run = std::async(std::launch::async, [&] { return RunLocalRanks(spec); });
  const bool ended = run.wait_for(20s) == std::future_status::ready;
  if (!ended) {
    // Unblock the stuck launcher so the test can end.
    std::ifstream in(pid_file);
    pid_t stubborn = 0;
    if (in >> stubborn && stubborn > 0) ::kill(stubborn, SIGKILL);
  }
  ASSERT_TRUE(ended) << "the rank that ignores SIGTERM was never killed";
  auto outcome = run.get();
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  EXPECT_EQ(outcome->exit_codes[0], 3);
  EXPECT_TRUE(outcome->signalled[1]);
  EXPECT_GE(outcome->worst, 3);
}

}  // namespace
}  // namespace fabcheck::coll
