// Hostile evidence bundles through `report` and `diagnose`: a gzip bomb must
// not fill /dev/shm (RAM, and NCCL's shared-memory transport on a GPU node),
// a bundle is unpacked once per command, JSON that inflates in memory stops
// at its budget, and text from the bundle never carries HTML, links, images
// or terminal control sequences to the Markdown report or an error message.
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "run.h"
#include "tar.h"

namespace fabcheck::hostile {
namespace {

namespace fs = std::filesystem;

const fs::path kExample = fs::path(FABCHECK_TESTDATA_DIR) / "bundles/example-8";

class HostileBundleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("fabcheck-hostile-bundle-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A copy of the example bundle whose manifest `edit` changed.
  std::string EditedBundle(const std::string& name, const std::function<void(nlohmann::json&)>& edit) {
    fs::path out = dir_ / name;
    fs::copy(kExample, out, fs::copy_options::recursive);
    nlohmann::json m = nlohmann::json::parse(Slurp((out / "manifest.json").string()));
    edit(m);
    std::ofstream(out / "manifest.json", std::ios::binary | std::ios::trunc) << m.dump(1);
    return out.string();
  }
  fs::path dir_;
};

void ExpectContained(const RunResult& r, double max_seconds) {
  EXPECT_FALSE(r.timed_out) << Describe(r);
  EXPECT_EQ(r.signal, 0) << Describe(r);
  EXPECT_GE(r.code, 0) << Describe(r);
  EXPECT_LT(r.seconds, max_seconds * test_support::kSanitizerTimeFactor) << Describe(r);
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << Describe(r);
}

std::set<std::string> ShmBundles() {
  std::set<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/dev/shm", ec)) {
    if (e.path().filename().string().rfind("fabcheck-bundle-", 0) == 0) out.insert(e.path().string());
  }
  return out;
}

// Bytes held by the folders (allocated blocks: what the RAM pays).
uint64_t HeldBytes(const std::set<std::string>& dirs) {
  uint64_t total = 0;
  for (const auto& d : dirs) {
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(d, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec)) {
      struct stat st {};
      if (::lstat(it->path().c_str(), &st) == 0) total += static_cast<uint64_t>(st.st_blocks) * 512;
    }
  }
  return total;
}

// 600 MiB of zeros (~0.6 MB packed) beside a valid manifest. Before, diagnose
// unpacked it twice at once into /dev/shm (1.2 GiB of RAM); now /dev/shm takes
// at most 512 MiB of one copy and the rest goes to disk.
TEST_F(HostileBundleTest, AGzipBombNeverFillsDevShmAndIsUnpackedOnce) {
  if (::access("/dev/shm", W_OK) != 0) GTEST_SKIP() << "no writable /dev/shm here: nothing to protect";
  std::string bomb = (dir_ / "bomb.tar.gz").string();
  {
    Tar t(bomb);
    t.Add("manifest.json", AE_IFREG, Slurp((kExample / "manifest.json").string()));
    for (const auto& e : fs::recursive_directory_iterator(kExample / "members")) {
      if (e.is_regular_file()) t.Add(fs::relative(e.path(), kExample).string(), AE_IFREG, Slurp(e.path().string()));
    }
    t.AddZeros("members/dgx-01/padding.bin", 600ull << 20);
  }
  for (const std::vector<std::string>& args : {std::vector<std::string>{"diagnose", bomb},
                                               std::vector<std::string>{"report", "--format", "json", bomb}}) {
    SCOPED_TRACE(args[0]);
    const std::set<std::string> before = ShmBundles();
    std::atomic<uint64_t> peak{0};
    size_t most_copies = 0;
    RunOptions options{.timeout_s = 120, .while_running = [&](pid_t pid) {
                         while (::kill(pid, 0) == 0) {
                           std::set<std::string> fresh;
                           for (const auto& d : ShmBundles()) {
                             if (!before.count(d)) fresh.insert(d);
                           }
                           most_copies = std::max(most_copies, fresh.size());
                           peak = std::max<uint64_t>(peak, HeldBytes(fresh));
                           std::this_thread::sleep_for(std::chrono::milliseconds(20));
                         }
                       }};
    RunResult r = RunFabcheck(args, options);
    ExpectContained(r, 90);
    EXPECT_NE(r.code, 3) << "the bundle itself is valid: " << Describe(r);
    EXPECT_LE(peak.load(), (512ull + 8) << 20) << "bytes of /dev/shm held at once";
    EXPECT_LE(most_copies, 1u) << "copies of the bundle in /dev/shm at once";
  }
}

