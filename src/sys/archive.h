// Tarballs fabcheck writes and reads: snapshot captures and ladder evidence
// bundles. One extractor for both, so every hardening of it (unsafe paths,
// link targets, size bombs) protects every reader.
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
};

// ".tar.gz", ".tgz" or ".tar".
bool IsTarballPath(const std::string& path);

// Unpacks `tarball` into the existing directory `dest`. Refuses absolute
// paths and "..", never writes devices or fifos, stops past kind.max_bytes.
Status ExtractArchive(const std::string& tarball, const std::string& dest, const ArchiveKind& kind = {});

// Packs the tree under `dir` (regular files, directories, symbolic links as
// links) into a gzip tarball at `output`, with names relative to `dir`. Writes
// `output`.partial first and renames it, so a full disk never leaves a
// truncated archive under the final name.
Status PackDirectory(const std::string& dir, const std::string& output);

}  // namespace fabcheck::sys
