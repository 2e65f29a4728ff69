#include "base/input.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/units.h"

namespace fabcheck {
namespace {

constexpr size_t kChunk = 1 << 20;

Status OpenError(const std::string& path, int err) {
  std::string what = fmt::format("cannot read {}: {}", path, std::strerror(err));
  if (err == ENOENT) return NotFoundError(what + " (check the path)");
  if (err == EACCES || err == EPERM) return PermissionDeniedError(what + " (check its permissions, or run as its owner)");
  return UnavailableError(what);
}

// How reads of an input wait. Regular files never do. A FIFO or device
// opened by path stays O_NONBLOCK: a FIFO without a writer reads as empty at
// once, and EAGAIN (a writer that sends nothing) waits in poll() up to the
// idle timeout. stdin is a descriptor shared with the parent (O_NONBLOCK
// there would leak to the shell), so it is polled before each read.
enum Wait { kNoWait = 0, kPollOnEagain = 1, kPollFirst = 2, kForever = 3 };

struct Input {
  UniqueFd fd;
  int wait = kNoWait;
  bool regular = false;
  uint64_t size = 0;
};

Result<Input> OpenInput(const std::string& path) {
  Input in;
  if (path.empty()) return InvalidArgumentError("an empty path was given where a file is expected");
  if (path == "-") {
    in.fd.Reset(::fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 0));
    if (!in.fd.valid()) return OpenError("stdin", errno);
    in.wait = kPollFirst;
  } else {
    in.fd.Reset(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
    if (!in.fd.valid()) return OpenError(path, errno);
    in.wait = kPollOnEagain;
  }
  struct stat st {};
  if (::fstat(in.fd.get(), &st) != 0) return OpenError(path, errno);
  if (S_ISDIR(st.st_mode)) {
    return InvalidArgumentError(fmt::format("cannot read {}: it is a directory (give the files in it)", path));
  }
  if (S_ISREG(st.st_mode)) {
    in.regular = true;
    in.size = static_cast<uint64_t>(st.st_size);
    in.wait = kNoWait;
  } else if (::isatty(in.fd.get()) == 1) {
    in.wait = kForever;
  }
  return in;
}

// Reads up to `size` bytes: 0 at the end, -1 with errno on error
// (ETIMEDOUT: nothing arrived for idle_timeout_ms).
ssize_t ReadSome(int fd, int wait, int idle_timeout_ms, char* out, size_t size) {
  for (;;) {
    if (wait == kPollFirst || wait == kForever) {
      struct pollfd pfd {fd, POLLIN, 0};
      int ready = ::poll(&pfd, 1, wait == kForever || idle_timeout_ms <= 0 ? -1 : idle_timeout_ms);
      if (ready < 0 && errno == EINTR) continue;
      if (ready < 0) return -1;
      if (ready == 0) {
        errno = ETIMEDOUT;
        return -1;
      }
    }
    ssize_t n = ::read(fd, out, size);
    if (n >= 0) return n;
    if (errno == EINTR) continue;
    if (errno != EAGAIN || wait == kNoWait) return -1;
    struct pollfd pfd {fd, POLLIN, 0};
    int ready = ::poll(&pfd, 1, idle_timeout_ms <= 0 ? -1 : idle_timeout_ms);
    if (ready == 0) {
      errno = ETIMEDOUT;
      return -1;
    }
    if (ready < 0 && errno != EINTR) return -1;
  }
}

Status ReadError(const std::string& path, int err, int idle_timeout_ms) {
  if (err == ETIMEDOUT) {
    return DeadlineExceededError(fmt::format(
        "cannot read {}: nothing arrived for {} s (a pipe or FIFO whose writer is stuck or never started; save the "
        "output to a file and give that)",
        path == "-" ? "stdin" : path, idle_timeout_ms / 1000.0));
  }
  return OpenError(path == "-" ? "stdin" : path, err);
}

Status TooLarge(const std::string& path, uint64_t max_bytes) {
  return ResourceExhaustedError(fmt::format(
      "{} is larger than {}: stopped reading there (is it the right file? cut it to the part that matters)",
      path == "-" ? "stdin" : path, FormatSize(max_bytes)));
}

}  // namespace

Result<std::string> ReadFileBounded(const std::string& path, uint64_t max_bytes, int idle_timeout_ms) {
  ASSIGN_OR_RETURN(Input in, OpenInput(path));
  if (in.regular && in.size > max_bytes) return TooLarge(path, max_bytes);
  std::string out;
  if (in.regular) out.reserve(static_cast<size_t>(in.size));
  char chunk[64 << 10];
  for (;;) {
    ssize_t n = ReadSome(in.fd.get(), in.wait, idle_timeout_ms, chunk, sizeof(chunk));
    if (n < 0) return ReadError(path, errno, idle_timeout_ms);
    if (n == 0) break;
    if (out.size() + static_cast<size_t>(n) > max_bytes) return TooLarge(path, max_bytes);
    out.append(chunk, static_cast<size_t>(n));
  }
  return out;
}

Result<LineReader> LineReader::Open(const std::string& path, Options options) {
  ASSIGN_OR_RETURN(Input in, OpenInput(path));
  LineReader r;
  r.wait_ = in.wait;
  r.path_ = path;
  r.options_ = options;
  if (r.options_.max_line == 0) r.options_.max_line = 1;
  r.fd_ = std::move(in.fd);
  r.buffer_.resize(kChunk);
  return r;
}

bool LineReader::Fill() {
  if (eof_ || !status_.ok()) return false;
  if (total_ >= options_.max_total) {
    status_ = ResourceExhaustedError(fmt::format(
        "{}: stopped after {} (the limit for one input; is it an endless stream such as /dev/zero?)",
        path_ == "-" ? "stdin" : path_, FormatSize(options_.max_total)));
    return false;
  }
  ssize_t n = ReadSome(fd_.get(), wait_, options_.idle_timeout_ms, buffer_.data(), buffer_.size());
  if (n < 0) {
    status_ = ReadError(path_, errno, options_.idle_timeout_ms);
    return false;
  }
  if (n == 0) {
    eof_ = true;
    return false;
  }
  begin_ = 0;
  end_ = static_cast<size_t>(n);
  total_ += static_cast<uint64_t>(n);
  return true;
}

bool LineReader::Next(std::string_view* out) {
  line_.clear();
  truncated_ = false;
  bool any = false;
  for (;;) {
    if (begin_ == end_ && !Fill()) break;
    any = true;
    const char* start = buffer_.data() + begin_;
    const void* nl = std::memchr(start, '\n', end_ - begin_);
    size_t take = nl ? static_cast<size_t>(static_cast<const char*>(nl) - start) : end_ - begin_;
    size_t room = options_.max_line > line_.size() ? options_.max_line - line_.size() : 0;
    if (nl && line_.empty() && take <= room) {
      // The common case: the whole line is in the buffer; no copy.
      *out = std::string_view(start, take);
      begin_ += take + 1;
      ++line_number_;
      if (!out->empty() && out->back() == '\r') out->remove_suffix(1);
      return true;
    }
    if (take > room) {
      truncated_ = true;
      take = room;
    }
    line_.append(start, take);
    if (nl) {
      begin_ = static_cast<size_t>(static_cast<const char*>(nl) - buffer_.data()) + 1;
      break;
    }
    begin_ = end_;
  }
  if (!any && line_.empty()) return false;
  if (!status_.ok() && line_.empty()) return false;
  ++line_number_;
  if (!line_.empty() && line_.back() == '\r') line_.pop_back();
  *out = line_;
  return true;
}

}  // namespace fabcheck
