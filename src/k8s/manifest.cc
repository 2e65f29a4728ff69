#include "k8s/manifest.h"

#include <fnmatch.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <regex>
#include <set>
#include <sstream>
#include <system_error>

#include "base/input.h"
#include "base/strings.h"

namespace fabcheck::k8s {
namespace {

namespace fs = std::filesystem;

bool Ignored(const std::string& path, const std::vector<std::string>& globs) {
  for (const auto& glob : globs) {
    if (fnmatch(glob.c_str(), path.c_str(), 0) == 0) return true;
    // "vendor/*" should also match "./vendor/x.yaml" and "a/vendor/x.yaml".
    std::string any_dir = "*/" + glob;
    if (fnmatch(any_dir.c_str(), path.c_str(), 0) == 0) return true;
  }
  return false;
}

void AddObject(const YNodePtr& node, const std::string& file, int doc_index, ManifestSet& set, bool from_folder) {
  const YNode& n = *node;
  auto& bad = from_folder ? set.skipped_documents : set.bad_documents;
  if (!n.IsMap()) {
    std::string what = n.IsSeq() ? "a list" : "a scalar";
    bad.push_back({file, n.line, "the document is " + what + ", not a Kubernetes object (a map with apiVersion and kind)"});
    return;
  }
  const YNode& kind = n.Get("kind");
  const YNode& api = n.Get("apiVersion");
  // Kubernetes apiVersions look like v1 or group/v1beta2; Grafana and other
  // tools use "apiVersion: 1" in their own YAML.
  static const std::regex kApiVersion("^([a-z0-9.-]+/)?v[0-9]+((alpha|beta)[0-9]+)?$");
  bool k8s_api = api.IsScalar() && std::regex_match(api.Str(), kApiVersion);
  if (from_folder && kind.IsNull() && !k8s_api) {
    set.skipped_documents.push_back({file, n.line, api.IsNull() ? "no apiVersion and no kind: not a Kubernetes object"
                                                                : "apiVersion " + api.Str() + " and no kind: not a "
                                                                  "Kubernetes object"});
    return;
  }
  if (!kind.IsScalar() || kind.Str().empty() || !api.IsScalar() || api.Str().empty()) {
    std::string missing = (!kind.IsScalar() || kind.Str().empty()) ? "kind" : "apiVersion";
    set.bad_documents.push_back({file, n.line, "object without " + missing + "; kubectl rejects it (add apiVersion and kind)"});
    return;
  }
  // kind: List (what `kubectl get -o yaml` prints) holds the objects in items.
  if (kind.Str() == "List" || (EndsWith(kind.Str(), "List") && n.Get("items").IsSeq())) {
    for (const auto& item : n.Get("items").items) AddObject(item, file, doc_index, set, false);
    return;
  }
  Object obj;
  obj.file = file;
  obj.doc_index = doc_index;
  obj.root = node;
  obj.api_version = api.Str();
  obj.kind = kind.Str();
  obj.name = n.Get("metadata").Get("name").Str();
  if (obj.name.empty()) obj.name = n.Get("metadata").Get("generateName").Str();
  obj.namespaced = !IsClusterScopedKind(obj.kind);
  if (obj.namespaced) {
    obj.ns = n.Get("metadata").Get("namespace").Str();
    if (obj.ns.empty()) obj.ns = "default";
  }
  obj.line = n.line;
  set.objects.push_back(std::move(obj));
}

// The YAML files under `dir`. A folder that cannot be listed is an error,
// never skipped: a lint that did not see every file must not pass.
Status ListYamlFiles(const std::string& dir, const LoadOptions& options, std::vector<std::string>& files) {
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::none, ec), end;
  if (ec) {
    return Status(StatusCodeFromErrno(ec.value()), "cannot list folder " + dir + ": " + ec.message() +
                                                       " (check its permissions, or run as its owner)");
  }
  for (; it != end;) {
    std::string entry = it->path().string();
    if (it->is_directory(ec) && Ignored(entry, options.ignore_globs)) {
      it.disable_recursion_pending();
    } else if (it->is_directory(ec) && !it->is_symlink(ec)) {
      // Opened on the next increment: check it can be, to name it if not.
      std::error_code list_ec;
      fs::directory_iterator probe(it->path(), list_ec);
      if (list_ec) {
        return Status(StatusCodeFromErrno(list_ec.value()),
                      "cannot list folder " + entry + ": " + list_ec.message() +
                          " (check its permissions, or list it under ignorePaths in --config)");
      }
    } else if (it->is_regular_file(ec) && (EndsWith(entry, ".yaml") || EndsWith(entry, ".yml")) &&
               !Ignored(entry, options.ignore_globs)) {
      files.push_back(entry);
    }
    it.increment(ec);
    if (ec) return Status(StatusCodeFromErrno(ec.value()), "cannot list folder " + dir + ": " + ec.message());
  }
  return Status::Ok();
}

Status ReadFile(const std::string& path, const LoadOptions& options, ManifestSet& set, bool from_folder) {
  std::error_code ec;
  auto status = fs::status(path, ec);
  if (ec) return NotFoundError("cannot read " + path + ": " + ec.message());
  // Only a regular file has a size to check first; a FIFO or /dev/stdin is
  // read up to the same cap.
  uintmax_t size = fs::is_regular_file(status) ? fs::file_size(path, ec) : 0;
  if (ec) return NotFoundError("cannot read " + path + ": " + ec.message());
  set.files.push_back(path);
  if (size > options.max_file_bytes) {
    set.yaml_issues.push_back({path, {YamlIssue::Kind::kSyntax, 1, 1,
                                      "file is " + std::to_string(size >> 20) + " MiB, over the " +
                                          std::to_string(options.max_file_bytes >> 20) +
                                          " MiB limit; not read (split it, or lint the objects you need)",
                                      0}});
    return Status::Ok();
  }
  ASSIGN_OR_RETURN(std::string text, ReadFileBounded(path, options.max_file_bytes));
  AddYamlText(text, path, set, from_folder);
  return Status::Ok();
}

}  // namespace

