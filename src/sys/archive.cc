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
#include <vector>

#include "base/fd.h"
#include "base/strings.h"

namespace fabcheck::sys {

bool IsTarballPath(const std::string& path) {
  return EndsWith(path, ".tar.gz") || EndsWith(path, ".tgz") || EndsWith(path, ".tar");
}

Status ExtractArchive(const std::string& tarball, const std::string& dest, const ArchiveKind& kind) {
  struct archive* reader = archive_read_new();
  archive_read_support_filter_all(reader);
  archive_read_support_format_tar(reader);
  struct ArchiveCloser {
    struct archive* a;
    ~ArchiveCloser() { archive_read_free(a); }
  } closer{reader};
  const std::string& what = kind.what;
  if (archive_read_open_filename(reader, tarball.c_str(), 1 << 16) != ARCHIVE_OK) {
    return InvalidArgumentError("cannot open " + what + " " + tarball + ": " + archive_error_string(reader) +
                                " (expected " + kind.expected + ")");
  }
  uint64_t total = 0;
  struct archive_entry* entry = nullptr;
  while (true) {
    int rc = archive_read_next_header(reader, &entry);
    if (rc == ARCHIVE_EOF) break;
    if (rc != ARCHIVE_OK) {
      return DataLossError(what + " " + tarball + " is damaged: " + archive_error_string(reader) + " (" +
                           kind.remedy + ")");
    }
    std::string name = archive_entry_pathname(entry);
    while (StartsWith(name, "./")) name.erase(0, 2);
    if (name.empty() || name.front() == '/' || name.find("..") != std::string::npos) {
      return InvalidArgumentError(what + " " + tarball + " holds an unsafe path '" + name + "'; refusing to read it");
    }
    std::string out = dest + "/" + name;
    std::filesystem::create_directories(std::filesystem::path(out).parent_path());
    switch (archive_entry_filetype(entry)) {
      case AE_IFDIR:
        std::filesystem::create_directories(out);
        break;
      case AE_IFLNK:
        if (::symlink(archive_entry_symlink(entry), out.c_str()) != 0 && errno != EEXIST) {
          return ErrnoError(errno, "cannot unpack link " + name + " from " + tarball);
        }
        break;
      case AE_IFREG: {
        UniqueFd fd(::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
        if (!fd.valid()) return ErrnoError(errno, "cannot unpack " + name + " from " + tarball);
        const void* block = nullptr;
        size_t size = 0;
        la_int64_t offset = 0;
        while ((rc = archive_read_data_block(reader, &block, &size, &offset)) == ARCHIVE_OK) {
          total += size;
          if (total > kind.max_bytes) {
            return ResourceExhaustedError(what + " " + tarball + " unpacks to more than " +
                                          std::to_string(kind.max_bytes >> 20) + " MiB; not a fabcheck " + what);
          }
          if (::pwrite(fd.get(), block, size, offset) != static_cast<ssize_t>(size)) {
            return ErrnoError(errno, "cannot unpack " + name + " from " + tarball, "is the temporary directory full? set TMPDIR");
          }
        }
        if (rc != ARCHIVE_EOF) {
          return DataLossError(what + " " + tarball + " is truncated in " + name + ": " + archive_error_string(reader));
        }
        break;
      }
      default:
        break;  // devices and fifos are never written by fabcheck
    }
  }
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

  const std::string temp_path = output + ".partial";
  struct archive* writer = archive_write_new();
  struct ArchiveCloser {
    struct archive* a;
    ~ArchiveCloser() { archive_write_free(a); }
  } closer{writer};
  archive_write_add_filter_gzip(writer);
  archive_write_set_format_pax_restricted(writer);
  if (archive_write_open_filename(writer, temp_path.c_str()) != ARCHIVE_OK) {
    return ErrnoError(archive_errno(writer), "cannot write " + temp_path, "check the directory exists and is writable");
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
  if (!status.ok()) {
    ::unlink(temp_path.c_str());
    return status;
  }
  if (::rename(temp_path.c_str(), output.c_str()) != 0) {
    int err = errno;
    ::unlink(temp_path.c_str());
    return ErrnoError(err, "cannot move " + temp_path + " into place at " + output);
  }
  return Status::Ok();
}

}  // namespace fabcheck::sys
