#include "sys/archive.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <system_error>
#include <utility>
#include <vector>

#include "base/fd.h"
#include "base/strings.h"

namespace fabcheck::sys {
namespace {

using Parts = std::vector<std::string>;

std::string Joined(const Parts& parts, size_t count) {
  std::string out;
  for (size_t i = 0; i < count && i < parts.size(); ++i) out += (i ? "/" : "") + parts[i];
  return out;
}

class Unpacker {
 public:
  Unpacker(const std::string& tarball, const ArchiveKind& options) : tarball_(tarball), options_(options) {}

  Status Refuse(const std::string& why) const {
    return InvalidArgumentError(options_.what + " " + tarball_ + " " + why + "; refusing to unpack it");
  }

  // The entry name as components, checked. Empty: the archive's root itself.
  Result<Parts> Split(const char* raw) const {
    if (raw == nullptr) return Refuse("holds an entry whose name cannot be decoded");
    std::string name = raw;
    if (name.size() > options_.max_name_bytes) {
      return Refuse("holds an entry name of " + std::to_string(name.size()) + " bytes (more than " +
                    std::to_string(options_.max_name_bytes) + ")");
    }
    if (!name.empty() && name.front() == '/') return Refuse("holds an unsafe path '" + name + "'");
    Parts parts;
    for (auto& part : fabcheck::Split(name, '/', /*skip_empty=*/true)) {
      if (part == ".") continue;
      if (part == "..") return Refuse("holds an unsafe path '" + name + "'");
      parts.push_back(std::move(part));
    }
    if (parts.size() > static_cast<size_t>(options_.max_depth)) {
      return Refuse("holds an entry nested " + std::to_string(parts.size()) + " folders deep (more than " +
                    std::to_string(options_.max_depth) + ")");
    }
    return parts;
  }

  Status OpenRoot(const std::string& dest) {
    root_.Reset(::open(dest.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!root_.valid()) return ErrnoError(errno, "cannot open " + dest + " to unpack " + tarball_);
    return Status::Ok();
  }

  // The folder dest/parts[0..count), made when missing; never through a link.
  // The folders of the last call stay open and the common part of the path
  // is not walked again (entries are sorted, so most share all but their
  // last component): one openat per new folder instead of one per component
  // of every entry. A folder once open stays a folder: Clear() never
  // replaces one. The fd returned is borrowed until the next call.
  Result<int> OpenFolder(const Parts& parts, size_t count) {
    size_t keep = 0;
    while (keep < count && keep < open_names_.size() && open_names_[keep] == parts[keep]) ++keep;
    open_names_.resize(keep);
    open_fds_.resize(keep);
    for (size_t i = keep; i < count; ++i) {
      const int at = i == 0 ? root_.get() : open_fds_[i - 1].get();
      const char* name = parts[i].c_str();
      int fd = ::openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0 && errno == ENOENT) {
        if (::mkdirat(at, name, 0755) != 0 && errno != EEXIST) {
          return ErrnoError(errno, "cannot unpack " + Joined(parts, i + 1) + " from " + tarball_,
                            "is the temporary folder full? set TMPDIR");
        }
        fd = ::openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      }
      if (fd < 0) {
        if (errno == ELOOP || errno == ENOTDIR) {
          return Refuse("holds an entry under " + Joined(parts, i + 1) +
                        ", which it made a link or a file (an archive that writes through links)");
        }
        return ErrnoError(errno, "cannot unpack " + Joined(parts, i + 1) + " from " + tarball_);
      }
      open_fds_.emplace_back(fd);
      open_names_.push_back(parts[i]);
    }
    return count == 0 ? root_.get() : open_fds_[count - 1].get();
  }

  // The folder an entry goes in.
  Result<int> Parent(const Parts& parts) { return OpenFolder(parts, parts.size() - 1); }

  // Removes what an earlier entry put at the name (a link is removed, never
  // followed); a folder is not replaced.
  Status Clear(int parent, const Parts& parts) const {
    struct stat st {};
    const char* leaf = parts.back().c_str();
    if (::fstatat(parent, leaf, &st, AT_SYMLINK_NOFOLLOW) != 0) {
      return errno == ENOENT ? Status::Ok() : ErrnoError(errno, "cannot unpack " + Joined(parts, parts.size()));
    }
    if (S_ISDIR(st.st_mode)) return Refuse("holds " + Joined(parts, parts.size()) + " both as a folder and a file");
    if (::unlinkat(parent, leaf, 0) != 0) return ErrnoError(errno, "cannot unpack " + Joined(parts, parts.size()));
    return Status::Ok();
  }