bool IsClusterScopedKind(std::string_view kind) {
  static const std::set<std::string_view> kClusterScoped = {
      "Namespace", "Node", "ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition",
      "NicClusterPolicy", "MacvlanNetwork", "HostDeviceNetwork", "IPoIBNetwork", "KubeletConfiguration",
      "PersistentVolume", "StorageClass", "PriorityClass", "RuntimeClass", "ValidatingWebhookConfiguration",
      "MutatingWebhookConfiguration", "NodeFeatureRule", "ClusterPolicy", "IPPool", "CIDRPool"};
  return kClusterScoped.count(kind) > 0;
}

std::string Object::Ref() const {
  std::string ref = kind + " ";
  if (namespaced) ref += ns + "/";
  ref += name.empty() ? "(unnamed)" : name;
  return ref;
}

std::string Object::Group() const {
  auto slash = api_version.find('/');
  return slash == std::string::npos ? std::string() : api_version.substr(0, slash);
}

std::vector<const Object*> ManifestSet::OfKind(std::string_view kind) const {
  std::vector<const Object*> out;
  for (const auto& o : objects) {
    if (o.kind == kind) out.push_back(&o);
  }
  return out;
}

const Object* ManifestSet::Find(std::string_view kind, std::string_view ns, std::string_view name) const {
  for (const auto& o : objects) {
    if (o.kind == kind && o.name == name && (!o.namespaced || o.ns == ns)) return &o;
  }
  return nullptr;
}

void AddYamlText(std::string_view text, const std::string& file, ManifestSet& set, bool from_folder) {
  if (text.find('\0') != std::string_view::npos) {
    set.yaml_issues.push_back({file, {YamlIssue::Kind::kSyntax, 1, 1, "binary data (NUL bytes), not YAML", 0}});
    return;
  }
  int index = 0;
  if (text.find("{{") != std::string_view::npos && text.find("}}") != std::string_view::npos) {
    set.template_files.insert(file);
  }
  for (auto& doc : ParseYamlStream(text)) {
    ++set.documents;
    for (auto& issue : doc.issues) set.yaml_issues.push_back({file, std::move(issue)});
    if (doc.root) AddObject(doc.root, file, index, set, from_folder);
    ++index;
  }
}

Result<ManifestSet> LoadManifests(const std::vector<std::string>& paths, const LoadOptions& options) {
  ManifestSet set;
  bool stdin_read = false;
  for (const auto& path : paths) {
    if (path == "-") {
      if (stdin_read) continue;
      stdin_read = true;
      // The same cap as a file: `k8s lint - </dev/zero` must end.
      auto text = ReadFileBounded("-", options.max_file_bytes);
      if (!text.ok()) return Status(text.status().code(), "cannot lint stdin: " + text.status().message());
      set.files.push_back("<stdin>");
      AddYamlText(*text, "<stdin>", set);
      continue;
    }
    std::error_code ec;
    auto status = fs::status(path, ec);
    if (ec || !fs::exists(status)) {
      return NotFoundError("cannot read " + path + ": no such file or folder");
    }
    if (fs::is_directory(status)) {
      std::vector<std::string> files;
      RETURN_IF_ERROR(ListYamlFiles(path, options, files));
      std::sort(files.begin(), files.end());
      for (const auto& file : files) RETURN_IF_ERROR(ReadFile(file, options, set, /*from_folder=*/true));
      continue;
    }
    if (Ignored(path, options.ignore_globs)) continue;
    RETURN_IF_ERROR(ReadFile(path, options, set, /*from_folder=*/false));
  }
  return set;
}

}  // namespace fabcheck::k8s
