#include "base/status.h"

#include <cerrno>
#include <cstring>

namespace fabcheck {

std::string_view StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "OK";
    case StatusCode::kCancelled: return "Cancelled";
    case StatusCode::kUnknown: return "Unknown";
    case StatusCode::kInvalidArgument: return "InvalidArgument";
    case StatusCode::kDeadlineExceeded: return "DeadlineExceeded";
    case StatusCode::kNotFound: return "NotFound";
    case StatusCode::kAlreadyExists: return "AlreadyExists";
    case StatusCode::kPermissionDenied: return "PermissionDenied";
    case StatusCode::kResourceExhausted: return "ResourceExhausted";
    case StatusCode::kFailedPrecondition: return "FailedPrecondition";
    case StatusCode::kAborted: return "Aborted";
    case StatusCode::kOutOfRange: return "OutOfRange";
    case StatusCode::kUnimplemented: return "Unimplemented";
    case StatusCode::kInternal: return "Internal";
    case StatusCode::kUnavailable: return "Unavailable";
    case StatusCode::kDataLoss: return "DataLoss";
    case StatusCode::kUnauthenticated: return "Unauthenticated";
  }
  return "Unknown";
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return std::string(StatusCodeName(code_)) + ": " + message_;
}

Status Status::WithContext(std::string_view context) const {
  if (ok()) return *this;
  return Status(code_, std::string(context) + ": " + message_);
}

Status InvalidArgumentError(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
Status NotFoundError(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
Status FailedPreconditionError(std::string m) { return {StatusCode::kFailedPrecondition, std::move(m)}; }
Status UnavailableError(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
Status DeadlineExceededError(std::string m) { return {StatusCode::kDeadlineExceeded, std::move(m)}; }
Status PermissionDeniedError(std::string m) { return {StatusCode::kPermissionDenied, std::move(m)}; }
Status ResourceExhaustedError(std::string m) { return {StatusCode::kResourceExhausted, std::move(m)}; }
Status InternalError(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
Status DataLossError(std::string m) { return {StatusCode::kDataLoss, std::move(m)}; }
Status UnauthenticatedError(std::string m) { return {StatusCode::kUnauthenticated, std::move(m)}; }
Status AbortedError(std::string m) { return {StatusCode::kAborted, std::move(m)}; }
Status UnimplementedError(std::string m) { return {StatusCode::kUnimplemented, std::move(m)}; }
Status CancelledError(std::string m) { return {StatusCode::kCancelled, std::move(m)}; }

StatusCode StatusCodeFromErrno(int err) {
  switch (err) {
    case 0: return StatusCode::kOk;
    case ENOENT: case ENODEV: case ENXIO: case ESRCH: return StatusCode::kNotFound;
    case EACCES: case EPERM: case EROFS: return StatusCode::kPermissionDenied;
    case EINVAL: case ENOTDIR: case EISDIR: case ENAMETOOLONG: case E2BIG:
      return StatusCode::kInvalidArgument;
    case ETIMEDOUT: return StatusCode::kDeadlineExceeded;
    case EEXIST: return StatusCode::kAlreadyExists;
    case ENOMEM: case ENOSPC: case EMFILE: case ENFILE: case EDQUOT: case ENOBUFS:
      return StatusCode::kResourceExhausted;
    case ENOSYS: case EOPNOTSUPP: return StatusCode::kUnimplemented;
    case ECONNREFUSED: case ECONNRESET: case ECONNABORTED: case EHOSTUNREACH: case ENETUNREACH:
    case ENETDOWN: case EPIPE: case EAGAIN: case EBUSY: case ENOTCONN:
      return StatusCode::kUnavailable;
    case EINTR: return StatusCode::kCancelled;
    case EIO: return StatusCode::kDataLoss;
    default: return StatusCode::kUnknown;
  }
}

std::string_view ErrnoName(int err) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
  if (const char* name = strerrorname_np(err)) return name;
#endif
  return "errno";
}

Status ErrnoError(int err, std::string_view what, std::string_view hint) {
  std::string message(what);
  message += ": ";
  message += ErrnoName(err);
  message += " (";
  message += std::strerror(err);
  message += ")";
  if (!hint.empty()) {
    message += " (";
    message += hint;
    message += ")";
  }
  StatusCode code = StatusCodeFromErrno(err);
  if (code == StatusCode::kOk) code = StatusCode::kUnknown;
  return Status(code, std::move(message));
}

}  // namespace fabcheck
