// yaml.duplicate-key: a key written twice in one mapping.
#include "k8s/rules/common.h"

namespace fabcheck::k8s::rules {
namespace {

void Check(const Context& ctx, Reporter& out) {
  for (const auto& li : ctx.set.yaml_issues) {
    if (li.issue.kind != YamlIssue::Kind::kDuplicateKey) continue;
    Report r;
    r.file = li.file;
    r.subject = li.file;
    r.line = li.issue.line;
    r.column = li.issue.column;
    r.message = li.issue.message;
    r.evidence = {li.file + ":" + std::to_string(li.issue.first_line) + " first occurrence",
                  li.file + ":" + std::to_string(li.issue.line) + " duplicate"};
    // Find the object that holds the line, so its annotations can suppress this.
    for (const auto& obj : ctx.set.objects) {
      if (obj.file == li.file && obj.line <= li.issue.line &&
          (!r.object || obj.line > r.object->line)) {
        r.object = &obj;
      }
    }
    if (r.object) r.subject = r.object->Ref();
    out.Add(std::move(r));
  }
}

}  // namespace

const Rule& RuleYamlDuplicateKey() {
  static const Rule kRule{
      {"yaml.duplicate-key", Level::kError, "generic", "Duplicate key in a YAML mapping",
       "YAML parsers keep one of two equal keys without a word: a second resources: block silently replaces the "
       "first (the GPU or RDMA request disappears), a second env: list drops the NCCL settings. kubectl apply "
       "accepts it in many versions.",
       "Merge the two blocks into one key.",
       "k8s-lint-evidence GEN001; YAML 1.2 §3.2.1.1 (keys are unique)", {}},
      &Check};
  return kRule;
}

}  // namespace fabcheck::k8s::rules
