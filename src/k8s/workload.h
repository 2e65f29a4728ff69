// Pod templates of every workload kind, with the facts the rules read about
// each container already extracted (resources, capabilities, user, env,
// mounts) and the pod's secondary networks parsed from its annotation.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "k8s/config.h"
#include "k8s/manifest.h"
#include "k8s/network.h"

namespace fabcheck::k8s {

struct EnvVar {
  std::string name;
  std::string value;
  bool has_value = false;  // value: (not valueFrom:)
  int line = 0;
};

struct VolumeMount {
  std::string name;
  std::string mount_path;
  bool read_only = false;
  int line = 0;
};

struct ContainerView {
  const YNode* node = nullptr;
  std::string name;
  bool init = false;
  int line = 0;
  std::map<std::string, long long> resources;  // extended resources (limits, else requests)
  long long gpus = 0;
  std::vector<std::string> rdma_resources;
  bool privileged = false;
  int privileged_line = 0;
  bool ipc_lock = false;          // capabilities.add has IPC_LOCK (or ALL)
  int caps_line = 0;
  std::optional<long long> run_as_user;  // container, else pod
  bool run_as_non_root = false;          // container, else pod
  int user_line = 0;
  std::vector<EnvVar> env;
  std::vector<VolumeMount> mounts;

  const EnvVar* FindEnv(std::string_view name) const;
};

// One secondary network a pod asks for.
struct NetworkRef {
  std::string ns;         // "" when the annotation does not say (= the pod's namespace)
  std::string name;
  std::string interface;  // "" when the annotation does not say (Multus names it net1, net2...)
  bool gke = false;      // a GKE network (networking.gke.io/interfaces), not a NAD
};

struct PodView {
  const Object* owner = nullptr;
  const YNode* meta = nullptr;  // the pod (template) metadata
  const YNode* spec = nullptr;  // the pod (template) spec
  std::string role;             // "Worker", "replicatedJobs[workers]", "" for plain workloads
  int line = 0;                 // line of the pod spec
  long long group_size = 1;     // pods that run together (multi-node jobs)
  bool multi_node_group = false;
  bool host_network = false;
  bool host_ipc = false;
  std::vector<ContainerView> containers;  // init containers first
  bool networks_annotation = false;       // any secondary-network annotation is present
  std::string networks_key;               // which annotation
  int networks_line = 0;
  std::string networks_error;             // the annotation could not be parsed
  std::vector<NetworkRef> networks;
  std::vector<std::string> interfaces;    // interfaces the pod will have ("eth0", "lo", "net1"...)

  const std::string& ns() const { return owner->ns; }
  long long Gpus() const;                  // GPUs of the pod (app containers)
  bool UsesRdma() const;
  std::string Describe() const;            // "Deployment ai/trainer" (+ " (Worker)")
  std::string Describe(const ContainerView& c) const;  // ... + " container c"
  // Annotation on the pod template, else on the owner object.
  std::string Annotation(std::string_view key) const;
};

// Every pod template in the set, in order.
std::vector<PodView> ExtractPods(const ManifestSet& set, const NetIndex& index, const Profile& profile);

// Kinds whose objects carry pod templates.
bool IsWorkloadKind(std::string_view kind);

}  // namespace fabcheck::k8s
