// SysRoot: the only reader of /sys, /proc and /dev.
//
// Every probe reads the node through a SysRoot, so the same code runs on the
// live node ("/"), on a directory holding a copy of those trees (test
// fixtures), and on a capture tarball made by `fabcheck snapshot` on another
// machine. Paths are always given as on a live node ("/sys/class/net"); the
// root decides where they are read from. Symbolic links are resolved inside
// the root, so an absolute link target never escapes a capture.
//
// A live SysRoot can record what it reads; `fabcheck snapshot` replays the
// readers with recording on and writes exactly those files into a capture.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/fd.h"
#include "base/status.h"

namespace fabcheck::sys {

// Where a capture keeps what is not a file on the node (addresses from
// netlink, metadata, the result of library calls).
inline constexpr std::string_view kCaptureMetaDir = "/fabcheck";
inline constexpr std::string_view kCaptureInfoFile = "/fabcheck/capture.json";

class SysRoot {
 public:
  enum class Kind { kLive, kDirectory, kCapture };

  // The running node.
  static SysRoot Live();
  // A directory or a capture tarball (.tar.gz, .tgz, .tar). Fails with a
  // message that says what a sysroot is when `path` is not one.
  static Result<SysRoot> Open(const std::string& path);

  Kind kind() const;
  bool live() const { return kind() == Kind::kLive; }
  // "live node", "directory /x", "capture /x.tar.gz": for reports and errors.
  std::string Describe() const;
  // The path a message should name for `path` (the capture's name, not a temp dir).
  std::string DisplayPath(std::string_view path) const;

  // The whole file. Errors name the file and say what to do.
  Result<std::string> ReadFile(std::string_view path) const;
  // A one-line sysfs attribute with surrounding whitespace removed.
  Result<std::string> ReadAttribute(std::string_view path) const;
  // Entry names of a directory, sorted; "." and ".." excluded.
  Result<std::vector<std::string>> ListDir(std::string_view path) const;
  // The target of a symbolic link, as stored.
  Result<std::string> ReadLink(std::string_view path) const;
  // The path with every symbolic link resolved inside the root, as a
  // live-style absolute path ("/sys/devices/pci0000:00/0000:00:01.0/...").
  Result<std::string> Resolve(std::string_view path) const;
  bool Exists(std::string_view path) const;
  // Opens, with open(2) `flags`, a path that Resolve returned (no links left,
  // so it stays inside the root), for readers that keep descriptors from one
  // read to the next (sys/dir_files.h). Invalid with errno set on failure.
  UniqueFd OpenResolved(std::string_view resolved, int flags) const;
  bool IsDirectory(std::string_view path) const;

  // Data that is not a file on the node, stored in captures under /fabcheck/<name>.
  // Live roots have none (callers query the kernel and Record it).
  Result<std::string> ReadMeta(std::string_view name) const;
  void RecordMeta(std::string_view name, std::string content) const;

  // Recording (live roots): every path read, listed or resolved from now on
  // is remembered for WriteCapture.
  void StartRecording() const;
  bool recording() const;

  // Writes the recorded files, directories and links, the recorded metadata
  // and /fabcheck/capture.json (`info`, a JSON object) into a gzip tarball.
  // Writes to a temporary file first, so a full disk never leaves a truncated
  // capture under the final name.
  Status WriteCapture(const std::string& output_path, const std::string& info_json) const;

 private:
  struct State;
  explicit SysRoot(std::shared_ptr<State> state) : state_(std::move(state)) {}
  // Where `resolved` is on this machine (the live path, or under the directory).
  std::string HostPath(std::string_view resolved) const;
  void Note(std::string_view path) const;

  std::shared_ptr<State> state_;
};

}  // namespace fabcheck::sys
