// Parsers for the /proc files the system checks read (pure functions; the
// reading goes through SysRoot so captures work).
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "base/status.h"

namespace fabcheck::checks {

inline constexpr uint64_t kRlimUnlimited = UINT64_MAX;

struct Rlimit {
  uint64_t soft = 0;  // kRlimUnlimited for "unlimited"
  uint64_t hard = 0;
};

// The "Max locked memory" row of /proc/<pid>/limits (values in bytes).
Result<Rlimit> ParseMemlockLimit(std::string_view limits_text);
// "unlimited" or "8 MiB".
std::string FormatLimit(uint64_t bytes);

// The CapEff mask of /proc/<pid>/status.
Result<uint64_t> ParseCapEff(std::string_view status_text);
inline constexpr int kCapIpcLock = 14;  // linux/capability.h CAP_IPC_LOCK

// Module names in /proc/modules (first field of each line).
std::set<std::string> ParseModules(std::string_view modules_text);

// "6.1.0-18-amd64" -> {6, 1}.
std::optional<std::pair<int, int>> ParseKernelVersion(std::string_view release);

}  // namespace fabcheck::checks
