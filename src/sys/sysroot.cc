#include "sys/sysroot.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <mutex>

#include "base/fd.h"
#include "base/log.h"
#include "base/strings.h"
#include "base/temp_dir.h"
#include "sys/archive.h"

namespace fabcheck::sys {
namespace {

constexpr size_t kMaxFileBytes = 16 << 20;        // no sysfs or proc file we read is near this
constexpr int kMaxLinkHops = 40;                  // as the kernel's ELOOP limit

std::vector<std::string> Components(std::string_view path) { return Split(path, '/', /*skip_empty=*/true); }

std::string Parent(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos || slash == 0 ? std::string() : path.substr(0, slash);
}


}  // namespace

struct SysRoot::State {
  Kind kind = Kind::kLive;
  std::string base;          // "" for live
  std::string display;       // what messages name
  std::unique_ptr<TempDir> temp_dir;  // a capture's unpacked copy, removed with the last SysRoot

  mutable std::mutex mutex;  // guards the recording below
  mutable bool recording = false;
  mutable std::map<std::string, std::string> files;  // path -> content
  mutable std::map<std::string, std::string> links;  // path -> target
  mutable std::set<std::string> dirs;
  mutable std::map<std::string, std::string> meta;   // name -> content
};

SysRoot SysRoot::Live() {
  auto state = std::make_shared<State>();
  state->kind = Kind::kLive;
  return SysRoot(state);
}

Result<SysRoot> SysRoot::Open(const std::string& path) {
  const std::string kWhat =
      " (a sysroot is a directory holding sys/ (and proc/) as on a node, or a capture written by "
      "`fabcheck snapshot -o FILE.tar.gz`)";
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return ErrnoError(errno, "cannot open sysroot " + path, "check the --sysroot path");
  auto state = std::make_shared<State>();
  if (S_ISDIR(st.st_mode)) {
    state->kind = path == "/" ? Kind::kLive : Kind::kDirectory;
    state->base = path == "/" ? "" : std::filesystem::absolute(path).lexically_normal().string();
    while (state->base.size() > 1 && state->base.back() == '/') state->base.pop_back();
    state->display = state->base;
  } else if (S_ISREG(st.st_mode) && IsTarballPath(path)) {
    auto temp = TempDir::Create("fabcheck-capture");
    if (!temp.ok()) return temp.status().WithContext("cannot unpack " + path);
    state->kind = Kind::kCapture;
    state->temp_dir = std::move(*temp);
    state->base = state->temp_dir->path();
    state->display = path;
    ArchiveKind capture;  // the defaults describe a capture
    capture.allow_symlinks = true;  // sysfs is links; Resolve() keeps every one inside the root
    RETURN_IF_ERROR(ExtractArchive(path, state->base, capture));
  } else {
    return InvalidArgumentError(path + " is not a sysroot" + kWhat);
  }
  SysRoot root(state);
  // An unreadable tree is not "a tree without devices".
  for (const std::string dir : {"", "/sys"}) {
    std::string host = root.HostPath(dir.empty() ? "/" : dir);
    if (!root.live() && ::access(host.c_str(), R_OK | X_OK) != 0 && errno != ENOENT) {
      return ErrnoError(errno, "cannot read sysroot " + path + (dir.empty() ? "" : ": " + dir),
                        "run as root, or as the owner of the tree");
    }
  }
  if (!root.IsDirectory("/sys")) {
    return InvalidArgumentError(path + " is not a sysroot: it has no sys/ directory" + kWhat);
  }
  return root;
}

SysRoot::Kind SysRoot::kind() const { return state_->kind; }

std::string SysRoot::Describe() const {
  switch (state_->kind) {
    case Kind::kLive: return "live node";
    case Kind::kDirectory: return "directory " + state_->display;
    case Kind::kCapture: return "capture " + state_->display;
  }
  return "?";
}

std::string SysRoot::DisplayPath(std::string_view path) const {
  switch (state_->kind) {
    case Kind::kLive: return std::string(path);
    case Kind::kDirectory: return state_->base + std::string(path);
    case Kind::kCapture: return state_->display + ":" + std::string(path);
  }
  return std::string(path);
}

std::string SysRoot::HostPath(std::string_view resolved) const { return state_->base + std::string(resolved); }

UniqueFd SysRoot::OpenResolved(std::string_view resolved, int flags) const {
  return UniqueFd(::open(HostPath(resolved).c_str(), flags));
}

Result<std::string> SysRoot::Resolve(std::string_view path) const {
  std::deque<std::string> todo;
  for (auto& c : Components(path)) todo.push_back(std::move(c));
  std::string current;  // resolved so far; "" is the root
  int hops = 0;
  while (!todo.empty()) {
    std::string part = std::move(todo.front());
    todo.pop_front();
    if (part == ".") continue;
    if (part == "..") {
      current = Parent(current);
      continue;
    }
    std::string candidate = current + "/" + part;
    struct stat st {};
    if (::lstat(HostPath(candidate).c_str(), &st) != 0) {
      if (todo.empty()) return candidate;  // a missing last component is the reader's error to report
      return ErrnoError(errno, "cannot resolve " + DisplayPath(path));
    }
    if (!S_ISLNK(st.st_mode)) {
      current = std::move(candidate);
      continue;
    }
    if (++hops > kMaxLinkHops) return ErrnoError(ELOOP, "cannot resolve " + DisplayPath(path));
    char target[4096];
    ssize_t n = ::readlink(HostPath(candidate).c_str(), target, sizeof(target) - 1);
    if (n < 0) return ErrnoError(errno, "cannot read link " + DisplayPath(candidate));
    target[n] = '\0';
    if (recording()) {
      std::lock_guard lock(state_->mutex);
      state_->links[candidate] = target;
    }
    auto target_parts = Components(target);
    todo.insert(todo.begin(), target_parts.begin(), target_parts.end());
    if (target[0] == '/') current.clear();
  }
  return current.empty() ? std::string("/") : current;
}

Result<std::string> SysRoot::ReadFile(std::string_view path) const {
  ASSIGN_OR_RETURN(std::string resolved, Resolve(path));
  UniqueFd fd(::open(HostPath(resolved).c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (!fd.valid()) return ErrnoError(errno, "cannot read " + DisplayPath(path));
  std::string content;
  char buffer[8192];
  while (true) {
    ssize_t n = ::read(fd.get(), buffer, sizeof(buffer));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(errno, "cannot read " + DisplayPath(path));
    }
    if (n == 0) break;
    content.append(buffer, static_cast<size_t>(n));
    if (content.size() > kMaxFileBytes) {
      return ResourceExhaustedError("cannot read " + DisplayPath(path) + ": larger than 16 MiB, not an attribute file");
    }
  }
  if (recording()) {
    std::lock_guard lock(state_->mutex);
    state_->files[resolved] = content;
  }
  return content;
}

Result<std::string> SysRoot::ReadAttribute(std::string_view path) const {
  ASSIGN_OR_RETURN(std::string content, ReadFile(path));
  return std::string(Trim(content));
}

Result<std::vector<std::string>> SysRoot::ListDir(std::string_view path) const {
  ASSIGN_OR_RETURN(std::string resolved, Resolve(path));
  std::vector<std::string> names;
  std::error_code ec;
  std::filesystem::directory_iterator it(HostPath(resolved), ec);
  if (ec) return ErrnoError(ec.value(), "cannot list " + DisplayPath(path));
  for (; it != std::filesystem::directory_iterator(); it.increment(ec)) {
    if (ec) return ErrnoError(ec.value(), "cannot list " + DisplayPath(path));
    names.push_back(it->path().filename().string());
  }
  std::sort(names.begin(), names.end());
  if (recording()) {
    std::lock_guard lock(state_->mutex);
    state_->dirs.insert(resolved);
    // Listed children that are links or directories are kept so a capture
    // lists the same way; unread regular files are not (reading some sysfs
    // files has side effects or blocks).
    for (const auto& name : names) {
      std::string child = (resolved == "/" ? "" : resolved) + "/" + name;
      struct stat st {};
      if (::lstat(HostPath(child).c_str(), &st) != 0) continue;
      if (S_ISLNK(st.st_mode)) {
        char target[4096];
        ssize_t n = ::readlink(HostPath(child).c_str(), target, sizeof(target) - 1);
        if (n >= 0) state_->links[child] = std::string(target, static_cast<size_t>(n));
      } else if (S_ISDIR(st.st_mode)) {
        state_->dirs.insert(child);
      }
    }
  }
  return names;
}

Result<std::string> SysRoot::ReadLink(std::string_view path) const {
  ASSIGN_OR_RETURN(std::string parent, Resolve(Parent(std::string(path))));
  std::string name = Components(path).empty() ? "" : Components(path).back();
  std::string link = (parent == "/" ? "" : parent) + "/" + name;
  char target[4096];
  ssize_t n = ::readlink(HostPath(link).c_str(), target, sizeof(target) - 1);
  if (n < 0) return ErrnoError(errno, "cannot read link " + DisplayPath(path));
  std::string result(target, static_cast<size_t>(n));
  if (recording()) {
    std::lock_guard lock(state_->mutex);
    state_->links[link] = result;
  }
  return result;
}

bool SysRoot::Exists(std::string_view path) const {
  auto resolved = Resolve(path);
  if (!resolved.ok()) return false;
  struct stat st {};
  bool exists = ::stat(HostPath(*resolved).c_str(), &st) == 0;
  if (exists && recording() && S_ISDIR(st.st_mode)) {
    std::lock_guard lock(state_->mutex);
    state_->dirs.insert(*resolved);
  }
  return exists;
}

bool SysRoot::IsDirectory(std::string_view path) const {
  auto resolved = Resolve(path);
  struct stat st {};
  return resolved.ok() && ::stat(HostPath(*resolved).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

Result<std::string> SysRoot::ReadMeta(std::string_view name) const {
  if (live()) {
    return NotFoundError("no captured '" + std::string(name) + "' on a live node (query the kernel instead)");
  }
  return ReadFile(std::string(kCaptureMetaDir) + "/" + std::string(name));
}

void SysRoot::RecordMeta(std::string_view name, std::string content) const {
  if (!recording()) return;
  std::lock_guard lock(state_->mutex);
  state_->meta[std::string(name)] = std::move(content);
}

void SysRoot::StartRecording() const {
  std::lock_guard lock(state_->mutex);
  state_->recording = true;
}

bool SysRoot::recording() const {
  std::lock_guard lock(state_->mutex);
  return state_->recording;
}

Status SysRoot::WriteCapture(const std::string& output_path, const std::string& info_json) const {
  std::lock_guard lock(state_->mutex);
  ASSIGN_OR_RETURN(ArchiveOutput target, ArchiveOutput::Open(output_path));
  struct archive* writer = archive_write_new();
  struct ArchiveCloser {
    struct archive* a;
    ~ArchiveCloser() { archive_write_free(a); }
  } closer{writer};
  archive_write_add_filter_gzip(writer);
  archive_write_set_format_pax_restricted(writer);
  // Writes of a few KiB: no padding to 10 KiB blocks when streaming into a pipe.
  archive_write_set_bytes_in_last_block(writer, 1);
  if (archive_write_open_fd(writer, target.fd()) != ARCHIVE_OK) {
    return ErrnoError(archive_errno(writer), "cannot write capture " + output_path);
  }

  std::set<std::string> all_dirs = state_->dirs;
  auto add_parents = [&](const std::string& path) {
    for (std::string p = Parent(path); !p.empty(); p = Parent(p)) all_dirs.insert(p);
  };
  for (const auto& [path, _] : state_->files) add_parents(path);
  for (const auto& [path, _] : state_->links) add_parents(path);
  for (const auto& dir : std::set<std::string>(all_dirs)) add_parents(dir);
  all_dirs.insert("/fabcheck");

  Status status = Status::Ok();
  auto add_entry = [&](const std::string& path, mode_t type, const std::string* content, const std::string* link) {
    if (!status.ok()) return;
    struct archive_entry* entry = archive_entry_new();
    archive_entry_set_pathname(entry, path.c_str() + 1);  // relative: "sys/class/..."
    archive_entry_set_filetype(entry, type);
    archive_entry_set_perm(entry, type == AE_IFDIR ? 0755 : (type == AE_IFLNK ? 0777 : 0644));
    archive_entry_set_mtime(entry, 0, 0);
    if (content) archive_entry_set_size(entry, static_cast<la_int64_t>(content->size()));
    if (link) archive_entry_set_symlink(entry, link->c_str());
    if (archive_write_header(writer, entry) != ARCHIVE_OK ||
        (content && !content->empty() &&
         archive_write_data(writer, content->data(), content->size()) != static_cast<la_ssize_t>(content->size()))) {
      status = ErrnoError(archive_errno(writer), "cannot write " + path + " into capture " + output_path,
                          target.streaming() ? "is the disk full?" : "is the disk full? the partial file has been removed");
    }
    archive_entry_free(entry);
  };
  for (const auto& dir : all_dirs) {
    if (!state_->links.count(dir)) add_entry(dir, AE_IFDIR, nullptr, nullptr);
  }
  for (const auto& [path, target] : state_->links) add_entry(path, AE_IFLNK, nullptr, &target);
  for (const auto& [path, content] : state_->files) {
    if (!state_->links.count(path)) add_entry(path, AE_IFREG, &content, nullptr);
  }
  for (const auto& [name, content] : state_->meta) {
    add_entry(std::string(kCaptureMetaDir) + "/" + name, AE_IFREG, &content, nullptr);
  }
  add_entry(std::string(kCaptureInfoFile), AE_IFREG, &info_json, nullptr);
  if (status.ok() && archive_write_close(writer) != ARCHIVE_OK) {
    status = ErrnoError(archive_errno(writer), "cannot finish capture " + output_path, "is the disk full?");
  }
  if (!status.ok()) return status;  // the temporary file goes with `target`
  return target.Commit();
}

}  // namespace fabcheck::sys
