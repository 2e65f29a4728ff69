// The Markdown report prints what agents and bundles supplied: every field
// must render as the text it holds. No raw HTML (<script>, <img>), no link or
// image ([x](javascript:...), ![x](https://tracker/)), no emphasis or table
// break, no control character reaching a terminal that shows the report.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "report/markdown.h"

namespace fabcheck::report {
namespace {

// Payloads a hostile member or bundle writes into a field.
const std::vector<std::string> kPayloads = {
    "<script>alert(1)</script>",
    "[click](javascript:alert(1))",
    "![pixel](https://tracker.example/p.png)",
    "[ref]: javascript:alert(1)",
    "<img src=x onerror=alert(1)>",
    "&lt;script&gt;",
    "a|b**c**_d_`e`~~f~~ # g",
    "esc \x1b[31mred\x1b]0;title\x07 \x9b" "2J \xc2\x9b" "2J \xe2\x80\xae" "evil",
    "line\nbreak\r| --- |",
};

// Every string field the bundle or its members supply holds `p`.
model::GoLiveReport Hostile(const std::string& p) {
  model::GoLiveReport r;
  r.schema = r.fabcheck_version = r.bundle = r.bundle_fabcheck_version = r.created_at = r.coordinator = p;
  r.verdict_summary = r.first_failing_rung = p;
  r.node_types = {p, p};
  r.notes = {p};
  model::ChecklistItem item;
  item.number = 1;
  item.id = "golive.example";  // the catalog's ID, printed in a code span
  item.title = item.summary = item.remedy = p;
  item.evidence = item.members = item.record = item.rungs = {p};
  item.status = model::ChecklistStatus::kManual;
  r.checklist = {item};
  model::RungSummary rung;
  rung.id = rung.title = rung.verdict = rung.reason = p;
  r.rungs = {rung};
  model::MemberSummary m;
  m.id = m.node_type = m.rack = m.leaf = m.dropped_at = m.dropped_reason = p;
  m.rung_status = {p};
  r.members = {m};
  model::BaselineDiff b;
  b.baseline = b.baseline_created_at = p;
  model::BaselineChange c;
  c.kind = c.object = c.before = c.after = c.message = p;
  b.changes = {c};
  r.baseline = b;
  return r;
}

// The offsets of `c` in `md` not preceded by a backslash.
std::vector<size_t> Unescaped(const std::string& md, char c) {
  std::vector<size_t> at;
  for (size_t i = 0; i < md.size(); ++i) {
    if (md[i] != c) continue;
    size_t slashes = 0;
    for (size_t k = i; k > 0 && md[k - 1] == '\\'; --k) ++slashes;
    if (slashes % 2 == 0) at.push_back(i);
  }
  return at;
}

TEST(MarkdownReport, EveryFieldRendersAsItsText) {
  for (const std::string& p : kPayloads) {
    SCOPED_TRACE(p);
    std::string md = RenderMarkdown(Hostile(p));
    // The template's own checkboxes are the only brackets left raw.
    for (size_t at = md.find("- [ ] "); at != std::string::npos; at = md.find("- [ ] ")) md.erase(at, 6);
    EXPECT_EQ(md.find('<'), std::string::npos) << md;
    EXPECT_EQ(md.find('>'), std::string::npos) << md;
    EXPECT_TRUE(Unescaped(md, '[').empty()) << md;
    EXPECT_TRUE(Unescaped(md, ']').empty()) << md;
    EXPECT_TRUE(Unescaped(md, '!').empty()) << md;
    if (p == "&lt;script&gt;") {
      EXPECT_NE(md.find("&amp;lt;script&amp;gt;"), std::string::npos) << "an entity must show as typed: " << md;
    }
    for (char c : md) {
      const unsigned char u = static_cast<unsigned char>(c);
      EXPECT_TRUE(u >= 0x20 || c == '\n') << "control byte " << int(u) << " in " << md;
      EXPECT_NE(u, 0x7f);
    }
    EXPECT_EQ(md.find("\xc2\x9b"), std::string::npos) << "C1 CSI";
    EXPECT_EQ(md.find("\xe2\x80\xae"), std::string::npos) << "bidi override";
    EXPECT_EQ(md.find('\x9b'), std::string::npos) << "8-bit CSI";
  }
}

TEST(MarkdownReport, EscapedTextStillReadsAsTheText) {
  EXPECT_EQ(MarkdownEscape("dgx-03 mlx5_2: 10.0.0.1"), "dgx-03 mlx5\\_2: 10.0.0.1");
  EXPECT_EQ(MarkdownEscape("[x](javascript:y)"), "\\[x\\](javascript:y)");
  EXPECT_EQ(MarkdownEscape("<b>&"), "&lt;b&gt;&amp;");
  EXPECT_EQ(MarkdownEscape("a\nb"), "a b");
  EXPECT_EQ(MarkdownEscape("red\x1b[31m"), "red\\\\x1b\\[31m");
}

}  // namespace
}  // namespace fabcheck::report
