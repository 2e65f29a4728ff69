#include "k8s/yaml_tree.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/parser.h>

#include <map>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "base/strings.h"

namespace fabcheck::k8s {
namespace {

// Deeper than this is not a manifest; stopping here also keeps the recursive
// destruction of the tree far from the stack limit.
constexpr int kMaxDepth = 512;

struct TooDeep {};

// Every reader walks an alias as if it were written out (a `kind: List`
// whose items are aliases of lists is a list of everything they hold), so a
// 10 KB "billion laughs" file stands for billions of nodes: the probe's took
// 2.3 GB. Aliases and merge keys may add at most this many nodes to what a
// document writes out; past it the document is a syntax issue and no rule
// sees it. Real manifests repeat an env block or a container through an
// anchor (hundreds of nodes); a reader walking 100,000 more stays within tens
// of MB and well under a second.
constexpr uint64_t kMaxAliasExpansion = 100'000;

struct OverBudget {
  uint64_t written;  // nodes written out so far
};

// Builds YNodes from parser events with an explicit stack.
class TreeBuilder : public YAML::EventHandler {
 public:
  TreeBuilder(int line_offset, std::vector<YamlIssue>* issues) : offset_(line_offset), issues_(issues) {}

  YNodePtr TakeRoot() { return std::move(root_); }

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    auto node = Make(mark);
    node->kind = YNode::Kind::kNull;
    Add(std::move(node), anchor);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    auto it = anchors_.find(anchor);
    if (it == anchors_.end()) {
      auto node = Make(mark);
      Add(std::move(node), YAML::NullAnchor);
      return;
    }
    Add(it->second, YAML::NullAnchor);
  }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    auto node = Make(mark);
    node->kind = YNode::Kind::kScalar;
    node->value = value;
    // yaml-cpp tags plain scalars "?" and quoted or block scalars "!".
    node->quoted = tag == "!" || tag == "tag:yaml.org,2002:str";
    if (tag != "?" && tag != "!") node->tag = tag;
    Add(std::move(node), anchor);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    auto node = Make(mark);
    node->kind = YNode::Kind::kSequence;
    Open(std::move(node), anchor);
  }
  void OnSequenceEnd() override { Close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    auto node = Make(mark);
    node->kind = YNode::Kind::kMap;
    Open(std::move(node), anchor);
  }
  void OnMapEnd() override {
    if (!stack_.empty()) {
      YNode& map = *stack_.back().node;
      if (ApplyMergeKeys(map)) {
        expanded_[&map] = 1;
        for (const auto& [k, v] : map.entries) {
          AddExpanded(map, *k);
          AddExpanded(map, *v);
        }
      }
    }
    Close();
  }

 private:
  struct Frame {
    std::shared_ptr<YNode> node;
    YAML::anchor_t anchor;
    std::shared_ptr<const YNode> pending_key;  // maps: the key waiting for its value
    std::unordered_map<std::string, int> key_lines;  // maps: scalar key -> first line
  };

  std::shared_ptr<YNode> Make(const YAML::Mark& mark) {
    ++written_;
    auto node = std::make_shared<YNode>();
    expanded_.erase(node.get());  // a merge may have freed a node at this address
    node->line = mark.line >= 0 ? mark.line + 1 + offset_ : 0;
    node->column = mark.column >= 0 ? mark.column + 1 : 0;
    return node;
  }

  void Open(std::shared_ptr<YNode> node, YAML::anchor_t anchor) {
    if (static_cast<int>(stack_.size()) >= kMaxDepth) throw TooDeep{};
    stack_.push_back({std::move(node), anchor, nullptr, {}});
  }

  void Close() {
    if (stack_.empty()) return;
    Frame frame = std::move(stack_.back());
    stack_.pop_back();
    Add(frame.node, frame.anchor);
  }

  // A node's expanded count may pass the nodes written so far by at most the
  // budget. The document's count is at least any node's, so stopping at the
  // first node over it stops before a bomb is walked, and a document whose
  // root stays within it never trips.
  void AddExpanded(const YNode& parent, const YNode& child) {
    uint64_t& total = expanded_.emplace(&parent, 1).first->second;
    total += Expanded(child);  // each term <= written_ + budget: cannot overflow
    if (total > written_ + kMaxAliasExpansion) throw OverBudget{written_};
  }

  // This node and everything under it counted as if aliases and merge keys
  // were written out: what a reader walking it visits.
  uint64_t Expanded(const YNode& node) const {
    auto it = expanded_.find(&node);
    return it == expanded_.end() ? 1 : it->second;
  }

