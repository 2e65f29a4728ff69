// Hostile archives: nothing may be written or followed outside the folder a
// tarball is unpacked into, and bombs stop at their caps with a clear error.
#include "sys/archive.h"

#include <archive.h>
#include <archive_entry.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "sys/sysroot.h"

namespace fabcheck::sys {
namespace {

namespace fs = std::filesystem;

// Writes a .tar.gz entry by entry, as an attacker would craft it.
class TarWriter {
 public:
  explicit TarWriter(const std::string& path) : a_(archive_write_new()) {
    archive_write_add_filter_gzip(a_);
    archive_write_set_format_pax_restricted(a_);
    EXPECT_EQ(archive_write_open_filename(a_, path.c_str()), ARCHIVE_OK);
  }
  ~TarWriter() { Close(); }
  void Close() {
    if (a_) {
      archive_write_close(a_);
      archive_write_free(a_);
      a_ = nullptr;
    }
  }
  void File(const std::string& name, const std::string& content, mode_t perm = 0644) {
    Entry(name, AE_IFREG, perm, &content, nullptr, nullptr);
  }
  void Dir(const std::string& name) { Entry(name, AE_IFDIR, 0755, nullptr, nullptr, nullptr); }
  void Symlink(const std::string& name, const std::string& target) {
    Entry(name, AE_IFLNK, 0777, nullptr, &target, nullptr);
  }
  void Hardlink(const std::string& name, const std::string& target) {
    Entry(name, AE_IFREG, 0644, nullptr, nullptr, &target);
  }
  void Special(const std::string& name, mode_t type) { Entry(name, type, 0666, nullptr, nullptr, nullptr); }

 private:
  void Entry(const std::string& name, mode_t type, mode_t perm, const std::string* content, const std::string* link,
             const std::string* hardlink) {
    struct archive_entry* e = archive_entry_new();
    archive_entry_set_pathname(e, name.c_str());
    archive_entry_set_filetype(e, type);
    archive_entry_set_perm(e, perm);
    archive_entry_set_size(e, content ? static_cast<la_int64_t>(content->size()) : 0);
    if (link) archive_entry_set_symlink(e, link->c_str());
    if (hardlink) archive_entry_set_hardlink(e, hardlink->c_str());
    if (type == AE_IFCHR) archive_entry_set_rdev(e, makedev(1, 3));
    EXPECT_EQ(archive_write_header(a_, e), ARCHIVE_OK) << archive_error_string(a_);
    if (content && !content->empty()) archive_write_data(a_, content->data(), content->size());
    archive_entry_free(e);
  }
  struct archive* a_;
};

class TarUnpackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = fs::temp_directory_path() / ("fabcheck-unpack-test-" + std::to_string(::getpid()));
    fs::remove_all(base_);
    fs::create_directories(base_ / "dest");
    fs::create_directories(base_ / "outside");
    victim_ = (base_ / "outside" / "victim").string();
    std::ofstream(victim_) << "original";
  }
  void TearDown() override { fs::remove_all(base_); }

