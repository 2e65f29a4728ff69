// Bundles written as a directory and as a .tar.gz read back the same; the
// reader never follows a manifest entry or a link out of the bundle.
#include "bundle/bundle.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "sys/archive.h"

namespace fabcheck::bundle {
namespace {

namespace fs = std::filesystem;

class BundleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("fabcheck-bundle-test-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  model::LadderManifest Manifest() {
    model::LadderManifest m;
    m.fabcheck_version = "test";
    model::LadderMember n1;
    n1.id = "n1";
    n1.inventory_file = "members/n1/inventory.json";
    n1.doctor_file = "members/n1/doctor.json";
    m.members = {n1};
    model::RungResult r;
    r.id = "L1L2.node";
    r.verdict = model::RungVerdict::kPass;
    r.evidence_files = {CounterFile("n1", "L1L2.node", "before")};
    m.rungs = {r};
    m.verdict.go = true;
    return m;
  }

  // Writes the files Manifest() names.
  void Fill(Writer& w) {
    model::Inventory inv;
    inv.host.hostname = "n1";
    ASSERT_TRUE(w.WriteJson("members/n1/inventory.json", inv).ok());
    model::DoctorReport doctor;
    doctor.hostname = "n1";
    ASSERT_TRUE(w.WriteJson("members/n1/doctor.json", doctor).ok());
    model::CounterSample s;
    s.member = "n1";
    s.values["mlx5_0/1"]["port_rcv_errors"] = 3;
    ASSERT_TRUE(w.WriteJson(CounterFile("n1", "L1L2.node", "before"), s).ok());
  }

  void CheckReadsBack(const std::string& path) {
    auto b = Bundle::Open(path);
    ASSERT_TRUE(b.ok()) << b.status().message();
    EXPECT_EQ(b->manifest().members.size(), 1u);
    EXPECT_TRUE(b->manifest().verdict.go);
    auto inv = b->ReadInventory(b->manifest().members[0]);
    ASSERT_TRUE(inv.ok()) << inv.status().message();
    EXPECT_EQ(inv->host.hostname, "n1");
    auto doctor = b->ReadDoctor(b->manifest().members[0]);
    ASSERT_TRUE(doctor.ok()) << doctor.status().message();
    EXPECT_EQ(doctor->hostname, "n1");
    auto sample = b->ReadCounterSample(b->manifest().rungs[0].evidence_files[0]);
    ASSERT_TRUE(sample.ok()) << sample.status().message();
    EXPECT_EQ(sample->values["mlx5_0/1"]["port_rcv_errors"], 3u);
    EXPECT_EQ(b->ReadFile("members/n1/nothing.json").status().code(), StatusCode::kNotFound);
    auto files = b->Files();
    EXPECT_NE(std::find(files.begin(), files.end(), "manifest.json"), files.end());
  }

  fs::path dir_;
};

TEST_F(BundleTest, DirectoryBundleReadsBack) {
  auto w = Writer::Create((dir_ / "run").string());
  ASSERT_TRUE(w.ok()) << w.status().message();
  Fill(*w);
  ASSERT_TRUE(w->Finish(Manifest()).ok());
  CheckReadsBack((dir_ / "run").string());
}

TEST_F(BundleTest, TarballBundleReadsBackAndLeavesNoStaging) {
  const std::string out = (dir_ / "run.tar.gz").string();
  {
    auto w = Writer::Create(out);
    ASSERT_TRUE(w.ok()) << w.status().message();
    Fill(*w);
    ASSERT_TRUE(w->Finish(Manifest()).ok());
  }
  EXPECT_TRUE(fs::is_regular_file(out));
  EXPECT_FALSE(fs::exists(out + ".staging"));
  EXPECT_FALSE(fs::exists(out + ".partial"));
  CheckReadsBack(out);
}

TEST_F(BundleTest, ATarballUnpacksIntoMemoryUnlessTmpdirSaysWhereAndIsRemovedAfter) {
  const std::string out = (dir_ / "run.tar.gz").string();
  {
    auto w = Writer::Create(out);
    ASSERT_TRUE(w.ok()) << w.status().message();
    Fill(*w);
    ASSERT_TRUE(w->Finish(Manifest()).ok());
  }
  const char* saved = std::getenv("TMPDIR");
  const std::string saved_value = saved ? saved : "";
  const std::string own_tmp = (dir_ / "tmp").string();
  fs::create_directories(own_tmp);
  for (const std::string tmpdir : {std::string(), own_tmp}) {
    if (tmpdir.empty()) ::unsetenv("TMPDIR");
    else ::setenv("TMPDIR", tmpdir.c_str(), 1);
    std::string unpacked;
    {
      auto b = Bundle::Open(out);
      ASSERT_TRUE(b.ok()) << b.status().message();
      auto manifest = b->HostPath("manifest.json");
      ASSERT_TRUE(manifest.ok());
      unpacked = fs::path(*manifest).parent_path().string();
      const std::string expected_parent =
          !tmpdir.empty() ? tmpdir : (::access("/dev/shm", W_OK) == 0 ? std::string("/dev/shm") : std::string("/tmp"));
      EXPECT_EQ(fs::path(unpacked).parent_path().string(), expected_parent) << unpacked;
    }
    EXPECT_FALSE(fs::exists(unpacked)) << unpacked << " was left behind";
  }
  if (saved) ::setenv("TMPDIR", saved_value.c_str(), 1);
  else ::unsetenv("TMPDIR");
}

TEST_F(BundleTest, WriterRefusesANonEmptyDirectoryAndUnsafePaths) {
  fs::create_directories(dir_ / "used");
  std::ofstream(dir_ / "used" / "x") << "x";
  auto w = Writer::Create((dir_ / "used").string());
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("not empty"), std::string::npos);

