// A lint rule: its catalog entry (the documentation is generated from it) and
// the check that reads the manifest set and reports findings.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "fabcheck/model/finding.h"
#include "k8s/config.h"
#include "k8s/manifest.h"
#include "k8s/network.h"
#include "k8s/workload.h"

namespace fabcheck::k8s {

struct ParamSpec {
  std::string name;
  std::string type;           // "int", "string", "bool", "list"
  std::string default_value;  // as text, for the docs
  std::string doc;
};

struct RuleInfo {
  std::string id;        // stable: "k8s.rdma.no-ipc-lock"
  Level level;           // default level
  std::string scope;     // "workload", "node", "cluster", "generic"
  std::string title;     // one line
  std::string why;       // why it matters
  std::string remedy;    // how to fix it (a finding may say more)
  std::string evidence;  // public issues and sources behind the rule
  std::vector<ParamSpec> params;
};

// Everything a rule may read.
struct Context {
  const ManifestSet& set;
  const NetIndex& index;
  const std::vector<PodView>& pods;
  const LintConfig& config;
  const Profile& profile;

  // Per-rule parameters from the config file, already validated by type.
  long long ParamInt(const std::string& rule, const std::string& name, long long fallback) const;
  bool ParamBool(const std::string& rule, const std::string& name, bool fallback) const;
  std::vector<std::string> ParamList(const std::string& rule, const std::string& name) const;
  bool HasParam(const std::string& rule, const std::string& name) const;
};

// What a rule hands back for one problem.
struct Report {
  const Object* object = nullptr;  // for suppression annotations and the object name
  const PodView* pod = nullptr;    // workload findings: the pod template (its annotations suppress too)
  std::string file;                // when there is no object (YAML errors)
  std::string subject;             // "Deployment ai/trainer container worker"; default: object->Ref()
  int line = 0;
  int column = 0;
  std::string message;             // what is wrong, naming the values read
  std::vector<std::string> evidence;
  std::string remedy;              // "" = the rule's remedy
  std::optional<Level> level;      // "" = the rule's level
};

class Reporter {
 public:
  virtual ~Reporter() = default;
  virtual void Add(Report report) = 0;
};

using CheckFn = void (*)(const Context& ctx, Reporter& out);

struct Rule {
  RuleInfo info;
  CheckFn check;
};

}  // namespace fabcheck::k8s
