#include "sys/dir_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace fabcheck::sys {

Result<std::vector<DirFile>> ReadDirectoryFiles(const SysRoot& root, std::string_view dir,
                                                const std::vector<std::string>& only) {
  constexpr size_t kMaxFileBytes = 16 << 20;
  ASSIGN_OR_RETURN(std::string resolved, root.Resolve(dir));
  const std::string prefix = resolved == "/" ? "" : resolved;
  UniqueFd dir_fd = root.OpenResolved(resolved, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (!dir_fd.valid()) return ErrnoError(errno, "cannot list " + root.DisplayPath(dir));

  std::vector<DirFile> files;
  int list_fd = ::dup(dir_fd.get());
  DIR* listing = list_fd >= 0 ? ::fdopendir(list_fd) : nullptr;
  if (listing == nullptr) {
    int err = errno;
    if (list_fd >= 0) ::close(list_fd);
    return ErrnoError(err, "cannot list " + root.DisplayPath(dir));
  }
  while (struct dirent* entry = ::readdir(listing)) {
    std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    if (!only.empty() && std::find(only.begin(), only.end(), name) == only.end()) continue;
    bool regular = entry->d_type == DT_REG;
    if (entry->d_type == DT_UNKNOWN) {
      struct stat st {};
      regular = ::fstatat(dir_fd.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
    }
    if (regular) files.push_back({std::move(name), Status::Ok(), {}});
  }
  ::closedir(listing);
  for (const std::string& name : only) {
    bool present = std::any_of(files.begin(), files.end(), [&](const DirFile& f) { return f.name == name; });
    if (!present) files.push_back({name, ErrnoError(ENOENT, "cannot read " + root.DisplayPath(prefix + "/" + name)), {}});
  }
  std::sort(files.begin(), files.end(), [](const DirFile& a, const DirFile& b) { return a.name < b.name; });

  for (DirFile& file : files) {
    if (!file.status.ok()) continue;
    if (root.recording()) {
      auto content = root.ReadFile(prefix + "/" + file.name);
      if (content.ok()) {
        file.content = std::move(*content);
      } else {
        file.status = content.status();
      }
      continue;
    }
    UniqueFd fd(::openat(dir_fd.get(), file.name.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW));
    if (!fd.valid()) {
      file.status = ErrnoError(errno, "cannot read " + root.DisplayPath(prefix + "/" + file.name));
      continue;
    }
    char buffer[4096];
    while (true) {
      ssize_t n = ::read(fd.get(), buffer, sizeof(buffer));
      if (n < 0) {
        if (errno == EINTR) continue;
        file.status = ErrnoError(errno, "cannot read " + root.DisplayPath(prefix + "/" + file.name));
        break;
      }
      if (n == 0) break;
      file.content.append(buffer, static_cast<size_t>(n));
      // sysfs hands a whole attribute (at most a page) to the first read, and
      // a short read of a regular file is its end: skip the read that sees EOF.
      if (static_cast<size_t>(n) < sizeof(buffer)) break;
      if (file.content.size() > kMaxFileBytes) {
        file.status = ResourceExhaustedError("cannot read " + root.DisplayPath(prefix + "/" + file.name) +
                                             ": larger than 16 MiB, not an attribute file");
        break;
      }
    }
    if (!file.status.ok()) file.content.clear();
  }
  return files;
}

Result<std::vector<std::string>> ListResolvedDirectory(const SysRoot& root, std::string_view resolved) {
  UniqueFd dir_fd = root.OpenResolved(resolved, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  DIR* listing = dir_fd.valid() ? ::fdopendir(dir_fd.get()) : nullptr;
  if (listing == nullptr) return ErrnoError(errno, "cannot list " + root.DisplayPath(resolved));
  dir_fd.Release();  // closedir closes it
  std::vector<std::string> names;
  while (struct dirent* entry = ::readdir(listing)) {
    if (entry->d_name[0] != '.') names.emplace_back(entry->d_name);
  }
  ::closedir(listing);
  return names;
}

Result<std::unique_ptr<AttributeDirectory>> AttributeDirectory::Open(const SysRoot& root, std::string dir,
                                                                     std::vector<std::string> only) {
  auto handle = std::unique_ptr<AttributeDirectory>(new AttributeDirectory(root, std::move(dir), std::move(only)));
  RETURN_IF_ERROR(handle->List());
  return handle;
}

Result<std::vector<DirFile>> AttributeDirectory::ReadAll(bool relist) {
  if (root_.recording()) return ReadDirectoryFiles(root_, dir_, only_);
  if (relist) RETURN_IF_ERROR(List());
  std::vector<DirFile> out;
  out.reserve(entries_.size());
  for (Entry& entry : entries_) {
    DirFile file{entry.name, entry.missing, {}};
    if (file.status.ok()) file.status = Read(entry, file.content);
    out.push_back(std::move(file));
  }
  return out;
}

Status AttributeDirectory::List() {
  // The path resolved last time is tried first: resolving walks every
  // component with lstat (~12 for a port directory behind the class link),
  // which made the periodic re-list the larger part of a scrape's syscalls.
  // A resolved path holds no links, so opening it stays inside the root;
  // if it went away (device removed or renamed) it is resolved again.
  UniqueFd dir_fd;
  if (!prefix_.empty()) {
    dir_fd = root_.OpenResolved(prefix_, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  }
  if (!dir_fd.valid()) {
    ASSIGN_OR_RETURN(std::string resolved, root_.Resolve(dir_));
    prefix_ = resolved == "/" ? "" : resolved;
    dir_fd = root_.OpenResolved(resolved, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  }
  if (!dir_fd.valid()) return ErrnoError(errno, "cannot list " + root_.DisplayPath(dir_));
  int list_fd = ::dup(dir_fd.get());
  DIR* listing = list_fd >= 0 ? ::fdopendir(list_fd) : nullptr;
  if (listing == nullptr) {
    int err = errno;
    if (list_fd >= 0) ::close(list_fd);
    return ErrnoError(err, "cannot list " + root_.DisplayPath(dir_));
  }
  std::vector<std::string> names;
  while (struct dirent* entry = ::readdir(listing)) {
    std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    if (!only_.empty() && std::find(only_.begin(), only_.end(), name) == only_.end()) continue;
    bool regular = entry->d_type == DT_REG;
    if (entry->d_type == DT_UNKNOWN) {
      struct stat st {};
      regular = ::fstatat(dir_fd.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
    }
    if (regular) names.push_back(std::move(name));
  }
  ::closedir(listing);
  std::vector<std::string> missing;
  for (const std::string& name : only_) {
    if (std::find(names.begin(), names.end(), name) == names.end()) missing.push_back(name);
  }
  std::vector<Entry> entries;
  for (std::string& name : names) {
    Entry entry{std::move(name), Status::Ok(), UniqueFd()};
    // Keep the already open file of an unchanged name.
    for (Entry& old : entries_) {
      if (old.name == entry.name && old.fd.valid()) entry.fd = std::move(old.fd);
    }
    if (!entry.fd.valid()) {
      entry.fd.Reset(::openat(dir_fd.get(), entry.name.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW));
    }
    entries.push_back(std::move(entry));
  }
  for (std::string& name : missing) {
    entries.push_back({name, ErrnoError(ENOENT, "cannot read " + root_.DisplayPath(prefix_ + "/" + name)), UniqueFd()});
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.name < b.name; });
  entries_ = std::move(entries);
  return Status::Ok();
}

Status AttributeDirectory::Read(Entry& entry, std::string& content) {
  constexpr size_t kMaxFileBytes = 16 << 20;
  std::string path = prefix_ + "/" + entry.name;
  if (!entry.fd.valid()) {
    // Not kept open (descriptor limit): open it for this read only.
    UniqueFd fd = root_.OpenResolved(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
    if (!fd.valid()) return ErrnoError(errno, "cannot read " + root_.DisplayPath(path));
    return ReadFd(fd.get(), path, content, kMaxFileBytes);
  }
  return ReadFd(entry.fd.get(), path, content, kMaxFileBytes);
}

Status AttributeDirectory::ReadFd(int fd, const std::string& path, std::string& content, size_t limit) {
  char buffer[4096];
  off_t offset = 0;
  while (true) {
    ssize_t n = ::pread(fd, buffer, sizeof(buffer), offset);
    if (n < 0) {
      if (errno == EINTR) continue;
      content.clear();
      return ErrnoError(errno, "cannot read " + root_.DisplayPath(path));
    }
    if (n == 0) break;
    content.append(buffer, static_cast<size_t>(n));
    offset += n;
    if (static_cast<size_t>(n) < sizeof(buffer)) break;  // a whole sysfs attribute, or the end of a file
    if (content.size() > limit) {
      content.clear();
      return ResourceExhaustedError("cannot read " + root_.DisplayPath(path) + ": larger than 16 MiB");
    }
  }
  return Status::Ok();
}

}  // namespace fabcheck::sys