  auto ok = Writer::Create((dir_ / "fresh").string());
  ASSERT_TRUE(ok.ok());
  for (std::string bad : std::vector<std::string>{"/etc/passwd", "../x", "a/../../x", "a//b", "", "a/./b", "a\nb"}) {
    EXPECT_EQ(ok->WriteFile(bad, "x").code(), StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_FALSE(fs::exists(dir_ / "x"));
}

TEST_F(BundleTest, FinishRefusesAManifestNamingAMissingFile) {
  auto w = Writer::Create((dir_ / "run").string());
  ASSERT_TRUE(w.ok());
  Status s = w->Finish(Manifest());  // nothing written
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("members/n1/inventory.json"), std::string::npos) << s.message();
}

TEST_F(BundleTest, SafeSegmentKeepsMemberIdsInOneDirectory) {
  EXPECT_EQ(SafeSegment("n1@10.0.0.1"), "n1@10.0.0.1");
  EXPECT_EQ(SafeSegment("a/b"), "a_b");
  EXPECT_EQ(SafeSegment(".."), "_..");
  EXPECT_EQ(SafeSegment(""), "_");
  EXPECT_EQ(MemberDir("x/../y"), "members/x_.._y");
  EXPECT_TRUE(CheckRelativePath(CounterFile("n1", "L3", "after")).ok());
}

TEST_F(BundleTest, ReaderRefusesWhatIsNotABundle) {
  auto none = Bundle::Open((dir_ / "absent").string());
  EXPECT_FALSE(none.ok());
  fs::create_directories(dir_ / "empty");
  auto empty = Bundle::Open((dir_ / "empty").string());
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("no manifest.json"), std::string::npos);
  fs::create_directories(dir_ / "other");
  std::ofstream(dir_ / "other" / "manifest.json") << R"({"schema": "fabcheck.sweep/v1"})";
  auto other = Bundle::Open((dir_ / "other").string());
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.status().message().find("fabcheck.sweep/v1"), std::string::npos);
  std::ofstream(dir_ / "garbage.tar.gz") << "this is not gzip";
  auto garbage = Bundle::Open((dir_ / "garbage.tar.gz").string());
  ASSERT_FALSE(garbage.ok());
  EXPECT_NE(garbage.status().message().find("bundle"), std::string::npos) << garbage.status().message();
}

TEST_F(BundleTest, ReaderRefusesManifestPathsAndLinksOutOfTheBundle) {
  fs::create_directories(dir_ / "evil" / "members" / "n1");
  model::LadderManifest m = Manifest();
  m.members[0].inventory_file = "../../etc/passwd";
  std::ofstream(dir_ / "evil" / "manifest.json") << nlohmann::json(m).dump();
  auto evil = Bundle::Open((dir_ / "evil").string());
  ASSERT_FALSE(evil.ok());
  EXPECT_NE(evil.status().message().find("'..'"), std::string::npos) << evil.status().message();

  // A link inside the bundle that points out of it is not followed.
  m = Manifest();
  std::ofstream(dir_ / "evil" / "manifest.json") << nlohmann::json(m).dump();
  std::ofstream(dir_ / "secret") << "secret";
  fs::create_symlink(dir_ / "secret", dir_ / "evil" / "members" / "n1" / "inventory.json");
  auto b = Bundle::Open((dir_ / "evil").string());
  ASSERT_TRUE(b.ok()) << b.status().message();
  auto read = b->ReadFile("members/n1/inventory.json");
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), StatusCode::kPermissionDenied) << read.status().message();
}

TEST_F(BundleTest, PackDirectoryRoundTripsThroughTheExtractor) {
  fs::create_directories(dir_ / "tree" / "a" / "b");
  std::ofstream(dir_ / "tree" / "a" / "b" / "f.txt") << "hello";
  std::ofstream(dir_ / "tree" / "top") << std::string(200000, 'x');
  ASSERT_TRUE(sys::PackDirectory((dir_ / "tree").string(), (dir_ / "t.tar.gz").string()).ok());
  fs::create_directories(dir_ / "out");
  ASSERT_TRUE(sys::ExtractArchive((dir_ / "t.tar.gz").string(), (dir_ / "out").string()).ok());
  std::ifstream in(dir_ / "out" / "a" / "b" / "f.txt");
  std::string text;
  in >> text;
  EXPECT_EQ(text, "hello");
  EXPECT_EQ(fs::file_size(dir_ / "out" / "top"), 200000u);
  EXPECT_FALSE(sys::PackDirectory((dir_ / "missing").string(), (dir_ / "m.tar.gz").string()).ok());
}

}  // namespace
}  // namespace fabcheck::bundle
