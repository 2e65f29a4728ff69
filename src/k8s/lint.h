// `fabcheck k8s lint`: load the manifest set, run the enabled rules, apply
// suppressions, and count what is at or above --fail-on.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "fabcheck/model/finding.h"
#include "k8s/config.h"
#include "k8s/manifest.h"
#include "k8s/rule.h"

namespace fabcheck::k8s {

struct LintedFinding {
  model::Finding finding;  // severity fail/warn/info; level below keeps error/warning/info
  Level level = Level::kInfo;
  const Rule* rule = nullptr;
  std::string suppressed_by;  // "annotation fabcheck.io/ignore-<ID>: <reason>" when suppressed
  int object_line = 0;        // first line of the object, so output groups per object
};

struct LintResult {
  std::unique_ptr<ManifestSet> set;
  std::string profile;
  std::string config_file;
  std::vector<LintedFinding> findings;    // reported, sorted by file, line, rule
  std::vector<LintedFinding> suppressed;  // silenced by an annotation with a reason
  std::vector<std::string> rules_run;

  int Count(Level level) const;
  // True when a finding is at or above `fail_on`.
  bool FailsAt(Level fail_on) const;
};

// Checks the rule IDs and parameters a config names: an unknown rule or a
// parameter of the wrong type is an error, not a silent default.
Status ValidateConfig(const LintConfig& config);

// Lints an already loaded set (tests feed YAML text through AddYamlText).
LintResult LintSet(std::unique_ptr<ManifestSet> set, const LintConfig& config, const Profile& profile);

// Loads the paths (honouring config.ignore_paths) and lints them.
Result<LintResult> LintPaths(const std::vector<std::string>& paths, const LintConfig& config, const Profile& profile);

// The annotation that silences rule `id` on one object.
std::string SuppressionAnnotation(std::string_view id);

}  // namespace fabcheck::k8s
