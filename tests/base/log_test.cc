#include "base/log.h"

#include <gtest/gtest.h>

namespace fabcheck::log {
namespace {

TEST(LogTest, LevelsFilterAndSinkCaptures) {
  std::vector<std::string> lines;
  Sink previous = SetSink([&](Level level, std::string_view subsystem, std::string_view message) {
    lines.push_back(std::string(LevelName(level)) + "/" + std::string(subsystem) + "/" + std::string(message));
  });
  Level saved = GetLevel();
  SetLevel(Level::kWarn);
  LOG_WARN("sys", "cannot read {}", "/sys/x");
  LOG_INFO("sys", "hidden {}", 1);
  SetLevel(saved);
  SetSink(previous);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "warning/sys/cannot read /sys/x");
}

// A peer's text inside a log message (a refusal reason, a hostname) stays on
// its one line and never carries an ESC sequence to the terminal.
TEST(LogTest, ForeignTextCannotForgeLinesOrReachTheTerminal) {
  std::vector<std::string> lines;
  Sink previous = SetSink([&](Level, std::string_view, std::string_view message) { lines.emplace_back(message); });
  LOG_ERROR("perf", "refused: {}", "busy\nfabcheck: error [perf] client 10.0.0.9 authenticated\x1b[2K\r");
  SetSink(previous);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].find('\n'), std::string::npos) << lines[0];
  EXPECT_EQ(lines[0].find('\r'), std::string::npos) << lines[0];
  EXPECT_EQ(lines[0].find('\x1b'), std::string::npos) << lines[0];
  EXPECT_EQ(lines[0], "refused: busy\\x0afabcheck: error [perf] client 10.0.0.9 authenticated\\x1b[2K\\x0d");
}

TEST(LogTest, ParseLevel) {
  EXPECT_EQ(*ParseLevel("debug"), Level::kDebug);
  EXPECT_FALSE(ParseLevel("loud").ok());
}

}  // namespace
}  // namespace fabcheck::log