  void Add(std::shared_ptr<const YNode> node, YAML::anchor_t anchor) {
    if (anchor != YAML::NullAnchor) anchors_[anchor] = node;
    if (stack_.empty()) {
      root_ = std::move(node);
      return;
    }
    Frame& top = stack_.back();
    AddExpanded(*top.node, *node);
    if (top.node->kind == YNode::Kind::kSequence) {
      top.node->items.push_back(std::move(node));
      return;
    }
    if (!top.pending_key) {
      top.pending_key = std::move(node);
      return;
    }
    const YNode& key = *top.pending_key;
    if (key.IsScalar() && key.value != "<<") {
      auto [it, inserted] = top.key_lines.emplace(key.value, key.line);
      if (!inserted) {
        issues_->push_back({YamlIssue::Kind::kDuplicateKey, key.line, key.column,
                            "duplicate key '" + key.value + "' (first at line " + std::to_string(it->second) +
                                "); YAML keeps only one of them",
                            it->second});
      }
    }
    top.node->entries.emplace_back(std::move(top.pending_key), std::move(node));
    top.pending_key = nullptr;
  }

  // `<<: *base` merges the entries of `base` that the map does not set itself,
  // as sigs.k8s.io/yaml does when kubectl reads a manifest; of two sources
  // setting one key, the first wins. The keys already set are hashed, so a
  // map merging thousands of sources costs their entries, not their square.
  // True when the map changed.
  static bool ApplyMergeKeys(YNode& map) {
    std::vector<YNodePtr> sources;
    std::vector<std::pair<YNodePtr, YNodePtr>> kept;
    for (auto& [k, v] : map.entries) {
      if (k->IsScalar() && !k->quoted && k->value == "<<") {
        if (v->IsMap()) sources.push_back(v);
        if (v->IsSeq()) {
          for (const auto& item : v->items) {
            if (item->IsMap()) sources.push_back(item);
          }
        }
      } else {
        kept.emplace_back(k, v);
      }
    }
    if (sources.empty()) return false;
    map.entries = std::move(kept);
    std::unordered_set<std::string_view> set;
    for (const auto& [k, v] : map.entries) {
      if (k->IsScalar()) set.insert(k->value);
    }
    for (const auto& source : sources) {
      for (const auto& [k, v] : source->entries) {
        // The views point into key nodes that the map keeps alive.
        if (k->IsScalar() && !set.insert(k->value).second) continue;
        map.entries.emplace_back(k, v);
      }
    }
    return true;
  }

  int offset_;
  uint64_t written_ = 0;  // nodes made from the text (aliases excluded)
  std::unordered_map<const YNode*, uint64_t> expanded_;  // absent: 1 (a leaf)
  std::vector<YamlIssue>* issues_;
  std::vector<Frame> stack_;
  std::map<YAML::anchor_t, std::shared_ptr<const YNode>> anchors_;
  YNodePtr root_;
};

bool IsDocumentMarker(std::string_view line, std::string_view marker) {
  if (!StartsWith(line, marker)) return false;
  return line.size() == 3 || line[3] == ' ' || line[3] == '\t' || line[3] == '\r';
}

}  // namespace

const YNode& YNode::Empty() {
  static const YNode kEmpty;
  return kEmpty;
}

// The last of duplicated keys wins, as in sigs.k8s.io/yaml: rules see what
// the API server would get.
const YNode& YNode::Get(std::string_view key) const {
  if (kind != Kind::kMap) return Empty();
  for (auto it = entries.rbegin(); it != entries.rend(); ++it) {
    if (it->first->IsScalar() && it->first->value == key) return *it->second;
  }
  return Empty();
}

bool YNode::Has(std::string_view key) const { return KeyNode(key) != nullptr; }

const YNode* YNode::KeyNode(std::string_view key) const {
  if (kind != Kind::kMap) return nullptr;
  for (auto it = entries.rbegin(); it != entries.rend(); ++it) {
    if (it->first->IsScalar() && it->first->value == key) return it->first.get();
  }
  return nullptr;
}

