// Counters over time: deltas between consecutive samples, rates, resets and
// the persistence rule (rising in two consecutive intervals) the counter
// rules share. A counter that goes down was reset (reboot, driver reload,
// counter clear): that interval's delta is the value after the reset (a
// lower bound), never negative.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "diagnose/evidence.h"

namespace fabcheck::diagnose {

struct SeriesStats {
  uint64_t increase = 0;      // sum of the intervals' deltas
  double seconds = 0;         // first to last sample
  double rate = 0;            // increase / seconds (0 when no time span)
  double last_rate = 0;       // the last interval's rate
  int intervals = 0;
  int rising = 0;             // intervals with delta > 0
  int longest_streak = 0;     // most consecutive rising intervals
  bool persistent = false;    // longest_streak >= 2
  int resets = 0;
  std::vector<std::string> reset_at;  // the sources where a reset was seen
};

SeriesStats Analyze(const CounterSeries& series);

// "node-a mlx5_0/1 packet_seq_err: +420 over 60 s (7.0/s), rising in 3 of 3 intervals"
std::string Describe(const CounterSeries& series, const SeriesStats& stats);
// "node-a mlx5_0/1" (or just the object).
std::string Where(const CounterSeries& series);

// The series of `counter` (exact name) across all members and objects.
std::vector<const CounterSeries*> SeriesNamed(const Evidence& ev, const std::string& counter);
// The series on the same member and object with that name, or nullptr.
const CounterSeries* Sibling(const Evidence& ev, const CounterSeries& of, const std::string& counter);

}  // namespace fabcheck::diagnose
