// Internals of the TCP transport shared by its files (not a public API).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/thread_group.h"
#include "perf/cpu_placement.h"
#include "perf/peak_meter.h"
#include "perf/socket.h"
#include "perf/transport.h"

namespace fabcheck::perf::tcp {

// Data sockets wake up this often when idle, so cancel flags, targets and the
// idle timeout are seen without a poll() per call in the hot loop.
inline constexpr std::chrono::milliseconds kIdleSlice{50};

// The --validate pattern: message `index` of stream `stream`; both sides
// compute it, so no reference copy travels.
uint64_t PatternSeed(int stream, uint64_t index);
void FillPattern(char* buf, size_t len, uint64_t seed);
// Offset of the first wrong byte, or nullopt when the buffer matches.
std::optional<size_t> CheckPattern(const char* buf, size_t len, uint64_t seed);

using perf::PeakMeter;

// The budget this side's worker threads count against (ThreadGroup's second argument).
inline base::Budget* ThreadBudget(const LocalContext& local) {
  return local.threads != nullptr ? local.threads : &base::ProcessThreads();
}

// An aligned host buffer touched by the calling thread (first touch places it
// on that thread's NUMA node).
struct AlignedBuffer {
  explicit AlignedBuffer(size_t len);
  ~AlignedBuffer();
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  char* data = nullptr;
  size_t size = 0;
};

// Everything a data thread needs to fail cleanly: the cancel flags and the
// longest it may wait without progress.
struct WaitContext {
  const std::atomic<bool>* cancel = nullptr;  // engine shutdown
  const std::atomic<bool>* abort = nullptr;   // another thread of this test failed
  std::chrono::milliseconds idle_timeout{30000};
  std::string peer;                           // for messages
  bool stopped() const {
    return (cancel != nullptr && cancel->load(std::memory_order_relaxed)) ||
           (abort != nullptr && abort->load(std::memory_order_relaxed));
  }
};

// How long a data socket has gone without progress, reading the clock only
// when a blocking call times out (after a full kIdleSlice): a call that
// completes reads none, so a 64-byte round trip costs two system calls and
// the one timestamp it is measured by, as sockperf's does.
class IdleSince {
 public:
  void Progress() { since_ = {}; }
  // After EAGAIN or EINTR: when the wait without progress began.
  Clock::time_point Since() {
    if (since_ == Clock::time_point{}) since_ = Clock::now() - kIdleSlice;
    return since_;
  }

 private:
  Clock::time_point since_{};
};

// Full send/receive on a socket with SO_*TIMEO = kIdleSlice.
Status SendFull(int fd, const char* data, size_t len, const WaitContext& wait, const char* phase);
Status RecvFull(int fd, char* data, size_t len, const WaitContext& wait, const char* phase);

// The netdev owning `local_addr` ("" when none), its MTU and NUMA node.
struct NetPlacement {
  std::string netdev;
  int mtu = 0;
  std::optional<int> numa_node;  // the NIC's node; nullopt for virtual devices / unknown
};
NetPlacement FindNetPlacement(const sys::SysRoot& root, const std::string& local_addr);
using perf::CpusOfNode;
using perf::PinThread;

}  // namespace fabcheck::perf::tcp
