// ReadDirectoryFiles: every regular file of one directory of a SysRoot, read
// with openat() after a single resolution of the directory.
//
// SysRoot::ReadFile resolves every path component inside the root (an lstat
// per component, so links never escape a capture). That is right for the
// inventory, but the exporter reads ~60 counter files per port on every
// scrape, and 14 lstats per file made a 16-NIC scrape cost ~19,000 syscalls.
// Here the directory is resolved once and its files are opened relative to
// it (O_NOFOLLOW: a link inside the directory is skipped, never followed out
// of the root). When the root is recording (`fabcheck snapshot`), the files
// are read through SysRoot::ReadFile so the capture holds them.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/fd.h"
#include "base/status.h"
#include "sys/sysroot.h"

namespace fabcheck::sys {

struct DirFile {
  std::string name;
  Status status;  // OK: `content` holds the whole file
  std::string content;
};

// Regular files directly inside `dir`, sorted by name (subdirectories and
// links skipped). `only`, when not empty, restricts to those names, and a
// name of `only` that is absent comes back with a NotFound status. A file that
// cannot be read carries its error; the call fails only when the directory
// itself cannot be resolved or listed (NotFound when it does not exist).
Result<std::vector<DirFile>> ReadDirectoryFiles(const SysRoot& root, std::string_view dir,
                                                const std::vector<std::string>& only = {});

// Entry names of a directory that SysRoot::Resolve returned earlier (a path
// with no links left, so it cannot leave the root), without walking the path
// again: for listings repeated on every scrape. "."-names are skipped; fails
// (NotFound when gone) so the caller resolves again.
Result<std::vector<std::string>> ListResolvedDirectory(const SysRoot& root, std::string_view resolved);

// A directory of attribute files that is read again and again (counters on
// every scrape). Keeps the directory and every file open and re-reads each
// with pread() at offset 0, which makes sysfs generate the value afresh: one
// syscall per file and scrape instead of a path walk, open, read and close.
// A file whose device went away fails with ENODEV/ENOENT: the caller drops
// the handle and opens the directory again (which then fails if it is gone).
// Files that cannot be kept open (EMFILE) are opened on each read instead.
// On a recording root every read goes through ReadDirectoryFiles.
class AttributeDirectory {
 public:
  // Resolves and opens `dir`; NotFound when it does not exist.
  static Result<std::unique_ptr<AttributeDirectory>> Open(const SysRoot& root, std::string dir,
                                                          std::vector<std::string> only = {});

  // The current content of every file (sorted by name). `relist` lists the
  // directory again first, to pick up files that appeared or went away.
  Result<std::vector<DirFile>> ReadAll(bool relist);

  const std::string& dir() const { return dir_; }

 private:
  struct Entry {
    std::string name;
    Status missing;  // NotFound for an `only` name that is absent
    UniqueFd fd;
  };

  AttributeDirectory(const SysRoot& root, std::string dir, std::vector<std::string> only)
      : root_(root), dir_(std::move(dir)), only_(std::move(only)) {}

  Status List();
  Status Read(Entry& entry, std::string& content);
  Status ReadFd(int fd, const std::string& path, std::string& content, size_t limit);

  SysRoot root_;
  std::string dir_;
  std::vector<std::string> only_;
  std::string prefix_;
  std::vector<Entry> entries_;
};

}  // namespace fabcheck::sys
