// The logging facade: leveled, subsystem-tagged lines on stderr.
//
// stdout belongs to a command's output; everything diagnostic goes here.
//   LOG_WARN("sys", "cannot read {}: {}", path, status.message());
// prints "fabcheck: warning [sys] cannot read ...". The level comes from
// --log-level or FABCHECK_LOG_LEVEL (error, warn, info, debug, trace).
#pragma once

#include <fmt/format.h>

#include <functional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace fabcheck::log {

enum class Level { kError = 0, kWarn = 1, kInfo = 2, kDebug = 3, kTrace = 4 };

Result<Level> ParseLevel(std::string_view name);
std::string_view LevelName(Level level);

void SetLevel(Level level);
Level GetLevel();
inline bool Enabled(Level level) { return static_cast<int>(level) <= static_cast<int>(GetLevel()); }

// Where lines go. The default writes to stderr; tests install a capture.
using Sink = std::function<void(Level, std::string_view subsystem, std::string_view message)>;
// Installs `sink` (an empty function restores stderr) and returns the previous one.
Sink SetSink(Sink sink);

void Write(Level level, std::string_view subsystem, std::string_view message);

template <typename... Args>
void Log(Level level, std::string_view subsystem, fmt::format_string<Args...> format, Args&&... args) {
  if (!Enabled(level)) return;
  Write(level, subsystem, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace fabcheck::log

#define LOG_ERROR(subsystem, ...) ::fabcheck::log::Log(::fabcheck::log::Level::kError, subsystem, __VA_ARGS__)
#define LOG_WARN(subsystem, ...) ::fabcheck::log::Log(::fabcheck::log::Level::kWarn, subsystem, __VA_ARGS__)
#define LOG_INFO(subsystem, ...) ::fabcheck::log::Log(::fabcheck::log::Level::kInfo, subsystem, __VA_ARGS__)
#define LOG_DEBUG(subsystem, ...) ::fabcheck::log::Log(::fabcheck::log::Level::kDebug, subsystem, __VA_ARGS__)
#define LOG_TRACE(subsystem, ...) ::fabcheck::log::Log(::fabcheck::log::Level::kTrace, subsystem, __VA_ARGS__)
