// How much slower and larger code runs in the ASan + UBSan build
// (scripts/sanitize.sh asan): shadow memory, a quarantine of freed blocks and
// checks on every access. The time and memory bounds of tests that guard
// against unbounded growth or quadratic work stretch by these factors, and
// still tell bounded from unbounded (what they catch grew by gigabytes, never
// ended, or took minutes).
#pragma once

namespace fabcheck::test_support {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr double kSanitizerTimeFactor = 5;
inline constexpr long kSanitizerMemoryFactor = 4;
#else
inline constexpr double kSanitizerTimeFactor = 1;
inline constexpr long kSanitizerMemoryFactor = 1;
#endif

}  // namespace fabcheck::test_support
