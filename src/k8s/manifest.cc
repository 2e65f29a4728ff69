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

Status ReadFile(const std::string& path, const LoadOptions& options, ManifestSet& set, bool from_folder) {
  std::error_code ec;
  auto size = fs::file_size(path, ec);
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
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError("cannot open " + path + " (check the path and its permissions)");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return UnavailableError("cannot read " + path + ": I/O error");
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
      std::ostringstream buffer;
      buffer << std::cin.rdbuf();
      set.files.push_back("<stdin>");
      AddYamlText(buffer.str(), "<stdin>", set);
      continue;
    }
    std::error_code ec;
    auto status = fs::status(path, ec);
    if (ec || !fs::exists(status)) {
      return NotFoundError("cannot read " + path + ": no such file or folder");
    }
    if (fs::is_directory(status)) {
      std::vector<std::string> files;
      fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, ec), end;
      if (ec) return PermissionDeniedError("cannot list " + path + ": " + ec.message());
      for (; it != end; it.increment(ec)) {
        if (ec) return UnavailableError("cannot list " + path + ": " + ec.message());
        if (!it->is_regular_file(ec)) continue;
        std::string file = it->path().string();
        if (!EndsWith(file, ".yaml") && !EndsWith(file, ".yml")) continue;
        if (Ignored(file, options.ignore_globs)) continue;
        files.push_back(file);
      }
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
