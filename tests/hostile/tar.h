// A .tar.gz written entry by entry (libarchive), for archives no fabcheck
// command would write: links out, bombs, odd entry types.
#pragma once

#include <archive.h>
#include <archive_entry.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <string>

namespace fabcheck::hostile {

class Tar {
 public:
  explicit Tar(const std::string& path) : a_(archive_write_new()) {
    archive_write_add_filter_gzip(a_);
    archive_write_set_format_pax_restricted(a_);
    archive_write_open_filename(a_, path.c_str());
  }
  ~Tar() {
    archive_write_close(a_);
    archive_write_free(a_);
  }
  void Add(const std::string& name, mode_t type, const std::string& data = "", const std::string& link = "") {
    struct archive_entry* e = archive_entry_new();
    archive_entry_set_pathname(e, name.c_str());
    archive_entry_set_filetype(e, type);
    archive_entry_set_perm(e, type == AE_IFDIR ? 0755 : 0644);
    archive_entry_set_size(e, static_cast<la_int64_t>(data.size()));
    if (!link.empty()) archive_entry_set_symlink(e, link.c_str());
    archive_write_header(a_, e);
    if (!data.empty()) archive_write_data(a_, data.data(), data.size());
    archive_entry_free(e);
  }

  // A file of `bytes` zeros, written in blocks: a gzip bomb costs the test
  // no memory (1 GiB of zeros packs into ~1 MB).
  void AddZeros(const std::string& name, uint64_t bytes) {
    struct archive_entry* e = archive_entry_new();
    archive_entry_set_pathname(e, name.c_str());
    archive_entry_set_filetype(e, AE_IFREG);
    archive_entry_set_perm(e, 0644);
    archive_entry_set_size(e, static_cast<la_int64_t>(bytes));
    archive_write_header(a_, e);
    const std::string block(1 << 20, '\0');
    for (uint64_t done = 0; done < bytes; done += block.size()) {
      archive_write_data(a_, block.data(), std::min<uint64_t>(block.size(), bytes - done));
    }
    archive_entry_free(e);
  }

 private:
  struct archive* a_;
};

}  // namespace fabcheck::hostile
