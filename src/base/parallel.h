// ParallelFor: runs fn(i) for every i in [0, n) on up to `width` threads,
// each taking the next index when it is free (work stealing over one counter),
// and returns when all are done. Used by the sweep and ladder fan-outs.
// Threads start through base/thread_group.h: under a thread limit, fewer run.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

#include "base/thread_group.h"

namespace fabcheck::base {

template <typename Fn>
void ParallelFor(size_t n, size_t width, Fn fn) {
  std::atomic<size_t> next{0};
  auto drain = [&] {
    for (size_t i = next++; i < n; i = next++) fn(i);
  };
  width = std::max<size_t>(1, std::min(width, n));
  {
    // Under a thread limit the work still gets done: by the threads that
    // started, or by the caller when none did (ThreadGroup refuses instead of
    // throwing).
    // A coordinator's fan-out is the user's own work: bounded by `width`,
    // not by the process budget an agent's requests share.
    Budget own("threads of a parallel fan-out", width, nullptr, "threads");
    ThreadGroup threads("a parallel fan-out", &own);
    for (size_t t = 0; t < width; ++t) {
      if (!threads.Start(drain).ok()) break;
    }
    if (threads.started() == 0) drain();
  }
}

}  // namespace fabcheck::base
