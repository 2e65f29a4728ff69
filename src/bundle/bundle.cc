#include "bundle/bundle.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "base/json_budget.h"
#include "base/json_text.h"
#include "base/fd.h"
#include "base/temp_dir.h"
#include "base/strings.h"
#include "sys/archive.h"

namespace fabcheck::bundle {
namespace {

namespace fs = std::filesystem;

const char kWhatBundle[] =
    " (a bundle is the directory or .tar.gz written by `fabcheck ladder --out`, with manifest.json at its root)";

sys::ArchiveKind BundleArchive() {
  sys::ArchiveKind k;
  k.what = "bundle";
  k.expected = "a .tar.gz written by `fabcheck ladder -o FILE.tar.gz`";
  k.remedy = "copy it again, or rerun `fabcheck ladder --out`";
  k.max_bytes = 4ull << 30;  // a large cluster's snapshots and logs; still bounded
  return k;
}

// /dev/shm takes a bundle up to the smaller of 512 MiB (a 1,024-member
// ladder's bundle is ~200 MB) and a quarter of the space free there (a pod's
// /dev/shm is often 64 MiB to a few GiB, and NCCL needs it).
constexpr const char* kShm = "/dev/shm";
constexpr uint64_t kMaxShmBytes = 512ull << 20;
constexpr uint64_t kMinShmBytes = 1ull << 20;  // below this, not worth trying

uint64_t ShmBudget() {
  struct statvfs vfs {};
  if (::statvfs(kShm, &vfs) != 0) return 0;
  const uint64_t free_bytes = static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize;
  return std::min(kMaxShmBytes, free_bytes / 4);
}

Status WriteWhole(const std::string& host_path, std::string_view content) {
  // Through a temporary name, so a reader never sees half a manifest.
  const std::string temp = host_path + ".partial";
  UniqueFd fd(::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!fd.valid()) return ErrnoError(errno, "cannot write " + host_path, "check the --out directory is writable");
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(fd.get(), content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = n < 0 ? errno : ENOSPC;
      ::unlink(temp.c_str());
      return ErrnoError(err, "cannot write " + host_path, "is the disk full?");
    }
    done += static_cast<size_t>(n);
  }
  if (::rename(temp.c_str(), host_path.c_str()) != 0) {
    int err = errno;
    ::unlink(temp.c_str());
    return ErrnoError(err, "cannot move " + temp + " to " + host_path);
  }
  return Status::Ok();
}

// Every path the manifest names, with what names it (for errors).
std::vector<std::pair<std::string, std::string>> NamedPaths(const model::LadderManifest& m) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& member : m.members) {
    for (const auto* p : {&member.inventory_file, &member.doctor_file, &member.snapshot_file}) {
      if (!p->empty()) out.emplace_back(*p, "member " + member.id);
    }
  }
  for (const auto& rung : m.rungs) {
    for (const auto& f : rung.evidence_files) out.emplace_back(f, "rung " + rung.id);
    for (const auto& pair : rung.pairs) {
      if (!pair.evidence_file.empty()) out.emplace_back(pair.evidence_file, "rung " + rung.id + " pair " + pair.a + "->" + pair.b);
    }
    for (const auto& group : rung.baselines) {
      const std::string what = "rung " + rung.id + " baseline " + group.scope;
      for (const auto& f : group.evidence_files) out.emplace_back(f, what);
      for (const auto& pair : group.pairs) {
        if (!pair.evidence_file.empty()) out.emplace_back(pair.evidence_file, what);
      }
    }
  }
  return out;
}

}  // namespace

Status CheckRelativePath(const std::string& path) {
  auto bad = [&](const std::string& why) {
    return InvalidArgumentError("bundle path '" + path + "' " + why +
                                " (bundle paths are relative, like members/n1/inventory.json)");
  };
  if (path.empty()) return bad("is empty");
  if (path.size() > 1024) return bad("is longer than 1024 characters");
  if (path.front() == '/') return bad("is absolute");
  for (char c : path) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e || c == '\\') {
      return bad("holds a control, non-ASCII or backslash character");
    }
  }
  for (const auto& segment : Split(path, '/')) {
    if (segment.empty()) return bad("has an empty segment");
    if (segment == "." || segment == "..") return bad("has a '" + segment + "' segment");
  }
  return Status::Ok();
}

