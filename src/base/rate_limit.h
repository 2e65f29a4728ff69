// Lets one kind of log line through at most once per interval, so a flood (a
// client opening connections in a loop) cannot fill a disk with stderr.
//   if (auto held = refused_log.Admit()) LOG_WARN("x", "refused {}{}", peer, HeldBack(*held));
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

namespace fabcheck {

class RateLimit {
 public:
  explicit RateLimit(std::chrono::milliseconds interval = std::chrono::seconds(10)) : interval_(interval) {}
  // The number of lines held back since the last one let through, when this
  // one may be written; nullopt when it is held back (and counted).
  std::optional<uint64_t> Admit();

 private:
  std::mutex mu_;
  std::chrono::milliseconds interval_;
  std::chrono::steady_clock::time_point last_{};
  bool any_ = false;
  uint64_t held_ = 0;
};

// " (N more like it since the last line)", or "" for 0.
std::string HeldBack(uint64_t held);

}  // namespace fabcheck
