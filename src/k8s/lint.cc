#include "k8s/lint.h"

#include <algorithm>
#include <tuple>

#include "base/strings.h"
#include "k8s/registry.h"

namespace fabcheck::k8s {
namespace {

const YNode* FindParam(const LintConfig& config, const std::string& rule, const std::string& name) {
  auto r = config.params.find(rule);
  if (r == config.params.end()) return nullptr;
  auto p = r->second.find(name);
  return p == r->second.end() ? nullptr : p->second.get();
}

class Collector : public Reporter {
 public:
  Collector(const Rule& rule, const LintConfig& config, LintResult& result)
      : rule_(rule), config_(config), result_(result) {}

  void Add(Report r) override {
    LintedFinding lf;
    lf.rule = &rule_;
    lf.level = r.level ? *r.level : rule_.info.level;
    if (auto it = config_.severity.find(rule_.info.id); it != config_.severity.end()) lf.level = it->second;
    model::Finding& f = lf.finding;
    f.id = rule_.info.id;
    f.severity = ToSeverity(lf.level);
    f.group = rule_.info.scope;
    f.object = !r.subject.empty() ? r.subject : (r.object ? r.object->Ref() : r.file);
    f.message = r.message;
    f.evidence = std::move(r.evidence);
    f.remedy = r.remedy.empty() ? rule_.info.remedy : r.remedy;
    std::string file = r.object ? r.object->file : r.file;
    int line = r.line > 0 ? r.line : (r.object ? r.object->line : 0);
    f.location = model::SourceLocation{file, line, r.column};
    lf.object_line = r.object ? r.object->line : line;

    // Suppression: the pod template's annotations, then the object's.
    std::string key = SuppressionAnnotation(rule_.info.id);
    const YNode* value = nullptr;
    if (r.pod) {
      const YNode& v = r.pod->meta->Get("annotations").Get(key);
      if (!v.IsNull()) value = &v;
    }
    if (!value && r.object) {
      const YNode& v = r.object->Metadata().Get("annotations").Get(key);
      if (!v.IsNull()) value = &v;
    }
    if (value) {
      std::string reason(Trim(value->Str()));
      if (!reason.empty()) {
        lf.suppressed_by = key + ": " + reason;
        result_.suppressed.push_back(std::move(lf));
        return;
      }
      f.evidence.push_back("annotation " + key + " (line " + std::to_string(value->line) +
                           ") ignored: it needs a reason, e.g. \"" + key + ": 'tested: platform raises memlock'\"");
    }
    result_.findings.push_back(std::move(lf));
  }

