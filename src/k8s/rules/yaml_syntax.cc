// yaml.syntax: text that is not valid YAML (or not readable as YAML at all).
#include "k8s/rules/common.h"

namespace fabcheck::k8s::rules {
namespace {

void Check(const Context& ctx, Reporter& out) {
  for (const auto& li : ctx.set.yaml_issues) {
    if (li.issue.kind != YamlIssue::Kind::kSyntax) continue;
    Report r;
    r.file = li.file;
    r.subject = li.file;
    r.line = li.issue.line;
    r.column = li.issue.column;
    r.message = li.issue.message + "; the rest of this document was not linted";
    if (ctx.set.template_files.count(li.file)) {
      // Operators ship Go/Helm templates as *.yaml next to real manifests.
      r.message += " (the file holds {{ ... }} template markup: lint what the template renders, e.g. "
                   "'helm template CHART | fabcheck k8s lint -')";
    }
    out.Add(std::move(r));
  }
}

}  // namespace

const Rule& RuleYamlSyntax() {
  static const Rule kRule{
      {"yaml.syntax", Level::kError, "generic", "Not valid YAML",
       "kubectl rejects the whole file; a document fabcheck cannot parse is not linted, so its problems stay "
       "hidden. Other documents of the same file are still read.",
       "Fix the YAML at the line given (indentation, an unclosed quote or bracket, a tab).", "YAML 1.2 spec", {}},
      &Check};
  return kRule;
}

}  // namespace fabcheck::k8s::rules
