// ThreadGroup: the one way fabcheck starts worker threads for a request.
//
// std::thread's constructor throws std::system_error when the system will not
// start another thread (EAGAIN under a pod's pids.max or ulimit -u); a vector
// of joinable threads unwinding past that aborts the whole process, an agent
// included. Start() instead returns ResourceExhausted and starts nothing, the
// group keeps what did start, and its destructor joins them, so the caller
// tells the started threads to stop and returns the error.
//
// Every thread counts against a Budget: by default the process's
// (kMaxProcessThreads), or a request's share of it (a Budget whose parent is
// ProcessThreads()), so one request cannot take every thread the node allows.
#pragma once

#include <cstddef>
#include <exception>
#include <new>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "base/budget.h"
#include "base/status.h"

namespace fabcheck::base {

// Threads started through ThreadGroup in one process, all requests together
// (an agent: tests, kv transfers, fan-outs). The HTTP server's own workers and
// event thread are not counted here; they are started once at startup.
inline constexpr uint64_t kMaxProcessThreads = 1024;
Budget& ProcessThreads();

// ResourceExhausted: the system would not start a thread for `what`.
Status ThreadRefused(std::string_view what, size_t running, std::string_view why);

// One long-lived thread (a server's accept loop, a connection's handler):
// starts fn() into `out`, or returns ResourceExhausted naming `what` when the
// system refuses (nothing started, `out` untouched). Not counted in a Budget.
template <typename Fn>
[[nodiscard]] Status StartThread(std::string_view what, std::thread& out, Fn&& fn) {
  try {
    out = std::thread(std::forward<Fn>(fn));
  } catch (const std::system_error& e) {
    return ThreadRefused(what, 0, e.what());
  } catch (const std::bad_alloc&) {
    return ThreadRefused(what, 0, "out of memory");
  }
  return Status::Ok();
}

class ThreadGroup {
 public:
  // `what` names the work in errors ("kv transfers to 64 targets").
  explicit ThreadGroup(std::string what, Budget* budget = &ProcessThreads()) : what_(std::move(what)), budget_(budget) {}
  ~ThreadGroup() { JoinAll(); }
  ThreadGroup(const ThreadGroup&) = delete;
  ThreadGroup& operator=(const ThreadGroup&) = delete;

  // Starts fn() on a new thread, or returns ResourceExhausted (the budget is
  // spent, or the system refused: pids.max, ulimit -u, memory) with nothing started.
  template <typename Fn>
  [[nodiscard]] Status Start(Fn&& fn) {
    auto lease = budget_->Take(1, what_);
    if (!lease.ok()) return lease.status();
    try {
      threads_.reserve(threads_.size() + 1);
      leases_.reserve(leases_.size() + 1);
      threads_.emplace_back(std::forward<Fn>(fn));
    } catch (const std::system_error& e) {
      return ThreadRefused(what_, threads_.size(), e.what());
    } catch (const std::bad_alloc&) {
      return ThreadRefused(what_, threads_.size(), "out of memory");
    }
    leases_.push_back(std::move(lease).value());
    return Status::Ok();
  }

  // Starts fn(i) for i in [0, n): Ok when all started; otherwise the first
  // refusal, with the threads that did start still running (the caller stops
  // them; the destructor or JoinAll joins them).
  template <typename Fn>
  [[nodiscard]] Status StartEach(size_t n, Fn fn) {
    for (size_t i = 0; i < n; ++i) {
      Status s = Start([fn, i]() mutable { fn(i); });
      if (!s.ok()) return s;
    }
    return Status::Ok();
  }

  void JoinAll() {
    for (auto& t : threads_) {
      if (t.joinable()) t.join();
    }
    threads_.clear();
    leases_.clear();
  }
  size_t started() const { return threads_.size(); }

 private:
  std::string what_;
  Budget* budget_;
  std::vector<std::thread> threads_;
  std::vector<Budget::Lease> leases_;
};

}  // namespace fabcheck::base
