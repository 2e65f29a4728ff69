// `fabcheck agent`'s secure default: with no token it used to serve every
// route to the whole network on 0.0.0.0 and say nothing. Now, beyond
// loopback, it refuses to start without --token-file unless told
// --insecure-no-token, and warns loudly whenever it serves without a token.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

#include "../telemetry/process_helpers.h"

namespace {

using fabcheck::telemetry::testing::BackgroundProcess;
using fabcheck::telemetry::testing::CommandResult;
using fabcheck::telemetry::testing::FreePort;
using fabcheck::telemetry::testing::HttpGet;
using fabcheck::telemetry::testing::RunCommand;

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string Agent(int port) {
  return std::string(FABCHECK_BINARY) + " agent --perf-port 0 --listen 0.0.0.0:" + std::to_string(port);
}

TEST(AgentDefaults, EveryAddressWithoutATokenIsRefused) {
  const int port = FreePort();
  // `timeout`: an agent that starts anyway serves until killed.
  CommandResult r = RunCommand("timeout 10 " + Agent(port) + " 2>&1");
  EXPECT_EQ(r.exit_code, 64) << "an agent on 0.0.0.0 without a token started (124: still serving)\n" << r.output;
  EXPECT_NE(r.output.find("refusing to serve every route without a token on 0.0.0.0:" + std::to_string(port)),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("--token-file"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--insecure-no-token"), std::string::npos) << r.output;
}

TEST(AgentDefaults, TheInsecureFlagServesWithALoudWarning) {
  const int port = FreePort();
  const std::string log = ::testing::TempDir() + "/insecure-agent.log";
  BackgroundProcess agent;
  ASSERT_TRUE(agent.Start({FABCHECK_BINARY, "agent", "--perf-port", "0", "--listen", "0.0.0.0:" + std::to_string(port),
                           "--insecure-no-token"},
                          log));
  EXPECT_NE(HttpGet(port, "/v1/health", 20), "") << Slurp(log);
  EXPECT_NE(Slurp(log).find("NO TOKEN"), std::string::npos) << Slurp(log);
}

TEST(AgentDefaults, LoopbackWithoutATokenServesAndWarns) {
  const int port = FreePort();
  const std::string log = ::testing::TempDir() + "/loopback-agent.log";
  BackgroundProcess agent;
  ASSERT_TRUE(agent.Start({FABCHECK_BINARY, "agent", "--perf-port", "0", "--listen", "127.0.0.1:" + std::to_string(port)},
                          log));
  EXPECT_NE(HttpGet(port, "/v1/health", 20), "") << Slurp(log);
  EXPECT_NE(Slurp(log).find("NO TOKEN"), std::string::npos) << Slurp(log);
}

// The ranks of an SPMD sweep or ladder each serve an agent (and rank 0 the
// rendezvous) for the whole job: the same policy as the agent's. They used to
// serve on 0.0.0.0 without a token, silently.
TEST(AgentDefaults, SpmdRanksWithoutATokenAreRefusedBeyondLoopback) {
  for (const std::string command : {"sweep", "ladder"}) {
    SCOPED_TRACE(command);
    CommandResult r = RunCommand("timeout 20 env SLURM_PROCID=1 SLURM_NTASKS=2 " + std::string(FABCHECK_BINARY) + " " +
                                 command + " --coordinator 192.0.2.1:18522 --rendezvous-timeout 2s 2>&1");
    EXPECT_EQ(r.exit_code, 64) << r.output;
    EXPECT_NE(r.output.find("refusing to serve this rank's agent and the rendezvous without a token"),
              std::string::npos)
        << r.output;
    // Said in as many words, the rank goes on (and here finds no rank 0: exit 3).
    CommandResult insecure =
        RunCommand("timeout 20 env SLURM_PROCID=1 SLURM_NTASKS=2 " + std::string(FABCHECK_BINARY) + " " + command +
                   " --coordinator 192.0.2.1:18522 --rendezvous-timeout 2s --insecure-no-token 2>&1");
    EXPECT_EQ(insecure.exit_code, 3) << insecure.output;
    // A job on one host (agent and coordinator on loopback) needs no token.
    CommandResult local =
        RunCommand("timeout 20 env SLURM_PROCID=1 SLURM_NTASKS=2 " + std::string(FABCHECK_BINARY) + " " + command +
                   " --listen 127.0.0.1:0 --coordinator 127.0.0.1:1 --rendezvous-timeout 2s 2>&1");
    EXPECT_EQ(local.exit_code, 3) << local.output;
  }
}

}  // namespace
