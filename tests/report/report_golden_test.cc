// The bundled example (tests/data/bundles/): it is what its generator makes
// (byte for byte), it reads back through the bundle reader, and its Markdown
// and JSON reports match their goldens. The HTML is checked for what makes it
// self-contained; the browser test (browser_test.py) checks it rendered.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "example_fixture.h"
#include "base/json_text.h"
#include "golden.h"
#include "report/golive.h"
#include "report/html.h"
#include "report/load.h"
#include "report/markdown.h"

namespace fabcheck::report {
namespace {

namespace fs = std::filesystem;
using testing::CheckGolden;

const std::string kBundles = std::string(FABCHECK_TESTDATA_DIR) + "/bundles";

std::map<std::string, std::string> Tree(const fs::path& root) {
  std::map<std::string, std::string> out;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    out[fs::relative(entry.path(), root).string()] = s.str();
  }
  return out;
}

TEST(ExampleBundle, IsWhatTheGeneratorMakes) {
  fs::path dir = fs::temp_directory_path() / ("fabcheck-example-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  for (const std::string name : {"example-8", "example-8-baseline"}) {
    const auto& e = name == "example-8" ? testing::Current() : testing::Baseline();
    ASSERT_TRUE(example::WriteBundle(e, (dir / name).string()).ok());
    auto made = Tree(dir / name);
    auto checked_in = Tree(kBundles + "/" + name);
    EXPECT_GT(made.size(), 16u);
    ASSERT_EQ(made.size(), checked_in.size()) << name << ": regenerate with make_example_bundle " << kBundles;
    for (const auto& [path, content] : made) {
      EXPECT_TRUE(checked_in.count(path) && checked_in[path] == content)
          << name << "/" << path << " differs: regenerate with build/tests/report/make_example_bundle " << kBundles;
    }
  }
  fs::remove_all(dir);
}

struct Loaded {
  BundleEvidence current, baseline;
  model::GoLiveReport report;
};

const Loaded& Load() {
  static const Loaded kLoaded = [] {
    Loaded l;
    auto c = LoadBundle(kBundles + "/example-8");
    auto b = LoadBundle(kBundles + "/example-8-baseline");
    EXPECT_TRUE(c.ok()) << c.status().message();
    EXPECT_TRUE(b.ok()) << b.status().message();
    if (c.ok()) l.current = std::move(*c);
    if (b.ok()) l.baseline = std::move(*b);
    ReportOptions options;
    options.fabcheck_version = "test";
    options.baseline = &l.baseline;
    l.report = BuildReport(l.current, options);
    return l;
  }();
  return kLoaded;
}

TEST(ExampleBundle, ReadsBackCompletely) {
  const auto& l = Load();
  EXPECT_EQ(l.current.manifest.members.size(), 8u);
  EXPECT_EQ(l.current.inventories.size(), 8u);
  EXPECT_EQ(l.current.doctors.size(), 8u);
  EXPECT_TRUE(l.current.notes.empty());
  EXPECT_EQ(l.current.source, "bundle " + kBundles + "/example-8");
}

TEST(ReportGolden, MarkdownAndJson) {
  const auto& r = Load().report;
  // Paths of this checkout are not part of the goldens.
  model::GoLiveReport stable = r;
  stable.bundle = "bundle example-8";
  stable.baseline->baseline = "bundle example-8-baseline";
  EXPECT_EQ(CheckGolden("example-8.md", RenderMarkdown(stable)), "");
  EXPECT_EQ(CheckGolden("example-8.json", ToJsonText(nlohmann::json(stable), 2) + "\n"), "");
}

TEST(ReportHtml, SelfContained) {
  const auto& l = Load();
  std::string html = RenderHtml(l.report, l.current);
  EXPECT_LT(html.size(), 5u << 20);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  for (int i = 1; i <= 10; ++i) {
    EXPECT_NE(html.find("data-item=\"" + std::to_string(i) + "\""), std::string::npos) << i;
  }
  // Nothing to fetch: no script, stylesheet link, image, font, iframe, or URL other than the SVG namespace.
  for (const char* tag : {"<script", "<link", "<img", "<iframe", "@import", "url(", "@font-face"}) {
    EXPECT_EQ(html.find(tag), std::string::npos) << tag;
  }
  std::regex url(R"((https?:)?//[A-Za-z0-9.-]+)");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), url); it != std::sregex_iterator(); ++it) {
    EXPECT_EQ(it->str(), "http://www.w3.org") << "a URL in the page: " << it->str();
  }
  std::regex svg("<svg [^>]*width=\"([0-9]+)\" height=\"([0-9]+)\"");
  int plots = 0;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), svg); it != std::sregex_iterator(); ++it) {
    ++plots;
    EXPECT_GT(std::stoi((*it)[1]), 0);
    EXPECT_GT(std::stoi((*it)[2]), 0);
  }
  // Strip, member grid, bandwidth, latency, 8 rail heatmaps, busbw, one node type, counters.
  EXPECT_EQ(plots, 15);
  EXPECT_NE(html.find("@media print"), std::string::npos);
  EXPECT_NE(html.find("Changes since the baseline"), std::string::npos);
  // Text from the bundle is escaped.
  BundleEvidence hostile = l.current;
  hostile.manifest.members[0].node_type = "<script>alert(1)</script>";
  ReportOptions options;
  auto r = BuildReport(hostile, options);
  std::string page = RenderHtml(r, hostile);
  EXPECT_EQ(page.find("<script>"), std::string::npos);
  EXPECT_NE(page.find("&lt;script&gt;"), std::string::npos);
}

TEST(ReportHtml, EmptyBundleStillRenders) {
  BundleEvidence empty;
  empty.source = "bundle empty";
  auto r = BuildReport(empty, {});
  std::string html = RenderHtml(r, empty);
  EXPECT_NE(html.find("No L3 bandwidth in this bundle."), std::string::npos);
  EXPECT_NE(html.find("data-item=\"10\""), std::string::npos);
  std::string md = RenderMarkdown(r);
  EXPECT_NE(md.find("### 10."), std::string::npos);
  EXPECT_EQ(r.exit_code, 2);  // no verdict recorded: not a go
}

}  // namespace
}  // namespace fabcheck::report