  Status Data(struct archive* reader, struct archive_entry* entry, int parent, const Parts& parts) {
    const std::string name = Joined(parts, parts.size());
    la_int64_t declared = archive_entry_size_is_set(entry) ? archive_entry_size(entry) : -1;
    if (declared > 0 && stats_.bytes + static_cast<uint64_t>(declared) > options_.max_bytes) {
      return TooLarge();
    }
    UniqueFd fd(::openat(parent, parts.back().c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
    if (!fd.valid()) return ErrnoError(errno, "cannot unpack " + name + " from " + tarball_);
    const void* block = nullptr;
    size_t size = 0;
    la_int64_t offset = 0;
    int rc;
    while ((rc = archive_read_data_block(reader, &block, &size, &offset)) == ARCHIVE_OK) {
      if (offset < 0 || (declared >= 0 && offset + static_cast<la_int64_t>(size) > declared)) {
        return Refuse("holds " + name + " with data beyond its declared size");
      }
      stats_.bytes += size;
      if (stats_.bytes > options_.max_bytes) return TooLarge();
      if (::pwrite(fd.get(), block, size, offset) != static_cast<ssize_t>(size)) {
        return ErrnoError(errno, "cannot unpack " + name + " from " + tarball_, "is the temporary folder full? set TMPDIR");
      }
    }
    if (rc != ARCHIVE_EOF) {
      return DataLossError(options_.what + " " + tarball_ + " is truncated in " + name + ": " +
                           Error(reader) + Remedy());
    }
    return Status::Ok();
  }

  Status Entry(struct archive* reader, struct archive_entry* entry) {
    if (++stats_.entries > options_.max_entries) {
      return ResourceExhaustedError(options_.what + " " + tarball_ + " holds more than " +
                                    std::to_string(options_.max_entries) + " entries; not a fabcheck " + options_.what);
    }
    ASSIGN_OR_RETURN(Parts parts, Split(archive_entry_pathname(entry)));
    if (parts.empty()) return Status::Ok();  // "./": the root itself
    const std::string name = Joined(parts, parts.size());
    if (const char* hardlink = archive_entry_hardlink(entry)) {
      ASSIGN_OR_RETURN(Parts target, Split(hardlink));
      if (target.empty()) return Refuse("holds a hard link " + name + " to the root folder");
      // Its own descriptor: opening the entry's folder next may close it.
      ASSIGN_OR_RETURN(int borrowed, OpenFolder(target, target.size() - 1));
      UniqueFd target_parent(::fcntl(borrowed, F_DUPFD_CLOEXEC, 0));
      if (!target_parent.valid()) return ErrnoError(errno, "cannot unpack " + name + " from " + tarball_);
      ASSIGN_OR_RETURN(int parent, Parent(parts));
      RETURN_IF_ERROR(Clear(parent, parts));
      // flags 0: a link is linked as itself, never followed.
      if (::linkat(target_parent.get(), target.back().c_str(), parent, parts.back().c_str(), 0) != 0) {
        return errno == ENOENT ? Refuse("holds a hard link " + name + " to " + hardlink + ", which it does not hold")
                               : ErrnoError(errno, "cannot unpack " + name + " from " + tarball_);
      }
      return Status::Ok();
    }
    switch (archive_entry_filetype(entry)) {
      case AE_IFDIR: {
        ASSIGN_OR_RETURN(int made, OpenFolder(parts, parts.size()));
        (void)made;
        return Status::Ok();
      }
      case AE_IFLNK: {
        const char* target = archive_entry_symlink(entry);
        if (!options_.allow_symlinks) {
          return Refuse("holds a symbolic link " + name + " -> " + (target ? target : "?") + " (a " + options_.what +
                        " holds none)");
        }
        if (target == nullptr || *target == '\0') return Refuse("holds a link " + name + " without a target");
        ASSIGN_OR_RETURN(int parent, Parent(parts));
        RETURN_IF_ERROR(Clear(parent, parts));
        if (::symlinkat(target, parent, parts.back().c_str()) != 0) {
          return ErrnoError(errno, "cannot unpack link " + name + " from " + tarball_);
        }
        return Status::Ok();
      }
      case AE_IFREG: {
        ASSIGN_OR_RETURN(int parent, Parent(parts));
        RETURN_IF_ERROR(Clear(parent, parts));
        return Data(reader, entry, parent, parts);
      }
      default:
        ++stats_.skipped;  // device nodes, FIFOs and sockets are never unpacked
        return Status::Ok();
    }
  }

  
  std::string Remedy() const { return options_.remedy.empty() ? "" : " (" + options_.remedy + ")"; }
  std::string Expected() const { return options_.expected.empty() ? "" : " (expected " + options_.expected + ")"; }
  static std::string Error(struct archive* a) {
    const char* text = archive_error_string(a);
    return text ? text : "unknown error";
  }

 private:
  struct Stats {
    uint64_t entries = 0;
    uint64_t bytes = 0;
    uint64_t skipped = 0;  // device nodes, FIFOs, sockets
  };

  Status TooLarge() const {
    return ResourceExhaustedError(options_.what + " " + tarball_ + " unpacks to more than " +
                                  std::to_string(options_.max_bytes >> 20) + " MiB; not a fabcheck " +
                                  options_.what);
  }

  const std::string& tarball_;
  const ArchiveKind& options_;
  UniqueFd root_;
  Parts open_names_;               // the folders OpenFolder last walked, from the root
  std::vector<UniqueFd> open_fds_;  // open_fds_[i]: dest/open_names_[0..i]
  Stats stats_;
};

}  // namespace

bool IsTarballPath(const std::string& path) {
  return EndsWith(path, ".tar.gz") || EndsWith(path, ".tgz") || EndsWith(path, ".tar");
}

Status ExtractArchive(const std::string& tarball, const std::string& dest, const ArchiveKind& kind) {
  struct archive* reader = archive_read_new();
  struct ArchiveCloser {
    struct archive* a;
    ~ArchiveCloser() { archive_read_free(a); }
  } closer{reader};
  // gzip only (and plain tar): no external decompressor is ever started for
  // an archive somebody sent.
  archive_read_support_filter_gzip(reader);
  archive_read_support_format_tar(reader);
  Unpacker unpacker(tarball, kind);
  if (archive_read_open_filename(reader, tarball.c_str(), 1 << 16) != ARCHIVE_OK) {
    return InvalidArgumentError("cannot open " + kind.what + " " + tarball + ": " + Unpacker::Error(reader) +
                                unpacker.Expected());
  }
  RETURN_IF_ERROR(unpacker.OpenRoot(dest));
  struct archive_entry* entry = nullptr;
  while (true) {
    int rc = archive_read_next_header(reader, &entry);
    if (rc == ARCHIVE_EOF) break;
    if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN) {
      return DataLossError(kind.what + " " + tarball + " is damaged: " + Unpacker::Error(reader) + unpacker.Remedy());
    }
    RETURN_IF_ERROR(unpacker.Entry(reader, entry));
  }
  return Status::Ok();
}

Result<ArchiveOutput> ArchiveOutput::Open(const std::string& path) {
  ArchiveOutput out;
  out.path_ = path;
  if (path.empty()) return InvalidArgumentError("no output file given");
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    if (S_ISDIR(st.st_mode)) {
      return InvalidArgumentError("cannot write " + path + ": it is a folder (give a file name, e.g. " + path +
                                  "/node.tar.gz)");
    }
    if (S_ISBLK(st.st_mode)) {
      return InvalidArgumentError("cannot write " + path +
                                  ": it is a block device; refusing to write over a disk (give a file name)");
    }
    out.fd_ = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (out.fd_ < 0) return ErrnoError(errno, "cannot write " + path);
    return out;
  }
  out.final_path_ = path;
  struct stat lst {};
  if (::lstat(path.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)) {
    std::error_code ec;
    auto real = std::filesystem::canonical(path, ec);
    if (!ec) out.final_path_ = real.string();
  }
  auto slash = out.final_path_.rfind('/');
  std::string dir = slash == std::string::npos ? "" : out.final_path_.substr(0, slash + 1);
  std::string base = slash == std::string::npos ? out.final_path_ : out.final_path_.substr(slash + 1);
  std::string pattern = dir + "." + base + ".XXXXXX.partial";
  out.fd_ = ::mkostemps(pattern.data(), 8, O_CLOEXEC);
  if (out.fd_ < 0) return ErrnoError(errno, "cannot write " + path, "check the folder exists and is writable");
  out.temp_path_ = pattern;
  if (::fchmod(out.fd_, 0644) != 0) return ErrnoError(errno, "cannot write " + path);
  return out;
}

ArchiveOutput::ArchiveOutput(ArchiveOutput&& other) noexcept
    : path_(std::move(other.path_)),
      final_path_(std::move(other.final_path_)),
      temp_path_(std::exchange(other.temp_path_, std::string())),
      fd_(std::exchange(other.fd_, -1)) {}

ArchiveOutput::~ArchiveOutput() {
  Discard();
  if (fd_ >= 0) ::close(fd_);
}

void ArchiveOutput::Discard() {
  if (!temp_path_.empty()) ::unlink(temp_path_.c_str());
  temp_path_.clear();
}

Status ArchiveOutput::Commit() {
  if (temp_path_.empty()) return Status::Ok();
  if (::fsync(fd_) != 0) {
    int err = errno;
    Discard();
    return ErrnoError(err, "cannot finish " + path_, "is the disk full?");
  }
  if (::rename(temp_path_.c_str(), final_path_.c_str()) != 0) {
    int err = errno;
    Discard();
    return ErrnoError(err, "cannot move " + path_ + " into place");
  }
  temp_path_.clear();
  return Status::Ok();
}

Status PackDirectory(const std::string& dir, const std::string& output) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return InvalidArgumentError("cannot pack " + dir + ": not a directory");
  // Sorted, so the same tree always packs to the same member order.
  std::vector<fs::path> entries;
  for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::none, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    entries.push_back(it->path());
  }
  if (ec) return ErrnoError(ec.value(), "cannot list " + dir + " to pack it");
  std::sort(entries.begin(), entries.end());

  ASSIGN_OR_RETURN(ArchiveOutput out, ArchiveOutput::Open(output));
  const std::string& temp_path = output;  // what messages name
  struct archive* writer = archive_write_new();
  struct ArchiveCloser {
    struct archive* a;
    ~ArchiveCloser() { archive_write_free(a); }
  } closer{writer};
  archive_write_add_filter_gzip(writer);
  archive_write_set_format_pax_restricted(writer);
  archive_write_set_bytes_in_last_block(writer, 1);
  if (archive_write_open_fd(writer, out.fd()) != ARCHIVE_OK) {
    return ErrnoError(archive_errno(writer), "cannot write " + output);
  }
  Status status = Status::Ok();
  std::vector<char> buffer(1 << 16);
  for (const auto& path : entries) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
      status = ErrnoError(errno, "cannot read " + path.string() + " to pack it");
      break;
    }
    if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) continue;
    const std::string name = fs::relative(path, dir).string();
    struct archive_entry* entry = archive_entry_new();
    archive_entry_set_pathname(entry, name.c_str());
    archive_entry_set_mtime(entry, st.st_mtime, 0);
    archive_entry_set_perm(entry, S_ISDIR(st.st_mode) ? 0755 : (S_ISLNK(st.st_mode) ? 0777 : 0644));
    std::string link_target;
    if (S_ISDIR(st.st_mode)) {
      archive_entry_set_filetype(entry, AE_IFDIR);
    } else if (S_ISLNK(st.st_mode)) {
      link_target = fs::read_symlink(path, ec).string();
      archive_entry_set_filetype(entry, AE_IFLNK);
      archive_entry_set_symlink(entry, link_target.c_str());
    } else {
      archive_entry_set_filetype(entry, AE_IFREG);
      archive_entry_set_size(entry, st.st_size);
    }
    if (archive_write_header(writer, entry) != ARCHIVE_OK) {
      status = ErrnoError(archive_errno(writer), "cannot add " + name + " to " + temp_path, "is the disk full?");
    } else if (S_ISREG(st.st_mode)) {
      UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
      if (!fd.valid()) status = ErrnoError(errno, "cannot read " + path.string() + " to pack it");
      ssize_t n = 0;
      while (status.ok() && (n = ::read(fd.get(), buffer.data(), buffer.size())) > 0) {
        if (archive_write_data(writer, buffer.data(), static_cast<size_t>(n)) != n) {
          status = ErrnoError(archive_errno(writer), "cannot write " + name + " into " + temp_path, "is the disk full?");
        }
      }
      if (status.ok() && n < 0) status = ErrnoError(errno, "cannot read " + path.string() + " to pack it");
    }
    archive_entry_free(entry);
    if (!status.ok()) break;
  }
  if (status.ok() && archive_write_close(writer) != ARCHIVE_OK) {
    status = ErrnoError(archive_errno(writer), "cannot finish " + temp_path, "is the disk full?");
  }
  if (!status.ok()) return status;  // the temporary file goes with `out`
  return out.Commit();
}

}  // namespace fabcheck::sys
