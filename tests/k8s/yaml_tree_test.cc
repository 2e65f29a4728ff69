#include "k8s/yaml_tree.h"

#include <gtest/gtest.h>

#include <string>

#include "k8s/manifest.h"

namespace fabcheck::k8s {
namespace {

TEST(YamlTree, DuplicateKeysAreReportedWithBothLines) {
  auto docs = ParseYamlStream("a: 1\nb:\n  c: 2\n  c: 3\na: 4\n");
  ASSERT_EQ(docs.size(), 1u);
  ASSERT_EQ(docs[0].issues.size(), 2u);
  EXPECT_EQ(docs[0].issues[0].kind, YamlIssue::Kind::kDuplicateKey);
  EXPECT_EQ(docs[0].issues[0].line, 4);
  EXPECT_EQ(docs[0].issues[0].first_line, 3);
  EXPECT_EQ(docs[0].issues[1].line, 5);
  EXPECT_EQ(docs[0].issues[1].first_line, 1);
  // Both values are kept in the tree; lookup returns the last, as the API server sees it.
  EXPECT_EQ(docs[0].root->Get("a").Str(), "4");
}

TEST(YamlTree, SameKeyInDifferentMapsIsNotADuplicate) {
  auto docs = ParseYamlStream("- name: a\n  value: 1\n- name: b\n  value: 2\n");
  ASSERT_EQ(docs.size(), 1u);
  EXPECT_TRUE(docs[0].issues.empty());
}

TEST(YamlTree, QuotedScalarsAreStrings) {
  auto docs = ParseYamlStream("a: \"true\"\nb: true\nc: '8'\nd: 8\ne: yes\nf: |\n  text\n");
  const YNode& r = *docs[0].root;
  EXPECT_FALSE(r.Get("a").AsBool());
  EXPECT_TRUE(r.Get("a").IsString());
  EXPECT_EQ(r.Get("b").AsBool(), true);
  EXPECT_FALSE(r.Get("c").AsInt());
  EXPECT_EQ(r.Get("d").AsInt(), 8);
  EXPECT_EQ(r.Get("e").AsBool(), true);  // YAML 1.1, as sigs.k8s.io/yaml reads it
  EXPECT_TRUE(r.Get("f").quoted);
}

TEST(YamlTree, LinesCountFromTheFileAcrossDocuments) {
  auto docs = ParseYamlStream("a: 1\n---\n# comment\nb: 2\n---\n---\nc:\n  d: 3\n");
  ASSERT_EQ(docs.size(), 3u);  // the empty document between the two markers is skipped
  EXPECT_EQ(docs[0].root->Get("a").line, 1);
  EXPECT_EQ(docs[1].root->Get("b").line, 4);
  EXPECT_EQ(docs[2].root->Get("c").Get("d").line, 8);
}

TEST(YamlTree, SyntaxErrorInOneDocumentKeepsTheOthers) {
  auto docs = ParseYamlStream("a: [1, 2\n---\nb: 2\n");
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(docs[0].root, nullptr);
  ASSERT_FALSE(docs[0].issues.empty());
  EXPECT_EQ(docs[0].issues[0].kind, YamlIssue::Kind::kSyntax);
  ASSERT_NE(docs[1].root, nullptr);
  EXPECT_EQ(docs[1].root->Get("b").Str(), "2");
}

TEST(YamlTree, AnchorsAliasesAndMergeKeys) {
  auto docs = ParseYamlStream("base: &b\n  x: 1\n  y: 2\nuse:\n  <<: *b\n  y: 3\nref: *b\n");
  ASSERT_EQ(docs.size(), 1u);
  EXPECT_TRUE(docs[0].issues.empty());
  const YNode& r = *docs[0].root;
  EXPECT_EQ(r.Get("use").Get("x").Str(), "1");
  EXPECT_EQ(r.Get("use").Get("y").Str(), "3");  // the map's own key wins over the merged one
  EXPECT_EQ(r.Get("ref").Get("y").Str(), "2");
}

TEST(YamlTree, OddInputNeverCrashes) {
  // Alias bomb: shared nodes, nothing is expanded.
  std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n";
  char prev = 'a';
  for (char c = 'b'; c <= 'p'; ++c) {
    bomb += std::string(1, c) + ": &" + c + " [";
    for (int i = 0; i < 9; ++i) bomb += std::string(i ? ", *" : "*") + prev;
    bomb += "]\n";
    prev = c;
  }
  EXPECT_EQ(ParseYamlStream(bomb).size(), 1u);
  // Deep nesting stops with a finding instead of exhausting the stack.
  std::string deep(100000, '[');
  auto docs = ParseYamlStream(deep);
  ASSERT_EQ(docs.size(), 1u);
  EXPECT_FALSE(docs[0].issues.empty());
  std::string deep_maps;
  for (int i = 0; i < 3000; ++i) deep_maps += std::string(i, ' ') + "k:\n";
  docs = ParseYamlStream(deep_maps);
  EXPECT_FALSE(docs.empty());
  // Unknown alias, tabs, lone markers, a bare scalar.
  for (const char* text : {"a: *nowhere\n", "a:\n\t- b\n", "---\n...\n---\n", "just text\n", "...\n", "- 1\n- 2\n",
                           "? complex\n: key\n", "[a, b]: c\n", "%YAML 1.2\n---\na: 1\n"}) {
    (void)ParseYamlStream(text);
  }
}

TEST(Manifest, NonObjectsBecomeBadDocumentsAndListsAreExpanded) {
  ManifestSet set;
  AddYamlText("42\n---\n- a\n---\nkind: Pod\n---\napiVersion: v1\nkind: List\nitems:\n"
              "  - apiVersion: v1\n    kind: ConfigMap\n    metadata: {name: a}\n",
              "x.yaml", set);
  EXPECT_EQ(set.bad_documents.size(), 3u);
  ASSERT_EQ(set.objects.size(), 1u);
  EXPECT_EQ(set.objects[0].kind, "ConfigMap");
  EXPECT_EQ(set.objects[0].ns, "default");
}

TEST(Manifest, HugeFileIsReadQuickly) {
  std::string text;
  for (int i = 0; i < 20000; ++i) {
    text += "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-" + std::to_string(i) + "\ndata:\n  k: v\n";
  }
  ManifestSet set;
  AddYamlText(text, "big.yaml", set);
  EXPECT_EQ(set.objects.size(), 20000u);
  EXPECT_EQ(set.objects.back().line, 20000 * 7 - 5);
}

TEST(Manifest, BinaryDataIsASyntaxIssue) {
  ManifestSet set;
  AddYamlText(std::string("a: b\0c", 6), "bin.yaml", set);
  ASSERT_EQ(set.yaml_issues.size(), 1u);
  EXPECT_TRUE(set.objects.empty());
}

TEST(Manifest, MissingPathIsAnError) {
  auto r = LoadManifests({"/nonexistent/fabcheck/manifests"}, {});
  EXPECT_FALSE(r.ok());
}

}  // namespace
}  // namespace fabcheck::k8s
