// Bounded reading of files that come from outside (logs, JSON, YAML, metrics
// text): a whole file up to a size cap, or line by line with a maximum line
// length, in constant memory. Never blocks on a FIFO without a writer and
// never grows without limit on an endless input (/dev/zero, a pipe).
// A pipe, FIFO or stdin whose writer stays silent for `idle_timeout_ms` ends
// the read with DeadlineExceeded (a terminal waits: a person is typing).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/fd.h"
#include "base/status.h"

namespace fabcheck {

inline constexpr uint64_t kDefaultMaxFileBytes = 64ull << 20;  // whole-file reads (JSON, YAML, profiles)
inline constexpr int kDefaultIdleTimeoutMs = 60'000;            // pipes, FIFOs, stdin; <= 0 waits forever

// Reads all of `path` ("-" = stdin). Errors name the file and the fix:
// NotFound / PermissionDenied / InvalidArgument (a directory) /
// ResourceExhausted (larger than max_bytes, with the size it stopped at).
// DeadlineExceeded when a pipe stays silent for idle_timeout_ms.
Result<std::string> ReadFileBounded(const std::string& path, uint64_t max_bytes = kDefaultMaxFileBytes,
                                    int idle_timeout_ms = kDefaultIdleTimeoutMs);

// Line-by-line reader. Lines end at '\n' (a trailing '\r' is dropped). A line
// longer than max_line is returned cut to max_line bytes with truncated()
// set, and the rest of it is skipped: memory stays at one buffer whatever
// the input. Reading stops with an error after max_total bytes.
class LineReader {
 public:
  struct Options {
    size_t max_line = 64 << 10;
    uint64_t max_total = 16ull << 30;
    int idle_timeout_ms = kDefaultIdleTimeoutMs;
  };
  // Opens `path` ("-" = stdin) for reading; a FIFO is opened without waiting
  // for a writer. Errors as ReadFileBounded.
  static Result<LineReader> Open(const std::string& path, Options options);
  static Result<LineReader> Open(const std::string& path) { return Open(path, Options()); }

  // The next line, valid until the next call. false at the end of the input
  // or on an error (then status() says which).
  bool Next(std::string_view* line);
  bool truncated() const { return truncated_; }   // the last line was cut at max_line
  uint64_t line_number() const { return line_number_; }  // 1-based number of the last line
  uint64_t bytes_read() const { return total_; }
  const Status& status() const { return status_; }
  const std::string& path() const { return path_; }

  LineReader(LineReader&&) = default;
  LineReader& operator=(LineReader&&) = default;

 private:
  LineReader() = default;
  bool Fill();  // reads more into buffer_; false at EOF or error

  std::string path_;
  Options options_;
  UniqueFd fd_;
  int wait_ = 0;  // how reads wait (see input.cc)
  std::string buffer_;  // capacity fixed at open
  size_t begin_ = 0, end_ = 0;
  std::string line_;    // a line that crossed the buffer's end
  bool eof_ = false;
  bool truncated_ = false;
  uint64_t line_number_ = 0;
  uint64_t total_ = 0;
  Status status_;
};

}  // namespace fabcheck
