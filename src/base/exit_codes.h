// Exit codes every fabcheck command uses, so scripts can rely on them.
#pragma once

namespace fabcheck {

inline constexpr int kExitOk = 0;        // everything passed
inline constexpr int kExitWarnings = 1;  // passed with warnings
inline constexpr int kExitFailures = 2;  // at least one check or test failed
inline constexpr int kExitError = 3;     // the command could not run (bad input, unavailable, I/O)
inline constexpr int kExitUsage = 64;    // the command line was wrong (EX_USAGE)

}  // namespace fabcheck
