// The round trips of a latency test, within a fixed memory budget.
//
// A latency test records one figure per ping-pong; `--iters 1000000000` or a
// long `--duration` would otherwise grow (or reserve up front) gigabytes on
// the client, an agent included, where no server-side --max-mem applies.
// Up to kMaxKept samples every one is kept; past that a uniform random
// sample of kMaxKept stays (reservoir sampling, Vitter's algorithm R), so the
// median and tail percentiles stay unbiased estimates and memory stays flat.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace fabcheck::perf {

class LatencySamples {
 public:
  // 2 Mi samples: 16 MiB of doubles, and a p99.9 still from ~2,000 of them.
  static constexpr size_t kMaxKept = size_t{1} << 21;

  explicit LatencySamples(size_t max_kept = kMaxKept) : max_kept_(std::max<size_t>(max_kept, 1)) {}

  // Room for what the test expects to measure, never past the budget.
  void Reserve(uint64_t expected) { kept_.reserve(static_cast<size_t>(std::min<uint64_t>(expected, max_kept_))); }

  void Add(double rtt_us) {
    ++seen_;
    if (kept_.size() < max_kept_) {
      kept_.push_back(rtt_us);
      return;
    }
    std::uniform_int_distribution<uint64_t> pick(0, seen_ - 1);
    uint64_t slot = pick(rng_);
    if (slot < max_kept_) kept_[static_cast<size_t>(slot)] = rtt_us;
  }

  // Every round trip measured, kept or not.
  uint64_t seen() const { return seen_; }
  std::vector<double> Take() && { return std::move(kept_); }

 private:
  size_t max_kept_;
  uint64_t seen_ = 0;
  std::vector<double> kept_;
  std::mt19937_64 rng_{0x5eed1a7e};  // fixed: two runs of one test sample alike
};

}  // namespace fabcheck::perf
