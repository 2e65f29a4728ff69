// The peak bandwidth of a run, perftest's "BW peak": bytes moved per 10 ms
// bucket, shared by a side's threads; the peak is the best full bucket (the
// first and last, partial, are ignored), so runs shorter than ~30 ms have none.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace fabcheck::perf {

class PeakMeter {
 public:
  using Clock = std::chrono::steady_clock;
  explicit PeakMeter(Clock::time_point start, size_t buckets = 65536)
      : start_(start), buckets_(std::make_unique<std::atomic<uint64_t>[]>(buckets)), count_(buckets) {}
  void Add(Clock::time_point now, uint64_t bytes);
  // Bytes moved evenly over [from, to]: a completion that covers many
  // messages (CQ moderation) is spread over the time they took, not piled
  // into the bucket where it was seen.
  void AddSpan(Clock::time_point from, Clock::time_point to, uint64_t bytes);
  double PeakGbps() const;  // 0 when no full bucket

 private:
  static constexpr double kBucketS = 0.010;
  Clock::time_point start_;
  std::unique_ptr<std::atomic<uint64_t>[]> buckets_;
  size_t count_;
  std::atomic<size_t> last_{0};
  std::atomic<size_t> first_{SIZE_MAX};
};

}  // namespace fabcheck::perf