std::string SafeSegment(const std::string& id) {
  std::string out;
  for (char c : id) {
    unsigned char u = static_cast<unsigned char>(c);
    out += (u < 0x21 || u > 0x7e || c == '/' || c == '\\') ? '_' : c;
  }
  if (out.empty() || out == "." || out == "..") out = "_" + out;
  return out;
}

std::string MemberDir(const std::string& member_id) { return "members/" + SafeSegment(member_id); }
std::string CounterFile(const std::string& member_id, const std::string& rung, const std::string& phase) {
  return MemberDir(member_id) + "/counters/" + SafeSegment(rung) + "-" + SafeSegment(phase) + ".json";
}
std::string RungDir(const std::string& rung_id) { return "rungs/" + SafeSegment(rung_id); }

// ---- Writer ----

Writer::Writer(Writer&&) noexcept = default;
Writer& Writer::operator=(Writer&&) noexcept = default;

Writer::~Writer() {
  // A tarball bundle that never finished leaves no half-written staging tree.
  if (tarball_ && !dir_.empty()) {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
}

Result<Writer> Writer::Create(const std::string& out) {
  if (out.empty()) return InvalidArgumentError("--out is empty: give a directory or FILE.tar.gz");
  Writer w;
  w.out_ = out;
  w.tarball_ = EndsWith(out, ".tar.gz") || EndsWith(out, ".tgz");
  std::error_code ec;
  if (w.tarball_) {
    if (fs::exists(out, ec) && !fs::is_regular_file(out, ec)) {
      return InvalidArgumentError("--out " + out + " exists and is not a regular file; choose another name");
    }
    fs::path parent = fs::path(out).parent_path();
    if (!parent.empty() && !fs::is_directory(parent, ec)) {
      return NotFoundError("cannot write bundle " + out + ": directory " + parent.string() + " does not exist");
    }
    w.dir_ = out + ".staging";
    fs::remove_all(w.dir_, ec);
  } else {
    if (fs::exists(out, ec)) {
      if (!fs::is_directory(out, ec)) {
        return InvalidArgumentError("--out " + out + " exists and is not a directory; choose another name, or end it "
                                    "in .tar.gz for a tarball");
      }
      if (!fs::is_empty(out, ec)) {
        return FailedPreconditionError("--out " + out + " is not empty; choose a new directory so evidence of two "
                                       "runs never mixes");
      }
    }
    w.dir_ = out;
  }
  fs::create_directories(w.dir_, ec);
  if (ec) return ErrnoError(ec.value(), "cannot create bundle directory " + w.dir_, "check the path is writable");
  return w;
}

std::string Writer::HostPath(const std::string& path) const { return dir_ + "/" + path; }

Status Writer::MakeParents(const std::string& path) const {
  RETURN_IF_ERROR(CheckRelativePath(path));
  std::error_code ec;
  fs::create_directories(fs::path(HostPath(path)).parent_path(), ec);
  if (ec) return ErrnoError(ec.value(), "cannot create " + fs::path(HostPath(path)).parent_path().string());
  return Status::Ok();
}

Status Writer::WriteFile(const std::string& path, std::string_view content) {
  RETURN_IF_ERROR(MakeParents(path));
  return WriteWhole(HostPath(path), content);
}

Status Writer::WriteJson(const std::string& path, const nlohmann::json& value) {
  // Replace invalid UTF-8 (a hostname or log line can hold any byte) rather than throw.
  return WriteFile(path, ToJsonText(value, 2) + "\n");
}

Status Writer::CopyFile(const std::string& path, const std::string& source) {
  RETURN_IF_ERROR(MakeParents(path));
  std::error_code ec;
  fs::copy_file(source, HostPath(path), fs::copy_options::overwrite_existing, ec);
  if (ec) return ErrnoError(ec.value(), "cannot copy " + source + " into the bundle as " + path);
  return Status::Ok();
}

Status Writer::Checkpoint(const model::LadderManifest& manifest) {
  return WriteJson(kManifestFile, nlohmann::json(manifest));
}

Status Writer::Finish(const model::LadderManifest& manifest) {
  for (const auto& [path, who] : NamedPaths(manifest)) {
    RETURN_IF_ERROR(CheckRelativePath(path));
    std::error_code ec;
    if (!fs::exists(HostPath(path), ec)) {
      return InternalError("the manifest names " + path + " (" + who + ") but the bundle has no such file");
    }
  }
  RETURN_IF_ERROR(Checkpoint(manifest));
  if (!tarball_) return Status::Ok();
  RETURN_IF_ERROR(sys::PackDirectory(dir_, out_));
  return Status::Ok();
}

// ---- Bundle ----

Bundle::Bundle(Bundle&&) noexcept = default;
Bundle& Bundle::operator=(Bundle&&) noexcept = default;
Bundle::~Bundle() = default;

Result<Bundle> Bundle::Open(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return ErrnoError(errno, "cannot open bundle " + path, "check the path");
  Bundle b;
  b.path_ = path;
  if (S_ISDIR(st.st_mode)) {
    b.dir_ = fs::absolute(path).lexically_normal().string();
    while (b.dir_.size() > 1 && b.dir_.back() == '/') b.dir_.pop_back();
  } else if (S_ISREG(st.st_mode) && sys::IsTarballPath(path)) {
    // Unpacked into memory-backed /dev/shm unless TMPDIR says where: a
    // 1,024-member bundle is ~2,000 small files, and creating and removing
    // them on a disk costs seconds (7 s against 2 s in bench/report). But
    // /dev/shm is RAM, and on a GPU node it is NCCL's shared-memory transport
    // too: a bundle goes there only within ShmBudget(); a larger one (or a
    // gzip bomb) stops at that budget and is unpacked again on disk, up to
    // the bundle's own cap.
    struct Place {
      std::string parent;  // "" = $TMPDIR or /tmp
      uint64_t max_bytes;
    };
    std::vector<Place> places;
    const char* tmpdir = std::getenv("TMPDIR");
    const uint64_t shm_budget = ShmBudget();
    if ((tmpdir == nullptr || *tmpdir == '\0') && shm_budget >= kMinShmBytes && ::access(kShm, W_OK) == 0) {
      places.push_back({kShm, shm_budget});
    }
    places.push_back({"", BundleArchive().max_bytes});
    for (size_t i = 0; i < places.size(); ++i) {
      auto temp = TempDir::Create("fabcheck-bundle", places[i].parent);
      if (!temp.ok()) {
        if (i + 1 < places.size()) continue;
        return temp.status().WithContext("cannot unpack bundle " + path);
      }
      b.temp_dir_ = std::shared_ptr<TempDir>(std::move(temp).value());
      b.dir_ = b.temp_dir_->path();
      sys::ArchiveKind kind = BundleArchive();
      kind.max_bytes = places[i].max_bytes;
      Status unpacked = sys::ExtractArchive(path, b.dir_, kind);
      if (unpacked.ok()) break;
      b.temp_dir_.reset();  // removes what was unpacked
      if (unpacked.code() != StatusCode::kResourceExhausted || i + 1 == places.size()) return unpacked;
    }
  } else {
    return InvalidArgumentError(path + " is not a bundle" + kWhatBundle);
  }
  // A bundle packed with its folder (`tar czf b.tar.gz -C runs run1`), or a
  // folder holding one bundle folder: the bundle is one level down.
  if (std::error_code ec; !fs::exists(fs::path(b.dir_) / kManifestFile, ec)) {
    std::vector<fs::path> entries;
    for (const auto& e : fs::directory_iterator(b.dir_, ec)) {
      if (entries.size() > 1) break;
      entries.push_back(e.path());
    }
    if (!ec && entries.size() == 1 && fs::is_directory(fs::symlink_status(entries[0], ec)) &&
        fs::is_regular_file(fs::symlink_status(entries[0] / kManifestFile, ec))) {
      b.dir_ = entries[0].string();
    }
  }
  auto text = b.ReadFile(kManifestFile);
  if (!text.ok()) {
    return text.status().code() == StatusCode::kNotFound
               ? InvalidArgumentError(path + " is not a bundle: it has no manifest.json" + kWhatBundle)
               : text.status();
  }
  std::string error;
  auto manifest = model::ParseLadderManifest(*text, &error);
  if (!manifest) return InvalidArgumentError("bundle " + path + ": " + error);
  for (const auto& [p, who] : NamedPaths(*manifest)) {
    Status s = CheckRelativePath(p);
    if (!s.ok()) return InvalidArgumentError("bundle " + path + ": " + who + ": " + s.message());
  }
  b.manifest_ = std::move(*manifest);
  return b;
}

std::string Bundle::Describe() const { return "bundle " + path_; }

Result<std::string> Bundle::HostPath(const std::string& path) const {
  RETURN_IF_ERROR(CheckRelativePath(path));
  // Resolve links and refuse anything that lands outside the bundle.
  std::error_code ec;
  fs::path resolved = fs::weakly_canonical(fs::path(dir_) / path, ec);
  if (ec) return ErrnoError(ec.value(), "cannot resolve " + path + " in " + Describe());
  fs::path root = fs::weakly_canonical(dir_, ec);
  auto rel = resolved.lexically_relative(root).string();
  if (rel.empty() || StartsWith(rel, "..")) {
    return PermissionDeniedError(Describe() + ": " + path + " points outside the bundle; refusing to read it");
  }
  return resolved.string();
}

bool Bundle::Has(const std::string& path) const {
  auto host = HostPath(path);
  std::error_code ec;
  return host.ok() && fs::is_regular_file(*host, ec);
}

Result<std::string> Bundle::ReadFile(const std::string& path) const {
  ASSIGN_OR_RETURN(std::string host, HostPath(path));
  UniqueFd fd(::open(host.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd.valid()) {
    if (errno == ENOENT) return NotFoundError(Describe() + " has no " + path);
    return ErrnoError(errno, "cannot read " + path + " in " + Describe());
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return InvalidArgumentError(Describe() + ": " + path + " is not a regular file");
  }
  if (static_cast<uint64_t>(st.st_size) > kMaxFileBytes) {
    return ResourceExhaustedError(Describe() + ": " + path + " is larger than 256 MiB; not evidence fabcheck wrote");
  }
  std::string out(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < out.size()) {
    ssize_t n = ::read(fd.get(), out.data() + done, out.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError(errno, "cannot read " + path + " in " + Describe());
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  out.resize(done);
  return out;
}

Result<nlohmann::json> Bundle::ReadJson(const std::string& path) const {
  ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  auto j = ParseJsonWithin(text, Describe() + ": " + path, kNodeDocumentBudget);
  if (!j.ok() && j.status().code() == StatusCode::kInvalidArgument) return DataLossError(j.status().message());
  return j;
}

std::vector<std::string> Bundle::Files() const {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir_, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->is_regular_file(ec)) out.push_back(fs::relative(it->path(), dir_).string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

Result<model::Inventory> Bundle::ReadInventory(const model::LadderMember& member) const {
  if (member.inventory_file.empty()) return NotFoundError(Describe() + ": member " + member.id + " has no inventory");
  ASSIGN_OR_RETURN(std::string text, ReadFile(member.inventory_file));
  std::string error;
  auto inv = model::ParseInventoryJson(text, &error);
  if (!inv) return DataLossError(Describe() + ": " + member.inventory_file + ": " + error);
  return *inv;
}

Result<model::DoctorReport> Bundle::ReadDoctor(const model::LadderMember& member) const {
  if (member.doctor_file.empty()) return NotFoundError(Describe() + ": member " + member.id + " has no doctor report");
  ASSIGN_OR_RETURN(std::string text, ReadFile(member.doctor_file));
  std::string error;
  auto report = model::ParseDoctorJson(text, &error);
  if (!report) return DataLossError(Describe() + ": " + member.doctor_file + ": " + error);
  return *report;
}

Result<model::CounterSample> Bundle::ReadCounterSample(const std::string& path) const {
  ASSIGN_OR_RETURN(nlohmann::json j, ReadJson(path));
  try {
    return j.get<model::CounterSample>();
  } catch (const nlohmann::json::exception& e) {
    return DataLossError(Describe() + ": " + path + " is not a counter sample: " + e.what());
  }
}

}  // namespace fabcheck::bundle