  std::string Tarball() const { return (base_ / "evil.tar.gz").string(); }
  std::string Dest() const { return (base_ / "dest").string(); }
  std::string Victim() const {
    std::ifstream in(victim_);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  std::vector<std::string> Outside() const {
    std::vector<std::string> names;
    for (auto& e : fs::directory_iterator(base_ / "outside")) names.push_back(e.path().filename().string());
    return names;
  }

  fs::path base_;
  std::string victim_;
};

ArchiveKind Capture() {
  ArchiveKind o;
  o.what = "capture";
  o.allow_symlinks = true;
  return o;
}

TEST_F(TarUnpackTest, AFileOverAnEarlierLinkReplacesTheLinkNotItsTarget) {
  {
    TarWriter t(Tarball());
    t.Dir("sys");
    t.Symlink("sys/x", victim_);
    t.File("sys/x", "PWNED");
  }
  Status stats = ExtractArchive(Tarball(), Dest(), Capture());
  ASSERT_TRUE(stats.ok()) << stats.ToString();
  EXPECT_EQ(Victim(), "original");
  EXPECT_FALSE(fs::is_symlink(base_ / "dest/sys/x"));
  std::ifstream in(base_ / "dest/sys/x");
  std::string content;
  in >> content;
  EXPECT_EQ(content, "PWNED");
}

TEST_F(TarUnpackTest, AnEntryUnderALinkedFolderIsRefused) {
  {
    TarWriter t(Tarball());
    t.Symlink("sys/evil", (base_ / "outside").string());
    t.File("sys/evil/PWNED", "x");
  }
  Status stats = ExtractArchive(Tarball(), Dest(), Capture());
  ASSERT_FALSE(stats.ok());
  EXPECT_EQ(stats.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(stats.message().find("sys/evil"), std::string::npos) << stats.message();
  EXPECT_EQ(Outside(), std::vector<std::string>{"victim"});

  // The same through a relative link climbing out.
  fs::remove_all(base_ / "dest");
  fs::create_directories(base_ / "dest");
  {
    TarWriter t(Tarball());
    t.Symlink("sys/up", "../../outside");
    t.File("sys/up/PWNED", "x");
  }
  EXPECT_FALSE(ExtractArchive(Tarball(), Dest(), Capture()).ok());
  EXPECT_EQ(Outside(), std::vector<std::string>{"victim"});
}

TEST_F(TarUnpackTest, LinksAreRefusedUnlessAllowed) {
  {
    TarWriter t(Tarball());
    t.Symlink("bundle/x", "/etc/passwd");
  }
  ArchiveKind bundle;
  bundle.what = "bundle";
  Status stats = ExtractArchive(Tarball(), Dest(), bundle);
  ASSERT_FALSE(stats.ok());
  EXPECT_NE(stats.message().find("bundle"), std::string::npos);
  EXPECT_NE(stats.message().find("symbolic link bundle/x -> /etc/passwd"), std::string::npos)
      << stats.message();
}

TEST_F(TarUnpackTest, TraversalAndAbsoluteNamesAreRefused) {
  for (std::string name : {"../outside/victim", "sys/../../outside/victim", "/tmp/x", "./../x"}) {
    {
      TarWriter t(Tarball());
      t.File(name, "PWNED");
    }
    Status stats = ExtractArchive(Tarball(), Dest(), Capture());
    ASSERT_FALSE(stats.ok()) << name;
    EXPECT_NE(stats.message().find("unsafe path"), std::string::npos) << stats.message();
  }
  EXPECT_EQ(Victim(), "original");
  // ".." inside a name is not traversal.
  {
    TarWriter t(Tarball());
    t.File("sys/a..b", "ok");
  }
  EXPECT_TRUE(ExtractArchive(Tarball(), Dest(), Capture()).ok());
}

TEST_F(TarUnpackTest, HardLinksMustStayInside) {
  for (const std::string& target : {victim_, std::string("../outside/victim"), std::string("sys/../../x")}) {
    {
      TarWriter t(Tarball());
      t.Hardlink("sys/h", target);
    }
    Status stats = ExtractArchive(Tarball(), Dest(), Capture());
    ASSERT_FALSE(stats.ok()) << target;
    EXPECT_NE(stats.message().find("unsafe path"), std::string::npos) << stats.message();
  }
  // Inside: a second name for an unpacked file.
  {
    TarWriter t(Tarball());
    t.File("sys/a", "content");
    t.Hardlink("sys/b", "sys/a");
    t.Hardlink("sys/c", "sys/missing");
  }
  Status stats = ExtractArchive(Tarball(), Dest(), Capture());
  ASSERT_FALSE(stats.ok());
  EXPECT_NE(stats.message().find("does not hold"), std::string::npos) << stats.message();
  EXPECT_EQ(fs::hard_link_count(base_ / "dest/sys/a"), 2u);
  EXPECT_EQ(Victim(), "original");
}

TEST_F(TarUnpackTest, DevicesFifosAndSetuidBitsNeverComeOut) {
  {
    TarWriter t(Tarball());
    t.Special("sys/null", AE_IFCHR);
    t.Special("sys/fifo", AE_IFIFO);
    t.Special("sys/disk", AE_IFBLK);
    t.File("sys/suid", "#!/bin/sh\n", 06755);
    t.File("sys/sticky", "x", 01777);
  }
  Status stats = ExtractArchive(Tarball(), Dest(), Capture());
  ASSERT_TRUE(stats.ok()) << stats.ToString();
  EXPECT_FALSE(fs::exists(fs::symlink_status(base_ / "dest/sys/null")));
  EXPECT_FALSE(fs::exists(fs::symlink_status(base_ / "dest/sys/fifo")));
  EXPECT_FALSE(fs::exists(fs::symlink_status(base_ / "dest/sys/disk")));
  struct stat st {};
  ASSERT_EQ(::stat((base_ / "dest/sys/suid").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07000, 0u);
  EXPECT_EQ(st.st_mode & 0111, 0u);
  ASSERT_EQ(::stat((base_ / "dest/sys/sticky").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07000, 0u);
}

TEST_F(TarUnpackTest, AFileCannotReplaceAFolder) {
  {
    TarWriter t(Tarball());
    t.File("sys/d/f", "x");
    t.File("sys/d", "y");
  }
  Status stats = ExtractArchive(Tarball(), Dest(), Capture());
  ASSERT_FALSE(stats.ok());
  EXPECT_NE(stats.message().find("both as a folder and a file"), std::string::npos);
}

TEST_F(TarUnpackTest, DeepAndLongNamesAreClearErrors) {
  std::string deep;
  for (int i = 0; i < 2000; ++i) deep += "d/";
  deep += "f";
  {
    TarWriter t(Tarball());
    t.File(deep, "x");
  }
  Status stats = ExtractArchive(Tarball(), Dest(), Capture());
  ASSERT_FALSE(stats.ok());
  EXPECT_EQ(stats.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(stats.message().find("bytes (more than 1024)"), std::string::npos) << stats.message();

  std::string nested;
  for (int i = 0; i < 60; ++i) nested += "d/";
  {
    TarWriter t(Tarball());
    t.File(nested + "f", "x");
  }
  stats = ExtractArchive(Tarball(), Dest(), Capture());
  ASSERT_FALSE(stats.ok());
  EXPECT_NE(stats.message().find("nested 61 folders deep"), std::string::npos) << stats.message();
}

TEST_F(TarUnpackTest, ATarBombStopsAtItsCaps) {
  // Many entries: 250,000 headers (folder entries, so the test makes no inodes).
  {
    TarWriter t(Tarball());
    for (int i = 0; i < 250'000; ++i) t.Dir("d");
  }
  auto start = std::chrono::steady_clock::now();
  Status stats = ExtractArchive(Tarball(), Dest(), Capture());
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(stats.ok());
  EXPECT_EQ(stats.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(stats.message().find("more than 200000 entries"), std::string::npos) << stats.message();
  EXPECT_LT(seconds, 30);

  // Many bytes: refused once past the cap (a smaller one here, to stay quick).
  {
    TarWriter t(Tarball());
    t.File("sys/a", std::string(600'000, 'a'));
    t.File("sys/b", std::string(600'000, 'b'));
  }
  ArchiveKind small = Capture();
  small.max_bytes = 1 << 20;
  stats = ExtractArchive(Tarball(), Dest(), small);
  ASSERT_FALSE(stats.ok());
  EXPECT_EQ(stats.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(stats.message().find("more than 1 MiB"), std::string::npos) << stats.message();
}

TEST_F(TarUnpackTest, ACaptureWithALinkAttackOpensSafelyAndLeavesNoTempFolder) {
  {
    TarWriter t(Tarball());
    t.Symlink("sys/evil", (base_ / "outside").string());
    t.File("sys/evil/PWNED", "x");
  }
  fs::create_directories(base_ / "tmp");
  ::setenv("TMPDIR", (base_ / "tmp").c_str(), 1);
  auto root = SysRoot::Open(Tarball());
  ::unsetenv("TMPDIR");
  ASSERT_FALSE(root.ok());
  EXPECT_NE(root.status().message().find("capture"), std::string::npos);
  EXPECT_EQ(Outside(), std::vector<std::string>{"victim"});
  EXPECT_TRUE(fs::is_empty(base_ / "tmp")) << "the unpacked copy must be removed on error";
}

TEST_F(TarUnpackTest, RealCapturesStillUnpack) {
  for (const char* name : {"dgx-h100-example.tar.gz", "h200-1gpu.tar.gz"}) {
    auto root = SysRoot::Open(std::string(FABCHECK_TESTDATA_DIR) + "/captures/" + name);
    ASSERT_TRUE(root.ok()) << root.status().ToString();
    EXPECT_TRUE(root->IsDirectory("/sys/class"));
  }
}

}  // namespace
}  // namespace fabcheck::sys
