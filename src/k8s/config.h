// Lint configuration: the lint vocabulary (error/warning/info), platform
// profiles, and the config file (include/exclude, ignorePaths, severities and
// per-rule parameters).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "fabcheck/model/finding.h"
#include "k8s/yaml_tree.h"

namespace fabcheck::k8s {

// Linters speak error/warning/info; fabcheck's Finding speaks fail/warn/info.
enum class Level { kInfo = 0, kWarning = 1, kError = 2 };
std::string_view LevelName(Level level);  // "error", "warning", "info"
std::optional<Level> ParseLevel(std::string_view name);
model::Severity ToSeverity(Level level);
Level FromSeverity(model::Severity severity);

// What a platform does for the workloads on it, so rules do not flag what the
// platform already handles.
struct Profile {
  std::string name;
  std::string description;
  bool memlock_raised = false;         // containers already run with memlock unlimited
  bool rdma_needs_network = true;      // an RDMA resource needs a secondary network annotation
  std::vector<std::string> network_annotations;  // annotations that attach secondary networks
  std::vector<std::string> rdma_resource_patterns;  // extra fnmatch patterns of RDMA resources
  bool psa_label_sync = false;         // the platform syncs the warn/audit Pod Security labels (not enforce)
  bool resource_injector = false;      // a webhook adds the NAD's resource to pods
  std::vector<std::string> global_network_namespaces;  // NADs there serve every namespace
};

const std::vector<Profile>& AllProfiles();
Result<Profile> FindProfile(std::string_view name);

struct LintConfig {
  std::string file;                     // where it came from ("" = defaults)
  std::vector<std::string> include;     // rule IDs or fnmatch globs; empty = all rules
  std::vector<std::string> exclude;
  std::vector<std::string> ignore_paths;
  std::map<std::string, Level> severity;            // per-rule level override
  std::map<std::string, std::map<std::string, YNodePtr>> params;  // rule -> name -> value
  std::vector<std::string> rdma_resources;          // extra RDMA resource patterns
  std::string profile;                              // "" = not set in the file
  std::optional<Level> fail_on;
  YNodePtr root;                                    // keeps the parameter nodes alive

  bool RuleEnabled(std::string_view id) const;
};

// Parses a config file's text. Unknown keys and wrong types are errors that
// name the key and the line: a typo must not silently fall back to a default.
Result<LintConfig> ParseLintConfig(std::string_view text, const std::string& file);
Result<LintConfig> LoadLintConfig(const std::string& path);

}  // namespace fabcheck::k8s
