#include "base/log.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "base/terminal_text.h"

namespace fabcheck::log {
namespace {

Level InitialLevel() {
  if (const char* env = std::getenv("FABCHECK_LOG_LEVEL")) {
    if (auto level = ParseLevel(env); level.ok()) return *level;
  }
  return Level::kWarn;
}

std::atomic<int>& LevelStore() {
  static std::atomic<int> level{static_cast<int>(InitialLevel())};
  return level;
}

std::mutex& SinkMutex() {
  static std::mutex mutex;
  return mutex;
}

Sink& CurrentSink() {
  static Sink sink;
  return sink;
}

}  // namespace

Result<Level> ParseLevel(std::string_view name) {
  if (name == "error") return Level::kError;
  if (name == "warn" || name == "warning") return Level::kWarn;
  if (name == "info") return Level::kInfo;
  if (name == "debug") return Level::kDebug;
  if (name == "trace") return Level::kTrace;
  return InvalidArgumentError("unknown log level '" + std::string(name) +
                              "' (use one of: error, warn, info, debug, trace)");
}

std::string_view LevelName(Level level) {
  switch (level) {
    case Level::kError: return "error";
    case Level::kWarn: return "warning";
    case Level::kInfo: return "info";
    case Level::kDebug: return "debug";
    case Level::kTrace: return "trace";
  }
  return "?";
}

void SetLevel(Level level) { LevelStore().store(static_cast<int>(level)); }
Level GetLevel() { return static_cast<Level>(LevelStore().load()); }

Sink SetSink(Sink sink) {
  std::lock_guard lock(SinkMutex());
  Sink previous = std::move(CurrentSink());
  CurrentSink() = std::move(sink);
  return previous;
}

void Write(Level level, std::string_view subsystem, std::string_view raw_message) {
  // A message often quotes a peer (a client's refusal reason, a hostname): a
  // newline in it would forge a log line of its own, an ESC sequence would
  // reach the terminal. One line per call, always.
  const std::string message = NeutralizeControls(raw_message, Newlines::kEscape);
  std::lock_guard lock(SinkMutex());
  if (CurrentSink()) {
    CurrentSink()(level, subsystem, message);
    return;
  }
  std::string line = fmt::format("fabcheck: {} [{}] {}\n", LevelName(level), subsystem, message);
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace fabcheck::log
