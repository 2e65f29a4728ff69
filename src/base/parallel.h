// ParallelFor: runs fn(i) for every i in [0, n) on up to `width` threads,
// each taking the next index when it is free (work stealing over one counter),
// and returns when all are done. Used by the sweep and ladder fan-outs.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace fabcheck::base {

template <typename Fn>
void ParallelFor(size_t n, size_t width, Fn fn) {
  std::atomic<size_t> next{0};
  std::vector<std::thread> threads;
  width = std::max<size_t>(1, std::min(width, n));
  for (size_t t = 0; t < width; ++t) {
    threads.emplace_back([&] {
      for (size_t i = next++; i < n; i = next++) fn(i);
    });
  }
  for (auto& t : threads) t.join();
}

}  // namespace fabcheck::base
