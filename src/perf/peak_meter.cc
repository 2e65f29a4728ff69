#include "perf/peak_meter.h"

#include <algorithm>

namespace fabcheck::perf {

void PeakMeter::Add(Clock::time_point now, uint64_t bytes) {
  double s = std::chrono::duration<double>(now - start_).count();
  if (s < 0) return;
  size_t i = static_cast<size_t>(s / kBucketS);
  if (i >= count_) return;
  buckets_[i].fetch_add(bytes, std::memory_order_relaxed);
  size_t last = last_.load(std::memory_order_relaxed);
  while (i > last && !last_.compare_exchange_weak(last, i, std::memory_order_relaxed)) {
  }
  size_t first = first_.load(std::memory_order_relaxed);
  while (i < first && !first_.compare_exchange_weak(first, i, std::memory_order_relaxed)) {
  }
}

void PeakMeter::AddSpan(Clock::time_point from, Clock::time_point to, uint64_t bytes) {
  double a = std::chrono::duration<double>(from - start_).count();
  double b = std::chrono::duration<double>(to - start_).count();
  if (a < 0) a = 0;
  size_t first = static_cast<size_t>(a / kBucketS);
  size_t last = b > a ? static_cast<size_t>(b / kBucketS) : first;
  if (first == last) {
    Add(to, bytes);
    return;
  }
  // Each bucket gets the share of the span it overlaps; the rounding remainder
  // goes to the last so no byte is lost.
  uint64_t given = 0;
  for (size_t i = first; i < last; ++i) {
    double overlap = std::min(b, (i + 1) * kBucketS) - std::max(a, i * kBucketS);
    uint64_t share = static_cast<uint64_t>(static_cast<double>(bytes) * overlap / (b - a));
    Add(start_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>((i + 0.5) * kBucketS)),
        share);
    given += share;
  }
  Add(to, bytes - std::min(given, bytes));
}

double PeakMeter::PeakGbps() const {
  size_t first = first_.load(), last = last_.load();
  if (first == SIZE_MAX || last < first + 2) return 0;  // need one full bucket between partial ends
  uint64_t best = 0;
  for (size_t i = first + 1; i < last; ++i) best = std::max<uint64_t>(best, buckets_[i].load());
  return static_cast<double>(best) * 8 / kBucketS / 1e9;
}

}  // namespace fabcheck::perf
