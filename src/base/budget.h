// Budget: a counted resource with a ceiling (threads, buffer bytes), taken in
// leases that give it back when they end. A budget may sit under a parent
// (one request's share of the whole process): a lease then counts against
// both, so a request cannot take more than its share, nor all requests
// together more than the process allows.
//
// Why: the agent runs work for whoever calls it; what one request may make it
// allocate or start must have a ceiling the agent sets, not the caller.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <utility>

#include "base/status.h"

namespace fabcheck::base {

class Budget {
 public:
  // `what` names the resource in errors ("agent threads", "request memory");
  // `unit` formats amounts ("bytes" prints sizes, anything else a count).
  Budget(std::string what, uint64_t limit, Budget* parent = nullptr, std::string unit = "");
  Budget(const Budget&) = delete;
  Budget& operator=(const Budget&) = delete;

  class Lease {
   public:
    Lease() = default;
    Lease(Lease&& o) noexcept : budget_(std::exchange(o.budget_, nullptr)), amount_(std::exchange(o.amount_, 0)) {}
    Lease& operator=(Lease&& o) noexcept {
      if (this != &o) {
        Release();
        budget_ = std::exchange(o.budget_, nullptr);
        amount_ = std::exchange(o.amount_, 0);
      }
      return *this;
    }
    ~Lease() { Release(); }
    uint64_t amount() const { return amount_; }
    void Release();

   private:
    friend class Budget;
    Lease(Budget* b, uint64_t amount) : budget_(b), amount_(amount) {}
    Budget* budget_ = nullptr;
    uint64_t amount_ = 0;
  };

  // Takes `amount` from this budget and every parent, or none of it:
  // ResourceExhausted naming the budget, what is in use, the ceiling and `for_what`.
  Result<Lease> Take(uint64_t amount, std::string_view for_what);

  uint64_t limit() const { return limit_; }
  uint64_t in_use() const;
  const std::string& what() const { return what_; }

 private:
  Status TakeLocked(uint64_t amount, std::string_view for_what);
  void Give(uint64_t amount);
  std::string Format(uint64_t amount) const;

  const std::string what_;
  const uint64_t limit_;
  Budget* const parent_;
  const std::string unit_;
  mutable std::mutex mu_;
  uint64_t in_use_ = 0;  // guarded by mu_
};

}  // namespace fabcheck::base
