// Timestamps in results and reports: UTC, ISO 8601, to the second
// ("2026-12-01T22:20:10Z"), the form every fabcheck schema uses.
#pragma once

#include <ctime>
#include <string>

namespace fabcheck {

inline std::string UtcIso8601(std::time_t t) {
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

inline std::string UtcNowIso8601() { return UtcIso8601(std::time(nullptr)); }

}  // namespace fabcheck
