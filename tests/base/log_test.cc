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

TEST(LogTest, ParseLevel) {
  EXPECT_EQ(*ParseLevel("debug"), Level::kDebug);
  EXPECT_FALSE(ParseLevel("loud").ok());
}

}  // namespace
}  // namespace fabcheck::log
