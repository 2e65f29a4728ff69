#include "k8s/config.h"

#include <fnmatch.h>

#include <fstream>
#include <iterator>

#include "base/input.h"
#include "base/strings.h"

namespace fabcheck::k8s {
namespace {

constexpr uint64_t kMaxConfigBytes = 4 << 20;  // a lint config is a page of YAML

Status KeyError(const std::string& file, const YNode& node, const std::string& message) {
  return InvalidArgumentError(file + ":" + std::to_string(node.line) + ": " + message);
}

Result<std::vector<std::string>> StringList(const std::string& file, const YNode& node, const std::string& key) {
  std::vector<std::string> out;
  if (node.IsNull()) return out;
  if (!node.IsSeq()) return KeyError(file, node, "'" + key + "' must be a list of strings");
  for (const auto& item : node.items) {
    if (!item->IsScalar()) return KeyError(file, *item, "'" + key + "' must be a list of strings");
    out.push_back(item->value);
  }
  return out;
}

bool Matches(const std::vector<std::string>& globs, std::string_view id) {
  std::string s(id);
  for (const auto& g : globs) {
    if (fnmatch(g.c_str(), s.c_str(), 0) == 0) return true;
  }
  return false;
}

}  // namespace

std::string_view LevelName(Level level) {
  switch (level) {
    case Level::kError: return "error";
    case Level::kWarning: return "warning";
    case Level::kInfo: return "info";
  }
  return "info";
}

std::optional<Level> ParseLevel(std::string_view name) {
  if (name == "error") return Level::kError;
  if (name == "warning" || name == "warn") return Level::kWarning;
  if (name == "info") return Level::kInfo;
  return std::nullopt;
}

model::Severity ToSeverity(Level level) {
  switch (level) {
    case Level::kError: return model::Severity::kFail;
    case Level::kWarning: return model::Severity::kWarn;
    case Level::kInfo: return model::Severity::kInfo;
  }
  return model::Severity::kInfo;
}

Level FromSeverity(model::Severity severity) {
  switch (severity) {
    case model::Severity::kFail: return Level::kError;
    case model::Severity::kWarn: return Level::kWarning;
    default: return Level::kInfo;
  }
}

const std::vector<Profile>& AllProfiles() {
  static const std::vector<Profile> kProfiles = [] {
    std::vector<Profile> p;
    Profile generic;
    generic.name = "generic";
    generic.description =
        "Upstream Kubernetes with Multus, the NVIDIA Network Operator or the SR-IOV operator: containers get the "
        "runtime's default memlock, secondary networks come from k8s.v1.cni.cncf.io/networks.";
    generic.network_annotations = {"k8s.v1.cni.cncf.io/networks"};
    p.push_back(generic);

    Profile gke = generic;
    gke.name = "gke";
    gke.description =
        "GKE multi-networking (A3 Ultra / A4 RDMA): interfaces come from networking.gke.io/interfaces, RDMA "
        "resources are networking.gke.io.networks/<network>, and RDMA pods need no IPC_LOCK: Google's own "
        "A3 Ultra/A4 NCCL test pods run RDMA with neither IPC_LOCK nor privileged (GoogleCloudPlatform/"
        "container-engine-accelerators gpudirect-rdma/nccl-test.yaml). Not for A4X Max bare metal (DRANET): "
        "Google's manifests there add IPC_LOCK (gpudirect-rdma/nccl-test-a4x-max.yaml); lint those with generic.";
    gke.memlock_raised = true;
    gke.network_annotations = {"networking.gke.io/interfaces", "k8s.v1.cni.cncf.io/networks"};
    gke.rdma_resource_patterns = {"networking.gke.io.networks/rdma*"};
    p.push_back(gke);

    Profile aks = generic;
    aks.name = "aks";
    aks.description =
        "AKS InfiniBand VMs (ND-series) with the Network Operator's shared RDMA or SR-IOV device plugin: "
        "Multus and an IPAM are not required for RDMA over InfiniBand because the device plugin exposes the "
        "HCAs, but pods still need IPC_LOCK (Azure/aks-rdma-infiniband, docs/configurations/network-operator: "
        "every example adds IPC_LOCK; an IPoIB network is only for IP traffic over IB).";
    aks.rdma_needs_network = false;
    p.push_back(aks);

    Profile coreweave = generic;
    coreweave.name = "coreweave";
    coreweave.description =
        "CoreWeave (CKS) InfiniBand nodes: the rdma/ib resource exposes the HCAs directly, with no Multus "
        "network and no IPC_LOCK: CoreWeave's own NCCL MPIJobs request rdma/ib with neither (coreweave/"
        "nccl-tests mpi-operator/*.yaml). Its RoCE nodes attach the platform's NADs from the shared cw-multus "
        "namespace, so those cross-namespace references are expected.";
    coreweave.memlock_raised = true;
    coreweave.rdma_needs_network = false;
    coreweave.rdma_resource_patterns = {"rdma/ib"};
    coreweave.global_network_namespaces = {"cw-multus"};
    p.push_back(coreweave);

    Profile openshift = generic;
    openshift.name = "openshift";
    openshift.description =
        "OpenShift with the SR-IOV Network Operator: resources are openshift.io/<name>, the operator's "
        "network-resources-injector adds a NAD's resource to pods. Pod Security: the cluster-wide default "
        "enforces privileged, and OpenShift's label synchronizer sets only the warn and audit labels from the "
        "SCCs the namespace's service accounts may use; an enforce label written in a manifest is enforced as "
        "written (OpenShift docs, Understanding and managing pod security admission).";
    openshift.rdma_resource_patterns = {"openshift.io/*rdma*", "openshift.io/mlx*"};
    openshift.psa_label_sync = true;
    openshift.resource_injector = true;
    p.push_back(openshift);
    return p;
  }();
  return kProfiles;
}

Result<Profile> FindProfile(std::string_view name) {
  std::vector<std::string> names;
  for (const auto& p : AllProfiles()) {
    if (p.name == name) return p;
    names.push_back(p.name);
  }
  return InvalidArgumentError("unknown profile '" + std::string(name) + "' (choose one of: " + Join(names, ", ") + ")");
}

bool LintConfig::RuleEnabled(std::string_view id) const {
  if (!include.empty() && !Matches(include, id)) return false;
  return !Matches(exclude, id);
}

Result<LintConfig> ParseLintConfig(std::string_view text, const std::string& file) {
  LintConfig config;
  config.file = file;
  YamlDocument doc = ParseYamlDocument(text, 0);
  for (const auto& issue : doc.issues) {
    std::string where = file + ":" + std::to_string(issue.line) + ": " + issue.message;
    // A config too big to expand could not be read (exit 3); a wrong one is the user's to fix (exit 64).
    return issue.over_budget ? ResourceExhaustedError(where) : InvalidArgumentError(where);
  }
  if (!doc.root) return config;  // an empty file means the defaults
  config.root = doc.root;
  const YNode& root = *doc.root;
  if (!root.IsMap()) return KeyError(file, root, "the config must be a map (see 'fabcheck k8s lint --help')");
  for (const auto& [key_node, value] : root.entries) {
    const std::string& key = key_node->value;
    if (key == "apiVersion" || key == "kind") continue;
    if (key == "rules") {
      if (!value->IsMap()) return KeyError(file, *value, "'rules' must be a map with include and/or exclude");
      for (const auto& [k, v] : value->entries) {
        if (k->value == "include") {
          ASSIGN_OR_RETURN(config.include, StringList(file, *v, "rules.include"));
        } else if (k->value == "exclude") {
          ASSIGN_OR_RETURN(config.exclude, StringList(file, *v, "rules.exclude"));
        } else {
          return KeyError(file, *k, "unknown key 'rules." + k->value + "' (expected include or exclude)");
        }
      }
    } else if (key == "ignorePaths") {
      ASSIGN_OR_RETURN(config.ignore_paths, StringList(file, *value, "ignorePaths"));
    } else if (key == "rdmaResources") {
      ASSIGN_OR_RETURN(config.rdma_resources, StringList(file, *value, "rdmaResources"));
    } else if (key == "profile") {
      if (!value->IsScalar()) return KeyError(file, *value, "'profile' must be a name");
      auto profile = FindProfile(value->value);
      if (!profile.ok()) return KeyError(file, *value, profile.status().message());
      config.profile = value->value;
    } else if (key == "failOn") {
      auto level = ParseLevel(value->Str());
      if (!level || *level == Level::kInfo) return KeyError(file, *value, "'failOn' must be error or warning");
      config.fail_on = level;
    } else if (key == "severity") {
      if (!value->IsMap()) return KeyError(file, *value, "'severity' must map rule IDs to error, warning or info");
      for (const auto& [k, v] : value->entries) {
        auto level = ParseLevel(v->Str());
        if (!level) return KeyError(file, *v, "severity of " + k->value + " must be error, warning or info");
        config.severity[k->value] = *level;
      }
    } else if (key == "params") {
      if (!value->IsMap()) return KeyError(file, *value, "'params' must map rule IDs to maps of parameters");
      for (const auto& [k, v] : value->entries) {
        if (!v->IsMap()) return KeyError(file, *v, "params of " + k->value + " must be a map");
        for (const auto& [pk, pv] : v->entries) config.params[k->value][pk->value] = pv;
      }
    } else {
      return KeyError(file, *key_node,
                      "unknown key '" + key +
                          "' (expected rules, ignorePaths, severity, params, rdmaResources, profile, failOn)");
    }
  }
  return config;
}

Result<LintConfig> LoadLintConfig(const std::string& path) {
  auto text = ReadFileBounded(path, kMaxConfigBytes);
  if (!text.ok()) return Status(text.status().code(), "cannot read config: " + text.status().message());
  return ParseLintConfig(*text, path);
}

}  // namespace fabcheck::k8s