std::optional<bool> YNode::AsBool() const {
  if (!IsScalar() || quoted) return std::nullopt;
  if (!tag.empty() && tag != "tag:yaml.org,2002:bool") return std::nullopt;
  static const char* kTrue[] = {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON", "y", "Y"};
  static const char* kFalse[] = {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF", "n", "N"};
  for (const char* t : kTrue) {
    if (value == t) return true;
  }
  for (const char* f : kFalse) {
    if (value == f) return false;
  }
  return std::nullopt;
}

std::optional<long long> YNode::AsInt() const {
  if (!IsScalar() || quoted) return std::nullopt;
  if (!tag.empty() && tag != "tag:yaml.org,2002:int") return std::nullopt;
  std::string_view v = value;
  bool negative = false;
  if (!v.empty() && (v[0] == '-' || v[0] == '+')) {
    negative = v[0] == '-';
    v.remove_prefix(1);
  }
  std::optional<long long> parsed;
  if (StartsWith(v, "0x")) {
    parsed = ParseInt(v.substr(2), 16);
  } else if (StartsWith(v, "0o")) {
    parsed = ParseInt(v.substr(2), 8);
  } else if (!v.empty() && v[0] != '+' && v[0] != '-') {
    parsed = ParseInt(v, 10);
  }
  if (!parsed) return std::nullopt;
  return negative ? -*parsed : *parsed;
}

bool YNode::IsNullScalar() const {
  return IsScalar() && !quoted && (value == "~" || value == "null" || value == "Null" || value == "NULL");
}

const std::string& YNode::Str() const {
  static const std::string kNone;
  return IsScalar() ? value : kNone;
}

YamlDocument ParseYamlDocument(std::string_view text, int line_offset) {
  YamlDocument doc;
  doc.start_line = line_offset + 1;
  std::stringstream stream{std::string(text)};
  TreeBuilder builder(line_offset, &doc.issues);
  try {
    YAML::Parser parser(stream);
    parser.HandleNextDocument(builder);
    doc.root = builder.TakeRoot();
    if (doc.root && doc.root->IsNull()) doc.root = nullptr;
    // A second document here means a marker the splitter did not see (for
    // example "--- " after a directive); report it rather than drop it.
    TreeBuilder ignored(line_offset, &doc.issues);
    if (parser.HandleNextDocument(ignored)) {
      doc.issues.push_back({YamlIssue::Kind::kSyntax, line_offset + 1, 1,
                            "more than one document in one section; separate documents with a '---' line", 0});
    }
  } catch (const YAML::Exception& e) {
    doc.root = nullptr;
    int line = e.mark.line >= 0 ? e.mark.line + 1 + line_offset : line_offset + 1;
    int column = e.mark.column >= 0 ? e.mark.column + 1 : 0;
    doc.issues.push_back({YamlIssue::Kind::kSyntax, line, column, "invalid YAML: " + e.msg, 0});
  } catch (const OverBudget& over) {
    doc.root = nullptr;
    doc.issues.push_back({YamlIssue::Kind::kSyntax, line_offset + 1, 1,
                          "aliases and merge keys expand this document by more than " +
                              std::to_string(kMaxAliasExpansion) + " nodes beyond the " +
                              std::to_string(over.written) +
                              " it writes out (fabcheck's budget per document; a YAML alias bomb?); write the "
                              "repeated parts out, or split the document",
                          0, /*over_budget=*/true});
  } catch (const TooDeep&) {
    doc.root = nullptr;
    doc.issues.push_back({YamlIssue::Kind::kSyntax, line_offset + 1, 1,
                          "nesting deeper than " + std::to_string(kMaxDepth) + " levels; not a manifest", 0,
                          /*over_budget=*/true});
  }
  return doc;
}

std::vector<YamlDocument> ParseYamlStream(std::string_view text) {
  std::vector<YamlDocument> docs;
  size_t section_start = 0;
  int section_line = 0;  // 0-based line where the section starts
  int line_no = 0;
  size_t pos = 0;
  auto flush = [&](size_t end, bool has_content) {
    if (has_content) docs.push_back(ParseYamlDocument(text.substr(section_start, end - section_start), section_line));
  };
  bool content = false;
  while (pos <= text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view line = text.substr(pos, eol - pos);
    bool start_marker = IsDocumentMarker(line, "---");
    bool end_marker = IsDocumentMarker(line, "...");
    if (start_marker || end_marker) {
      flush(pos, content);
      content = false;
      section_start = end_marker ? std::min(eol + 1, text.size()) : pos;
      section_line = end_marker ? line_no + 1 : line_no;
      if (start_marker) {
        // "--- value" carries content on the marker line itself.
        std::string_view rest = Trim(line.substr(3));
        content = !rest.empty() && rest[0] != '#';
      }
    } else {
      std::string_view trimmed = Trim(line);
      if (!trimmed.empty() && trimmed[0] != '#' && trimmed[0] != '%') content = true;
    }
    if (eol == text.size()) break;
    pos = eol + 1;
    ++line_no;
  }
  flush(text.size(), content);
  return docs;
}

}  // namespace fabcheck::k8s
