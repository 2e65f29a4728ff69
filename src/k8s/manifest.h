// The manifest set: every Kubernetes object read from the files, folders and
// stdin given to `fabcheck k8s lint`, linted together so rules can cross
// objects (a pod's networks annotation and the NADs it names, an SR-IOV
// network and its node policy, a namespace's Pod Security level and its pods).
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "fabcheck/model/finding.h"
#include "k8s/yaml_tree.h"

namespace fabcheck::k8s {

struct Object {
  std::string file;        // as given on the command line ("<stdin>" for -)
  int doc_index = 0;       // 0-based document number in the file
  YNodePtr root;           // the object (a map)
  std::string api_version;
  std::string kind;
  std::string name;
  std::string ns;          // metadata.namespace; "default" for namespaced kinds that omit it
  bool namespaced = true;
  int line = 0;            // line of the object's first key

  const YNode& Root() const { return *root; }
  const YNode& Metadata() const { return root->Get("metadata"); }
  const YNode& Spec() const { return root->Get("spec"); }
  // "Deployment ai/trainer" or "ClusterRole net-edit".
  std::string Ref() const;
  // The group part of apiVersion ("" for the core group).
  std::string Group() const;
};

// What reading the files found before any rule ran; the generic rules
// (yaml.syntax, yaml.duplicate-key, schema.invalid) turn these into findings.
struct LoadIssue {
  std::string file;
  YamlIssue issue;
};
struct BadDocument {
  std::string file;
  int line = 0;
  std::string message;  // "top-level value is a scalar, expected a Kubernetes object"
};

struct ManifestSet {
  std::vector<Object> objects;
  std::vector<std::string> files;  // every file read, in order
  std::vector<LoadIssue> yaml_issues;
  std::vector<BadDocument> bad_documents;
  // Documents met while walking a folder that are plainly not Kubernetes
  // objects (Helm values, CI configs, kustomize patches, Ansible playbooks:
  // no apiVersion and no kind, or a list or scalar). Repositories keep them
  // next to their manifests; reporting each as schema.invalid would bury the
  // real findings. A file named on the command line is still checked strictly.
  std::vector<BadDocument> skipped_documents;
  // Files with Go/Helm template markup ({{ ... }}): their YAML and schema
  // findings say to lint the rendered output instead.
  std::set<std::string> template_files;
  int documents = 0;

  std::vector<const Object*> OfKind(std::string_view kind) const;
  const Object* Find(std::string_view kind, std::string_view ns, std::string_view name) const;
};

struct LoadOptions {
  std::vector<std::string> ignore_globs;  // fnmatch patterns matched against each file's path
  size_t max_file_bytes = 64u << 20;      // larger files become a yaml.syntax finding
};

// Reads every path: a file, a folder (recursively, *.yaml and *.yml, sorted),
// or "-" for stdin. An unreadable path is an error (exit 3); a malformed
// document is a finding, never an error.
Result<ManifestSet> LoadManifests(const std::vector<std::string>& paths, const LoadOptions& options);

// Adds the objects of one YAML text (used for stdin and by tests).
// `from_folder`: the file was found by walking a folder, so documents that
// are not Kubernetes objects at all go to skipped_documents.
void AddYamlText(std::string_view text, const std::string& file, ManifestSet& set, bool from_folder = false);

// Kinds that are not namespaced (their `ns` stays empty).
bool IsClusterScopedKind(std::string_view kind);

}  // namespace fabcheck::k8s