// 20 million empty objects (60 MB of text, under the 256 MiB file cap) took
// ~1.5 GB once parsed. A member's document now stops at 250,000 values: the
// member's evidence is named unreadable, the run goes on in bounded memory.
TEST_F(HostileBundleTest, JsonThatInflatesStopsAtItsBudget) {
  std::string bundle = EditedBundle("inflating", [](nlohmann::json&) {});
  std::string inflating = "{\"schema\":\"x\",\"pad\":[";
  for (int i = 0; i < 20'000'000; ++i) inflating += i ? ",{}" : "{}";
  inflating += "]}";
  std::ofstream(fs::path(bundle) / "members/dgx-01/inventory.json", std::ios::trunc) << inflating;
  std::ofstream(fs::path(bundle) / "members/dgx-01/doctor.json", std::ios::trunc) << inflating;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"report", "--format", "md", bundle}, std::vector<std::string>{"diagnose", bundle}}) {
    SCOPED_TRACE(args[0]);
    RunResult r = RunFabcheck(args, {.timeout_s = 120});
    ExpectContained(r, 60);
    EXPECT_LT(r.max_rss_mib, 600 * test_support::kSanitizerMemoryFactor) << Describe(r);
    EXPECT_NE((r.out + r.err).find("more than 250000 values"), std::string::npos) << Describe(r);
  }

  // Nesting past the depth budget: refused with the reason, not parsed.
  std::string deep = EditedBundle("deep", [](nlohmann::json& m) { m["parameters"]["x"] = nlohmann::json::array(); });
  std::string text = Slurp(deep + "/manifest.json");
  const std::string marker = "\"x\": []";
  ASSERT_NE(text.find(marker), std::string::npos) << text.substr(0, 400);
  text.replace(text.find(marker), marker.size(), "\"x\": " + std::string(100000, '[') + std::string(100000, ']'));
  std::ofstream(deep + "/manifest.json", std::ios::trunc) << text;
  RunResult r = RunFabcheck({"report", deep});
  ExpectContained(r, 30);
  EXPECT_EQ(r.code, 3) << Describe(r);
  EXPECT_NE(r.err.find("nests deeper than 64 levels"), std::string::npos) << Describe(r);
}

const std::string kHostile = "\x1b]0;owned\x07\x1b[2J<script>alert(1)</script>[x](javascript:alert(1))"
                             "![p](https://tracker.example/p.png)\xc2\x9b" "31m";

void ExpectNoMarkupOrControls(const std::string& text) {
  for (char c : text) {
    const unsigned char u = static_cast<unsigned char>(c);
    ASSERT_TRUE(u >= 0x20 || c == '\n' || c == '\t') << "control byte " << int(u) << " in:\n" << text;
  }
  EXPECT_EQ(text.find("\xc2\x9b"), std::string::npos) << text;
  EXPECT_EQ(text.find("<script"), std::string::npos) << text;
  // An escaped bracket (\]) starts no link: only a bare "](javascript:" would.
  for (size_t at = text.find("](javascript:"); at != std::string::npos; at = text.find("](javascript:", at + 1)) {
    size_t slashes = 0;
    while (slashes < at && text[at - 1 - slashes] == '\\') ++slashes;
    EXPECT_EQ(slashes % 2, 1u) << "a link survived at " << at << " in:\n" << text;
  }
  EXPECT_EQ(text.find("!["), std::string::npos) << text;
}

// Rung IDs, the first failing rung, member and verdict fields: what the
// ladder's members and coordinator wrote, printed on a terminal.
TEST_F(HostileBundleTest, BundleTextReachesTheMarkdownReportAsText) {
  std::string bundle = EditedBundle("text", [](nlohmann::json& m) {
    m["coordinator"] = kHostile;
    m["verdict"]["first_failing_rung"] = kHostile;
    m["verdict"]["summary"] = kHostile;
    m["rungs"][0]["id"] = kHostile;
    m["rungs"][0]["reason"] = kHostile;
    m["members"][0]["rack"] = kHostile;
    m["members"][0]["node_type"] = kHostile;
  });
  RunResult r = RunFabcheck({"report", "--format", "md", bundle});
  ExpectContained(r, 30);
  EXPECT_NE(r.code, 3) << Describe(r);
  EXPECT_NE(r.out.find("tracker.example"), std::string::npos) << "the text is shown, as text: " << r.out;
  ExpectNoMarkupOrControls(r.out);
  ExpectNoMarkupOrControls(r.err);
}

TEST_F(HostileBundleTest, ABadSchemaErrorCarriesNoControlSequence) {
  std::string bundle = EditedBundle("schema", [](nlohmann::json& m) { m["schema"] = kHostile; });
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"report", bundle}, std::vector<std::string>{"diagnose", bundle}}) {
    SCOPED_TRACE(args[0]);
    RunResult r = RunFabcheck(args);
    ExpectContained(r, 30);
    EXPECT_NE((r.out + r.err).find("schema"), std::string::npos) << "the error names what is wrong: " << Describe(r);
    for (const std::string* text : {&r.out, &r.err}) {
      for (char c : *text) {
        const unsigned char u = static_cast<unsigned char>(c);
        ASSERT_TRUE(u >= 0x20 || c == '\n' || c == '\t') << "control byte " << int(u) << " in:\n" << *text;
      }
    }
  }
}

}  // namespace
}  // namespace fabcheck::hostile
