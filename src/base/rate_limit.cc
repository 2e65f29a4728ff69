#include "base/rate_limit.h"

#include <fmt/format.h>

#include <utility>

namespace fabcheck {

std::optional<uint64_t> RateLimit::Admit() {
  std::lock_guard lock(mu_);
  auto now = std::chrono::steady_clock::now();
  if (any_ && now - last_ < interval_) {
    ++held_;
    return std::nullopt;
  }
  any_ = true;
  last_ = now;
  return std::exchange(held_, 0);
}

std::string HeldBack(uint64_t held) {
  return held == 0 ? std::string() : fmt::format(" ({} more like it since the last line)", held);
}

}  // namespace fabcheck
