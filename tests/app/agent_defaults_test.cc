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

}  // namespace
