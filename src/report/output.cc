#include "report/output.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "base/strings.h"

namespace fabcheck::report {

Result<Format> ParseFormat(std::string_view name) {
  std::string n = ToLower(name);
  if (n == "html") return Format::kHtml;
  if (n == "md" || n == "markdown") return Format::kMarkdown;
  if (n == "json") return Format::kJson;
  return InvalidArgumentError("unknown report format '" + std::string(name) + "' (choose html, md or json)");
}

Result<Format> FormatFromPath(std::string_view path) {
  std::string p = ToLower(path);
  if (EndsWith(p, ".html") || EndsWith(p, ".htm")) return Format::kHtml;
  if (EndsWith(p, ".md") || EndsWith(p, ".markdown")) return Format::kMarkdown;
  if (EndsWith(p, ".json")) return Format::kJson;
  return NotFoundError("no format implied by the name " + std::string(path));
}

Status WriteOutput(const std::string& path, std::string_view content) {
  if (path == "-") {
    if (std::fwrite(content.data(), 1, content.size(), stdout) != content.size() || std::fflush(stdout) != 0) {
      return ErrnoError(errno, "cannot write the report to stdout");
    }
    return Status();
  }
  struct stat st{};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    return InvalidArgumentError("cannot write the report to " + path +
                                ": it exists and is not a regular file (give a file name, or -o - for stdout)");
  }
  std::string temp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) return ErrnoError(errno, "cannot create " + temp + " (is the directory writable?)");
  const char* p = content.data();
  size_t left = content.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int e = errno;
      ::close(fd);
      ::unlink(temp.c_str());
      return ErrnoError(e, "cannot write " + path + " (disk full?)");
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    int e = errno;
    ::unlink(temp.c_str());
    return ErrnoError(e, "cannot write " + path);
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    int e = errno;
    ::unlink(temp.c_str());
    return ErrnoError(e, "cannot rename " + temp + " to " + path);
  }
  return Status();
}

}  // namespace fabcheck::report