 private:
  const Rule& rule_;
  const LintConfig& config_;
  LintResult& result_;
};

}  // namespace

std::string SuppressionAnnotation(std::string_view id) { return "fabcheck.io/ignore-" + std::string(id); }

long long Context::ParamInt(const std::string& rule, const std::string& name, long long fallback) const {
  const YNode* p = FindParam(config, rule, name);
  if (!p) return fallback;
  return p->AsInt().value_or(fallback);
}

bool Context::ParamBool(const std::string& rule, const std::string& name, bool fallback) const {
  const YNode* p = FindParam(config, rule, name);
  if (!p) return fallback;
  return p->AsBool().value_or(fallback);
}

std::vector<std::string> Context::ParamList(const std::string& rule, const std::string& name) const {
  std::vector<std::string> out;
  const YNode* p = FindParam(config, rule, name);
  if (!p) return out;
  if (p->IsScalar()) return Split(p->value, ',', true);
  for (const auto& item : p->items) out.push_back(item->Str());
  return out;
}

bool Context::HasParam(const std::string& rule, const std::string& name) const {
  return FindParam(config, rule, name) != nullptr;
}

int LintResult::Count(Level level) const {
  return static_cast<int>(std::count_if(findings.begin(), findings.end(),
                                        [&](const LintedFinding& f) { return f.level == level; }));
}

bool LintResult::FailsAt(Level fail_on) const {
  return std::any_of(findings.begin(), findings.end(), [&](const LintedFinding& f) {
    return static_cast<int>(f.level) >= static_cast<int>(fail_on);
  });
}

Status ValidateConfig(const LintConfig& config) {
  auto known = [](const std::string& id) { return FindRule(id) != nullptr; };
  auto is_glob = [](const std::string& s) { return s.find_first_of("*?[") != std::string::npos; };
  for (const auto* list : {&config.include, &config.exclude}) {
    for (const auto& id : *list) {
      if (!is_glob(id) && !known(id)) {
        return InvalidArgumentError(config.file + ": unknown rule '" + id + "' (see 'fabcheck k8s rules')");
      }
    }
  }
  for (const auto& [id, level] : config.severity) {
    if (!known(id)) return InvalidArgumentError(config.file + ": severity for unknown rule '" + id + "'");
  }
  for (const auto& [id, params] : config.params) {
    const Rule* rule = FindRule(id);
    if (!rule) return InvalidArgumentError(config.file + ": params for unknown rule '" + id + "'");
    for (const auto& [name, value] : params) {
      const std::string& wanted = name;  // clang 14 (the fuzz build) cannot capture a structured binding
      auto spec = std::find_if(rule->info.params.begin(), rule->info.params.end(),
                               [&](const ParamSpec& p) { return p.name == wanted; });
      if (spec == rule->info.params.end()) {
        std::vector<std::string> names;
        for (const auto& p : rule->info.params) names.push_back(p.name);
        return InvalidArgumentError(config.file + ":" + std::to_string(value->line) + ": rule " + id +
                                    " has no parameter '" + name + "' (it has: " +
                                    (names.empty() ? "none" : Join(names, ", ")) + ")");
      }
      bool ok = (spec->type == "int" && value->AsInt() && *value->AsInt() > 0) ||
                (spec->type == "bool" && value->AsBool()) || (spec->type == "string" && value->IsScalar()) ||
                (spec->type == "list" && (value->IsSeq() || value->IsScalar()));
      if (!ok) {
        return InvalidArgumentError(config.file + ":" + std::to_string(value->line) + ": " + id + "." + name +
                                    " must be " + (spec->type == "int" ? "a positive integer" : "a " + spec->type));
      }
    }
  }
  return Status::Ok();
}

LintResult LintSet(std::unique_ptr<ManifestSet> set, const LintConfig& config, const Profile& profile) {
  LintResult result;
  result.profile = profile.name;
  result.config_file = config.file;
  NetIndex index(*set, profile, config.rdma_resources);
  std::vector<PodView> pods = ExtractPods(*set, index, profile);
  Context ctx{*set, index, pods, config, profile};
  for (const Rule& rule : AllRules()) {
    if (!config.RuleEnabled(rule.info.id)) continue;
    result.rules_run.push_back(rule.info.id);
    Collector collector(rule, config, result);
    rule.check(ctx, collector);
  }
  auto key = [](const LintedFinding& f) {
    const auto& loc = *f.finding.location;
    return std::tie(loc.file, f.object_line, f.finding.object, loc.line, f.finding.id, f.finding.message);
  };
  std::stable_sort(result.findings.begin(), result.findings.end(),
                   [&](const LintedFinding& a, const LintedFinding& b) { return key(a) < key(b); });
  // One rule may meet the same problem twice (an alias shares a node); report it once.
  result.findings.erase(std::unique(result.findings.begin(), result.findings.end(),
                                    [&](const LintedFinding& a, const LintedFinding& b) { return key(a) == key(b); }),
                        result.findings.end());
  result.set = std::move(set);
  return result;
}

Result<LintResult> LintPaths(const std::vector<std::string>& paths, const LintConfig& config, const Profile& profile) {
  LoadOptions options;
  options.ignore_globs = config.ignore_paths;
  ASSIGN_OR_RETURN(ManifestSet set, LoadManifests(paths, options));
  return LintSet(std::make_unique<ManifestSet>(std::move(set)), config, profile);
}

}  // namespace fabcheck::k8s
