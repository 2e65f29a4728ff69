// The evidence bundle: manifest.json (model::LadderManifest, schema
// fabcheck.ladder/v1) and the files it names, in a directory or in the same
// tree packed as a .tar.gz (layout in include/fabcheck/model/ladder.h).
//
// `ladder` writes bundles; `report` and `diagnose` read them. Both sides live
// here so a path the writer produces is a path the reader accepts, and no
// reader ever follows a manifest entry out of the bundle.
//
//   ASSIGN_OR_RETURN(bundle::Writer w, bundle::Writer::Create("run1.tar.gz"));
//   RETURN_IF_ERROR(w.WriteJson("members/n1/inventory.json", inv));
//   RETURN_IF_ERROR(w.Finish(manifest));              // packs the tarball
//
//   ASSIGN_OR_RETURN(bundle::Bundle b, bundle::Bundle::Open("run1.tar.gz"));
//   for (const auto& m : b.manifest().members) auto inv = b.ReadInventory(m);
#pragma once

#include <nlohmann/json.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/temp_dir.h"
#include "fabcheck/model/doctor.h"
#include "fabcheck/model/inventory.h"
#include "fabcheck/model/ladder.h"

namespace fabcheck::bundle {

inline constexpr const char* kManifestFile = "manifest.json";
// No file of a bundle is near this; a bigger one is not evidence but an attack or a mistake.
inline constexpr size_t kMaxFileBytes = 256u << 20;

// A path inside a bundle: relative, '/'-separated, no "." or ".." segment,
// no empty segment, printable ASCII. InvalidArgument naming the path otherwise.
Status CheckRelativePath(const std::string& path);

// A member ID as a directory name: what CheckRelativePath accepts in one
// segment ("n1@10.0.0.1" stays; "/" and control characters become "_").
std::string SafeSegment(const std::string& id);

// The standard places of a member's evidence (ladder.h's layout).
std::string MemberDir(const std::string& member_id);                 // "members/<id>"
std::string CounterFile(const std::string& member_id, const std::string& rung, const std::string& phase);
std::string RungDir(const std::string& rung_id);                     // "rungs/<rung>"

class Writer {
 public:
  // `out` is a directory (created; it must be empty or absent) or a path
  // ending in .tar.gz / .tgz (the tree is staged next to it and packed by
  // Finish). Fails when `out` exists and is not an empty directory.
  static Result<Writer> Create(const std::string& out);
  Writer(Writer&&) noexcept;
  Writer& operator=(Writer&&) noexcept;
  ~Writer();

  Status WriteFile(const std::string& path, std::string_view content);
  Status WriteJson(const std::string& path, const nlohmann::json& value);
  // Copies a file from this machine into the bundle.
  Status CopyFile(const std::string& path, const std::string& source);
  // The directory the files are staged in (the bundle itself when `out` is a
  // directory); for writers that need a real path, e.g. a capture tarball.
  std::string HostPath(const std::string& path) const;
  Status MakeParents(const std::string& path) const;

  // Writes manifest.json and, for a tarball, packs and removes the staging
  // directory. A manifest entry naming a file the bundle lacks is an error.
  // Can be called again (Ctrl-C after a first Finish rewrites the manifest).
  Status Finish(const model::LadderManifest& manifest);
  // Rewrites manifest.json only (progress saves mid-run; a directory bundle
  // stays readable if the run is killed).
  Status Checkpoint(const model::LadderManifest& manifest);

  const std::string& out() const { return out_; }
  bool tarball() const { return tarball_; }

 private:
  Writer() = default;
  std::string out_;
  std::string dir_;      // where files go
  bool tarball_ = false;
};

class Bundle {
 public:
  // A directory or a .tar.gz written by `fabcheck ladder`. Errors name the
  // path and say what a bundle is.
  static Result<Bundle> Open(const std::string& path);
  Bundle(Bundle&&) noexcept;
  Bundle& operator=(Bundle&&) noexcept;
  ~Bundle();

  const model::LadderManifest& manifest() const { return manifest_; }
  // "bundle run1.tar.gz", for reports and errors.
  std::string Describe() const;
  const std::string& path() const { return path_; }

  bool Has(const std::string& path) const;
  // A file named by the manifest. NotFound names the file and the bundle.
  Result<std::string> ReadFile(const std::string& path) const;
  Result<nlohmann::json> ReadJson(const std::string& path) const;
  // Every file of the bundle, relative and sorted (for listings and checks).
  std::vector<std::string> Files() const;
  // Where a file lies on this machine (an unpacked tarball lives in a temp
  // directory removed when the last Bundle goes); for readers that take a
  // path, e.g. a member's snapshot as a SysRoot.
  Result<std::string> HostPath(const std::string& path) const;

  // The member's evidence; NotFound when the manifest names no such file.
  Result<model::Inventory> ReadInventory(const model::LadderMember& member) const;
  Result<model::DoctorReport> ReadDoctor(const model::LadderMember& member) const;
  Result<model::CounterSample> ReadCounterSample(const std::string& path) const;

 private:
  Bundle() = default;
  std::string path_;
  std::string dir_;
  std::shared_ptr<TempDir> temp_dir_;  // removes the unpacked tree with the last copy
  model::LadderManifest manifest_;
};

}  // namespace fabcheck::bundle
