#include "base/budget.h"

#include <fmt/format.h>

#include "base/units.h"

namespace fabcheck::base {

Budget::Budget(std::string what, uint64_t limit, Budget* parent, std::string unit)
    : what_(std::move(what)), limit_(limit), parent_(parent), unit_(std::move(unit)) {}

uint64_t Budget::in_use() const {
  std::lock_guard lock(mu_);
  return in_use_;
}

std::string Budget::Format(uint64_t amount) const {
  return unit_ == "bytes" ? FormatSize(amount) : fmt::format("{}{}{}", amount, unit_.empty() ? "" : " ", unit_);
}

Status Budget::TakeLocked(uint64_t amount, std::string_view for_what) {
  std::lock_guard lock(mu_);
  if (amount > limit_ || in_use_ > limit_ - amount) {
    return ResourceExhaustedError(fmt::format("{}: {} more for {} would exceed the ceiling of {} ({} in use)", what_,
                                              Format(amount), for_what, Format(limit_), Format(in_use_)));
  }
  in_use_ += amount;
  return Status::Ok();
}

void Budget::Give(uint64_t amount) {
  std::lock_guard lock(mu_);
  in_use_ -= std::min(in_use_, amount);
}

Result<Budget::Lease> Budget::Take(uint64_t amount, std::string_view for_what) {
  // Outermost last: a refusal from a parent gives back what the children took.
  RETURN_IF_ERROR(TakeLocked(amount, for_what));
  if (parent_ != nullptr) {
    auto up = parent_->Take(amount, for_what);
    if (!up.ok()) {
      Give(amount);
      return up.status();
    }
    up->budget_ = nullptr;  // this lease gives back to the parent through Release's walk
    up->amount_ = 0;
  }
  return Lease(this, amount);
}

void Budget::Lease::Release() {
  for (Budget* b = budget_; b != nullptr; b = b->parent_) b->Give(amount_);
  budget_ = nullptr;
  amount_ = 0;
}

}  // namespace fabcheck::base
