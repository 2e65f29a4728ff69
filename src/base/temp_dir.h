// TempDir: a private temporary folder that is removed when its owner goes
// away, and also when the process is ended by SIGTERM, SIGHUP, SIGINT or
// SIGQUIT (a capture unpacked to /tmp must not stay behind when a job
// scheduler or a terminal stops fabcheck).
//
// The signal handler is installed on the first Create() for each of those
// signals whose disposition is still the default; a command that installs its
// own handler later (servers that shut down cleanly) replaces it, and its
// normal exit runs the destructors. The handler removes the registered
// folders with async-signal-safe system calls only, then re-raises the signal
// so the exit status still says what ended the process.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"

namespace fabcheck {

class TempDir {
 public:
  // Makes "$TMPDIR/<prefix>-XXXXXX" (mode 0700; /tmp without TMPDIR), or
  // "<parent>/<prefix>-XXXXXX" when a parent folder is given.
  static Result<std::unique_ptr<TempDir>> Create(const std::string& prefix, const std::string& parent = "");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  TempDir(std::string path, int slot) : path_(std::move(path)), slot_(slot) {}
  std::string path_;
  int slot_;  // in the signal handler's table; -1 when it was full
};

// Removes `path` and everything under it without following links, with
// async-signal-safe calls only: what the signal handler runs. Its directory
// buffers are static, so one caller at a time (the handler, or a test).
// True when the tree is gone.
bool RemoveTreeNoFollow(const char* path);

}  // namespace fabcheck
