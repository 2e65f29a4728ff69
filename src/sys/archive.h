// Tarballs fabcheck writes and reads: snapshot captures and ladder evidence
// bundles. One extractor for both, so every hardening of it (unsafe paths,
// link targets, size bombs) protects every reader.
//
// An archive is hostile until proven otherwise; whatever it holds, nothing is
// written outside `dest` and nothing is followed out of it:
//   - names that are absolute or hold a ".." component are refused;
//   - every folder on the way to an entry is opened with O_NOFOLLOW from
//     `dest` down, so an earlier link entry (`sys/evil -> /etc`) is never
//     walked through, and a later regular entry over a link (`sys/x -> /f`,
//     then `sys/x`) replaces the link itself instead of writing through it;
//   - symbolic links are refused unless `allow_symlinks` (captures keep them:
//     SysRoot resolves every link inside its root); hard links must name an
//     entry inside `dest`;
//   - device nodes, FIFOs and sockets are skipped; permissions are always
//     0644 for files and 0755 for folders (no setuid, setgid or sticky bit,
//     no owner from the archive);
//   - bytes, entries, name length and depth are capped (tar bombs);
//   - only gzip is decompressed: no external program is started for it.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"

namespace fabcheck::sys {

// How messages name an archive and what to do about a bad one.
struct ArchiveKind {
  std::string what = "capture";                                       // "capture", "bundle"
  std::string expected = "a .tar.gz written by `fabcheck snapshot`";  // said when it cannot be opened
  std::string remedy = "take a new one with `fabcheck snapshot -o FILE.tar.gz`";  // said when it is damaged
  uint64_t max_bytes = 1ull << 30;                                   // refuse archive "bombs"
  bool allow_symlinks = false;  // kept as stored: only for readers that resolve links inside the root
  uint64_t max_entries = 200'000;  // a DGX capture holds ~1,400
  size_t max_name_bytes = 1024;
  int max_depth = 48;  // path components; sysfs device paths reach ~16
};

// ".tar.gz", ".tgz" or ".tar".
bool IsTarballPath(const std::string& path);

// Unpacks `tarball` into the existing directory `dest` (see above). On error
// `dest` may hold part of the archive: the caller removes it (TempDir).
Status ExtractArchive(const std::string& tarball, const std::string& dest, const ArchiveKind& kind = {});

// Where an archive is written. A regular file (or a new name) is written to a
// fresh temporary name beside it (O_EXCL: a planted "<name>.partial" link is
// never written through) and renamed into place by Commit(), so a full disk
// never leaves a truncated archive under the final name; a link to a file
// keeps the link. Anything else is never renamed over: a FIFO, pipe or
// character device (/dev/stdout, /dev/null) is streamed into, and a folder or
// a block device is refused. Destroyed without Commit(), the temporary file
// is removed.
class ArchiveOutput {
 public:
  static Result<ArchiveOutput> Open(const std::string& path);
  ArchiveOutput(ArchiveOutput&& other) noexcept;
  ArchiveOutput& operator=(ArchiveOutput&&) = delete;
  ~ArchiveOutput();

  int fd() const { return fd_; }
  bool streaming() const { return temp_path_.empty(); }
  // Flushes and renames into place (streams need nothing).
  Status Commit();

 private:
  ArchiveOutput() = default;
  void Discard();
  std::string path_;        // as given, for messages
  std::string final_path_;  // the regular file to rename onto
  std::string temp_path_;   // "" when streaming
  int fd_ = -1;
};

// Packs the tree under `dir` (regular files, directories, symbolic links as
// links) into a gzip tarball at `output` (through ArchiveOutput), with names
// relative to `dir`.
Status PackDirectory(const std::string& dir, const std::string& output);

}  // namespace fabcheck::sys
