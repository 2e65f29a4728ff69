#include "diagnose/counters.h"

#include <fmt/format.h>

#include <algorithm>

namespace fabcheck::diagnose {

SeriesStats Analyze(const CounterSeries& s) {
  SeriesStats st;
  int streak = 0;
  for (size_t i = 1; i < s.points.size(); ++i) {
    const auto& a = s.points[i - 1];
    const auto& b = s.points[i];
    uint64_t delta = 0;
    if (b.value < a.value) {
      ++st.resets;
      st.reset_at.push_back(b.source);
      delta = b.value;  // counted since the reset: a lower bound
    } else {
      delta = b.value - a.value;
    }
    ++st.intervals;
    st.increase += delta;
    double dt = b.time - a.time;
    if (delta > 0) {
      ++st.rising;
      st.longest_streak = std::max(st.longest_streak, ++streak);
    } else {
      streak = 0;
    }
    if (i + 1 == s.points.size()) st.last_rate = dt > 0 ? static_cast<double>(delta) / dt : 0;
  }
  if (s.points.size() >= 2) st.seconds = s.points.back().time - s.points.front().time;
  st.rate = st.seconds > 0 ? static_cast<double>(st.increase) / st.seconds : 0;
  st.persistent = st.longest_streak >= 2;
  return st;
}

std::string Where(const CounterSeries& s) {
  return s.member.empty() ? s.object : fmt::format("{} {}", s.member, s.object);
}

std::string Describe(const CounterSeries& s, const SeriesStats& st) {
  std::string rate = st.seconds > 0 ? fmt::format(" ({:.3g}/s)", st.rate) : "";
  std::string span = st.seconds > 0 ? fmt::format(" over {:.0f} s", st.seconds) : fmt::format(" over {} samples", s.points.size());
  std::string resets = st.resets > 0 ? fmt::format(", {} reset(s) seen (counted from zero after each)", st.resets) : "";
  return fmt::format("{} {}: +{}{}{}, rising in {} of {} intervals{} ({} -> {})", Where(s), s.counter, st.increase,
                     span, rate, st.rising, st.intervals, resets, s.points.front().source, s.points.back().source);
}

std::vector<const CounterSeries*> SeriesNamed(const Evidence& ev, const std::string& counter) {
  std::vector<const CounterSeries*> out;
  for (const auto& s : ev.counters) {
    if (s.counter == counter) out.push_back(&s);
  }
  return out;
}

const CounterSeries* Sibling(const Evidence& ev, const CounterSeries& of, const std::string& counter) {
  for (const auto& s : ev.counters) {
    if (s.counter == counter && s.member == of.member && s.object == of.object) return &s;
  }
  return nullptr;
}

}  // namespace fabcheck::diagnose
