// Bounds the perf engine enforces and the command line declares alike, so a
// value the parser takes is one the engine runs.
#pragma once

namespace fabcheck::perf {

// The most streams (TCP connections or verbs QPs) one test may open
// (perf run --streams, perf serve --max-streams).
inline constexpr int kMaxStreams = 1024;

}  // namespace fabcheck::perf
