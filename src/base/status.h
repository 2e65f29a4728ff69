// Status and Result<T>: how every fabcheck function reports failure.
//
// No exception crosses a module boundary. A message names the operation, the
// object, the errno or library string, and the fix, e.g.
//   cannot read /sys/class/infiniband/mlx5_0/ports/1/rate: ENOENT
//   (is mlx5_ib loaded? try: modprobe mlx5_ib)
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace fabcheck {

// Canonical codes, as abseil and gRPC define them.
enum class StatusCode {
  kOk = 0,
  kCancelled,
  kUnknown,
  kInvalidArgument,
  kDeadlineExceeded,
  kNotFound,
  kAlreadyExists,
  kPermissionDenied,
  kResourceExhausted,
  kFailedPrecondition,
  kAborted,
  kOutOfRange,
  kUnimplemented,
  kInternal,
  kUnavailable,
  kDataLoss,
  kUnauthenticated,
};

std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return {}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // "NotFound: cannot read ..." (or "OK").
  std::string ToString() const;

  // Returns a copy whose message is "<context>: <message>".
  Status WithContext(std::string_view context) const;

  friend bool operator==(const Status& a, const Status& b) {
    return a.code_ == b.code_ && a.message_ == b.message_;
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// Shorthands that read well at the call site: return NotFoundError("...").
Status InvalidArgumentError(std::string message);
Status NotFoundError(std::string message);
Status FailedPreconditionError(std::string message);
Status UnavailableError(std::string message);
Status DeadlineExceededError(std::string message);
Status PermissionDeniedError(std::string message);
Status ResourceExhaustedError(std::string message);
Status InternalError(std::string message);
Status DataLossError(std::string message);
Status UnauthenticatedError(std::string message);
Status AbortedError(std::string message);
Status UnimplementedError(std::string message);
Status CancelledError(std::string message);

// Maps an errno to its canonical code and symbolic name ("ENOENT").
StatusCode StatusCodeFromErrno(int err);
std::string_view ErrnoName(int err);
// "<what>: ENOENT (No such file or directory)<hint>" with the code from errno.
Status ErrnoError(int err, std::string_view what, std::string_view hint = {});

// A value or the Status explaining why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : data_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : data_(std::move(status)) {  // NOLINT: implicit by design
    assert(!std::get<Status>(data_).ok() && "Result built from an OK status");
  }

  bool ok() const { return std::holds_alternative<T>(data_); }
  const Status& status() const {
    static const Status kOkStatus;
    return ok() ? kOkStatus : std::get<Status>(data_);
  }

  T& value() & { return std::get<T>(data_); }
  const T& value() const& { return std::get<T>(data_); }
  T&& value() && { return std::get<T>(std::move(data_)); }

  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  T value_or(T fallback) const& { return ok() ? value() : std::move(fallback); }

 private:
  std::variant<T, Status> data_;
};

}  // namespace fabcheck

#define FABCHECK_CONCAT_INNER_(a, b) a##b
#define FABCHECK_CONCAT_(a, b) FABCHECK_CONCAT_INNER_(a, b)

// Returns the status from the enclosing function when it is not OK.
#define RETURN_IF_ERROR(expr)                       \
  do {                                              \
    ::fabcheck::Status fabcheck_status_ = (expr);   \
    if (!fabcheck_status_.ok()) return fabcheck_status_; \
  } while (0)

// ASSIGN_OR_RETURN(auto x, MakeX()); declares x, or returns MakeX()'s status.
#define ASSIGN_OR_RETURN(decl, expr) \
  ASSIGN_OR_RETURN_IMPL_(FABCHECK_CONCAT_(fabcheck_result_, __LINE__), decl, expr)
#define ASSIGN_OR_RETURN_IMPL_(tmp, decl, expr) \
  auto tmp = (expr);                            \
  if (!tmp.ok()) return tmp.status();           \
  decl = std::move(tmp).value()
