// A small YAML tree that keeps what Kubernetes linting needs and yaml-cpp's
// Node drops or hides: the line of every node, whether a scalar was quoted
// (so `hostNetwork: "true"` is a string, not a boolean), and every duplicated
// mapping key (yaml-cpp keeps one of them silently; a duplicated `resources:`
// drops the first block without a word).
//
// The tree is built from yaml-cpp's parser events, without recursion, so odd
// input (deep nesting, aliases, anchors, scalars at the top) cannot crash it.
// Aliases share the anchored node; nothing is expanded.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fabcheck::k8s {

struct YNode {
  enum class Kind { kNull, kScalar, kSequence, kMap };
  Kind kind = Kind::kNull;
  std::string value;   // scalars only
  bool quoted = false; // scalar written with quotes or a block style: always a string
  std::string tag;     // explicit tag such as "tag:yaml.org,2002:str"; empty when none
  int line = 0;        // 1-based, within the file
  int column = 0;      // 1-based
  std::vector<std::shared_ptr<const YNode>> items;  // sequence items
  std::vector<std::pair<std::shared_ptr<const YNode>, std::shared_ptr<const YNode>>> entries;  // map

  bool IsNull() const { return kind == Kind::kNull; }
  bool IsScalar() const { return kind == Kind::kScalar; }
  bool IsSeq() const { return kind == Kind::kSequence; }
  bool IsMap() const { return kind == Kind::kMap; }

  // Map lookup; returns the shared empty node (kNull, line 0) when absent, so
  // lookups chain: root.Get("spec").Get("template"). Of duplicated keys the
  // last one counts, as it does for the API server.
  const YNode& Get(std::string_view key) const;
  bool Has(std::string_view key) const;
  // The key node of `key` (for its line), or nullptr.
  const YNode* KeyNode(std::string_view key) const;

  // Typed views of a scalar, following YAML 1.1 plain-scalar resolution as
  // Kubernetes (sigs.k8s.io/yaml) does. Quoted scalars are strings only.
  bool IsString() const { return IsScalar() && (quoted || (!AsBool() && !AsInt() && !IsNullScalar())); }
  std::optional<bool> AsBool() const;
  std::optional<long long> AsInt() const;
  bool IsNullScalar() const;
  // The scalar text ("" for anything else).
  const std::string& Str() const;

  // The line to report for this node; falls back to `fallback` when unknown.
  int LineOr(int fallback) const { return line > 0 ? line : fallback; }

  static const YNode& Empty();
};

using YNodePtr = std::shared_ptr<const YNode>;

// A problem found while reading YAML text.
struct YamlIssue {
  enum class Kind { kSyntax, kDuplicateKey };
  Kind kind;
  int line = 0;
  int column = 0;
  std::string message;
  int first_line = 0;  // duplicate keys: where the key was first written
  // The text may be valid YAML, but expanding it passed fabcheck's budget
  // (aliases and merge keys, nesting depth): not the writer's syntax error.
  bool over_budget = false;
};

struct YamlDocument {
  YNodePtr root;     // nullptr for an empty document
  int start_line = 1;
  std::vector<YamlIssue> issues;  // syntax errors leave root == nullptr
};

// Splits `text` into documents at `---` / `...` lines and parses each one on
// its own, so one malformed document does not hide the others.
std::vector<YamlDocument> ParseYamlStream(std::string_view text);

// Parses one document's text; `line_offset` is added to every line number.
YamlDocument ParseYamlDocument(std::string_view text, int line_offset);

}  // namespace fabcheck::k8s
