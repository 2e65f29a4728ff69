#include "base/input.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace fabcheck {
namespace {

constexpr size_t kChunk = 1 << 20;

Status OpenError(const std::string& path, int err) {
  std::string what = fmt::format("cannot read {}: {}", path, std::strerror(err));
  if (err == ENOENT) return NotFoundError(what + " (check the path)");
  if (err == EACCES || err == EPERM) return PermissionDeniedError(what + " (check its permissions, or run as its owner)");
  return UnavailableError(what);
}

// Opens for reading; a FIFO opens at once (O_NONBLOCK) and is then read in
// blocking mode, so a FIFO without a writer reads as empty instead of hanging.
Result<UniqueFd> OpenInput(const std::string& path) {
  if (path == "-") return UniqueFd(::dup(STDIN_FILENO));
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (!fd.valid()) return OpenError(path, errno);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return OpenError(path, errno);
  if (S_ISDIR(st.st_mode)) {
    return InvalidArgumentError(fmt::format("cannot read {}: it is a directory (give the files in it)", path));
  }
  int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags >= 0) (void)::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK);
  return fd;
}

ssize_t ReadSome(int fd, char* out, size_t size) {
  for (;;) {
    ssize_t n = ::read(fd, out, size);
    if (n >= 0 || errno != EINTR) return n;
  }
}

}  // namespace

Result<std::string> ReadFileBounded(const std::string& path, uint64_t max_bytes) {
  ASSIGN_OR_RETURN(UniqueFd fd, OpenInput(path));
  std::string out;
  char chunk[64 << 10];
  for (;;) {
    ssize_t n = ReadSome(fd.get(), chunk, sizeof(chunk));
    if (n < 0) return OpenError(path, errno);
    if (n == 0) break;
    if (out.size() + static_cast<size_t>(n) > max_bytes) {
      return ResourceExhaustedError(fmt::format(
          "{} is larger than {} bytes: stopped reading there (is it the right file? cut it to the part that matters)",
          path, max_bytes));
    }
    out.append(chunk, static_cast<size_t>(n));
  }
  return out;
}

Result<LineReader> LineReader::Open(const std::string& path, Options options) {
  ASSIGN_OR_RETURN(UniqueFd fd, OpenInput(path));
  LineReader r;
  r.path_ = path;
  r.options_ = options;
  if (r.options_.max_line == 0) r.options_.max_line = 1;
  r.fd_ = std::move(fd);
  r.buffer_.resize(kChunk);
  return r;
}

bool LineReader::Fill() {
  if (eof_ || !status_.ok()) return false;
  if (total_ >= options_.max_total) {
    status_ = ResourceExhaustedError(fmt::format(
        "{}: stopped after {} bytes (the limit for one input; is it an endless stream such as /dev/zero?)", path_,
        options_.max_total));
    return false;
  }
  ssize_t n = ReadSome(fd_.get(), buffer_.data(), buffer_.size());
  if (n < 0) {
    status_ = OpenError(path_, errno);
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
