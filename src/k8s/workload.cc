#include "k8s/workload.h"

#include <nlohmann/json.hpp>

#include <set>

#include "base/strings.h"

namespace fabcheck::k8s {
namespace {

using nlohmann::json;

long long IntOr(const YNode& node, long long fallback) {
  auto v = node.AsInt();
  return v ? *v : fallback;
}

// Extended resource quantities are whole numbers ("1", 8); anything else
// (a typo such as "1x") is left to schema.invalid and counted as 0 here.
long long Quantity(const YNode& node) {
  if (auto v = node.AsInt()) return *v;
  if (node.IsScalar()) {
    if (auto v = ParseInt(Trim(node.value))) return *v;
  }
  return 0;
}

ContainerView ReadContainer(const YNode& c, const YNode& pod_spec, bool init, const NetIndex& index) {
  ContainerView v;
  v.node = &c;
  v.name = c.Get("name").Str();
  v.init = init;
  v.line = c.LineOr(0);
  const YNode& limits = c.Get("resources").Get("limits");
  const YNode& requests = c.Get("resources").Get("requests");
  for (const YNode* block : {&requests, &limits}) {
    for (const auto& [k, q] : block->entries) {
      const std::string& name = k->value;
      if (name.find('/') == std::string::npos) continue;  // cpu, memory, hugepages-...: not extended
      v.resources[name] = Quantity(*q);
    }
  }
  for (const auto& [name, count] : v.resources) {
    if (name == "nvidia.com/gpu" || name == "amd.com/gpu") v.gpus += count;
    if (count > 0 && index.IsRdmaResource(name)) v.rdma_resources.push_back(name);
  }
  const YNode& sc = c.Get("securityContext");
  const YNode& pod_sc = pod_spec.Get("securityContext");
  if (sc.Get("privileged").AsBool().value_or(false)) {
    v.privileged = true;
    v.privileged_line = sc.Get("privileged").line;
  }
  const YNode& add = sc.Get("capabilities").Get("add");
  v.caps_line = add.LineOr(sc.LineOr(v.line));
  for (const auto& cap : add.items) {
    std::string name = cap->Str();
    if (name == "IPC_LOCK" || name == "CAP_IPC_LOCK" || name == "ALL") v.ipc_lock = true;
  }
  for (const YNode* s : {&sc, &pod_sc}) {
    if (!v.run_as_user && s->Get("runAsUser").AsInt()) {
      v.run_as_user = s->Get("runAsUser").AsInt();
      v.user_line = s->Get("runAsUser").line;
    }
  }
  const YNode& non_root = sc.Has("runAsNonRoot") ? sc.Get("runAsNonRoot") : pod_sc.Get("runAsNonRoot");
  if (non_root.AsBool().value_or(false)) {
    v.run_as_non_root = true;
    if (!v.user_line) v.user_line = non_root.line;
  }
  for (const auto& e : c.Get("env").items) {
    EnvVar env;
    env.name = e->Get("name").Str();
    env.has_value = e->Has("value");
    env.value = e->Get("value").Str();
    env.line = e->LineOr(v.line);
    v.env.push_back(std::move(env));
  }
  for (const auto& m : c.Get("volumeMounts").items) {
    VolumeMount mount;
    mount.name = m->Get("name").Str();
    mount.mount_path = m->Get("mountPath").Str();
    mount.read_only = m->Get("readOnly").AsBool().value_or(false);
    mount.line = m->LineOr(v.line);
    v.mounts.push_back(std::move(mount));
  }
  return v;
}

void ParseMultusNetworks(PodView& pod, const YNode& value) {
  std::string text(Trim(value.Str()));
  if (text.empty()) return;
  if (text[0] == '[' || text[0] == '{') {
    json parsed = json::parse(text, nullptr, false);
    if (parsed.is_object()) parsed = json::array({parsed});
    if (parsed.is_discarded() || !parsed.is_array()) {
      pod.networks_error = "the networks annotation looks like JSON but does not parse as a JSON list";
      return;
    }
    for (const auto& item : parsed) {
      if (!item.is_object() || !item.contains("name") || !item["name"].is_string()) {
        pod.networks_error = "an entry of the networks annotation has no \"name\"";
        continue;
      }
      NetworkRef ref;
      ref.name = item["name"].get<std::string>();
      if (item.contains("namespace") && item["namespace"].is_string()) ref.ns = item["namespace"].get<std::string>();
      if (item.contains("interface") && item["interface"].is_string()) ref.interface = item["interface"].get<std::string>();
      pod.networks.push_back(ref);
    }
    return;
  }
  // "ns/name@iface, name2" (the Multus short form).
  for (const auto& raw : Split(text, ',', true)) {
    std::string item(Trim(raw));
    if (item.empty()) continue;
    NetworkRef ref;
    if (auto at = item.find('@'); at != std::string::npos) {
      ref.interface = item.substr(at + 1);
      item = item.substr(0, at);
    }
    if (auto slash = item.find('/'); slash != std::string::npos) {
      ref.ns = item.substr(0, slash);
      item = item.substr(slash + 1);
    }
    ref.name = item;
    pod.networks.push_back(ref);
  }
}

void ParseGkeInterfaces(PodView& pod, const YNode& value) {
  json parsed = json::parse(value.Str(), nullptr, false);
  if (parsed.is_discarded() || !parsed.is_array()) {
    pod.networks_error = "networking.gke.io/interfaces is not a JSON list";
    return;
  }
  for (const auto& item : parsed) {
    if (!item.is_object()) continue;
    NetworkRef ref;
    ref.gke = true;
    if (item.contains("network") && item["network"].is_string()) ref.name = item["network"].get<std::string>();
    if (item.contains("interfaceName") && item["interfaceName"].is_string()) {
      ref.interface = item["interfaceName"].get<std::string>();
    }
    pod.networks.push_back(ref);
  }
}

void AddPod(const Object& owner, const YNode& meta, const YNode& spec, std::string role, long long group,
            bool multi_node, const NetIndex& index, const Profile& profile, std::vector<PodView>& out) {
  if (!spec.IsMap()) return;
  PodView pod;
  pod.owner = &owner;
  pod.meta = &meta;
  pod.spec = &spec;
  pod.role = std::move(role);
  pod.line = spec.LineOr(owner.line);
  pod.group_size = group;
  pod.multi_node_group = multi_node;
  pod.host_network = spec.Get("hostNetwork").AsBool().value_or(false);
  pod.host_ipc = spec.Get("hostIPC").AsBool().value_or(false);
  for (const auto& c : spec.Get("initContainers").items) pod.containers.push_back(ReadContainer(*c, spec, true, index));
  for (const auto& c : spec.Get("containers").items) pod.containers.push_back(ReadContainer(*c, spec, false, index));

  const YNode& annotations = meta.Get("annotations");
  for (const auto& key : profile.network_annotations) {
    const YNode& value = annotations.Get(key);
    if (!value.IsScalar()) continue;
    pod.networks_annotation = true;
    pod.networks_key = key;
    pod.networks_line = value.line;
    if (key == "networking.gke.io/interfaces") {
      ParseGkeInterfaces(pod, value);
    } else {
      ParseMultusNetworks(pod, value);
    }
    break;
  }
  if (!pod.host_network) {
    std::set<std::string> seen;
    pod.interfaces = {"lo"};
    bool gke = pod.networks_key == "networking.gke.io/interfaces";
    if (!gke) pod.interfaces.push_back("eth0");
    int next = 1;
    for (const auto& ref : pod.networks) {
      std::string name = ref.interface.empty() ? "net" + std::to_string(next) : ref.interface;
      ++next;
      pod.interfaces.push_back(name);
    }
    if (gke && std::find(pod.interfaces.begin(), pod.interfaces.end(), "eth0") == pod.interfaces.end()) {
      pod.interfaces.push_back("eth0");
    }
  }
  out.push_back(std::move(pod));
}

}  // namespace

const EnvVar* ContainerView::FindEnv(std::string_view name) const {
  const EnvVar* found = nullptr;
  for (const auto& e : env) {
    if (e.name == name) found = &e;  // the last one wins, as in Kubernetes
  }
  return found;
}

long long PodView::Gpus() const {
  long long total = 0;
  for (const auto& c : containers) {
    if (!c.init) total += c.gpus;
  }
  return total;
}

bool PodView::UsesRdma() const {
  for (const auto& c : containers) {
    if (!c.rdma_resources.empty()) return true;
  }
  return false;
}

std::string PodView::Describe() const {
  std::string d = owner->Ref();
  if (!role.empty()) d += " (" + role + ")";
  return d;
}

std::string PodView::Describe(const ContainerView& c) const {
  return Describe() + (c.init ? " init container " : " container ") + (c.name.empty() ? "(unnamed)" : c.name);
}

std::string PodView::Annotation(std::string_view key) const {
  const YNode& v = meta->Get("annotations").Get(key);
  if (v.IsScalar()) return v.value;
  return owner->Metadata().Get("annotations").Get(key).Str();
}

bool IsWorkloadKind(std::string_view kind) {
  static const std::set<std::string_view> kKinds = {"Pod", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet",
                                                     "Job", "CronJob", "JobSet", "MPIJob", "PyTorchJob",
                                                     "LeaderWorkerSet"};
  return kKinds.count(kind) > 0;
}

std::vector<PodView> ExtractPods(const ManifestSet& set, const NetIndex& index, const Profile& profile) {
  std::vector<PodView> out;
  for (const auto& obj : set.objects) {
    const YNode& spec = obj.Spec();
    const std::string& kind = obj.kind;
    if ((kind == "Job" || kind == "CronJob") && obj.Group() == "batch.volcano.sh") {
      // Volcano: spec.tasks[] each run `replicas` pods of their template, gang-scheduled as one job.
      const YNode& job = kind == "Job" ? spec : spec.Get("jobTemplate").Get("spec");
      long long total = 0;
      for (const auto& task : job.Get("tasks").items) total += IntOr(task->Get("replicas"), 1);
      for (const auto& task : job.Get("tasks").items) {
        const YNode& t = task->Get("template");
        AddPod(obj, t.Get("metadata"), t.Get("spec"), "tasks[" + task->Get("name").Str() + "]", total, total > 1,
               index, profile, out);
      }
    } else if (kind == "Pod") {
      AddPod(obj, obj.Metadata(), spec, "", 1, false, index, profile, out);
    } else if (kind == "Deployment" || kind == "StatefulSet" || kind == "DaemonSet" || kind == "ReplicaSet") {
      const YNode& t = spec.Get("template");
      AddPod(obj, t.Get("metadata"), t.Get("spec"), "", 1, false, index, profile, out);
    } else if (kind == "Job") {
      long long parallelism = IntOr(spec.Get("parallelism"), 1);
      const YNode& t = spec.Get("template");
      AddPod(obj, t.Get("metadata"), t.Get("spec"), "", parallelism, parallelism > 1, index, profile, out);
    } else if (kind == "CronJob") {
      const YNode& job = spec.Get("jobTemplate").Get("spec");
      long long parallelism = IntOr(job.Get("parallelism"), 1);
      const YNode& t = job.Get("template");
      AddPod(obj, t.Get("metadata"), t.Get("spec"), "", parallelism, parallelism > 1, index, profile, out);
    } else if (kind == "JobSet") {
      long long total = 0;
      for (const auto& rj : spec.Get("replicatedJobs").items) {
        total += IntOr(rj->Get("replicas"), 1) * IntOr(rj->Get("template").Get("spec").Get("parallelism"), 1);
      }
      for (const auto& rj : spec.Get("replicatedJobs").items) {
        const YNode& t = rj->Get("template").Get("spec").Get("template");
        AddPod(obj, t.Get("metadata"), t.Get("spec"), "replicatedJobs[" + rj->Get("name").Str() + "]", total,
               total > 1, index, profile, out);
      }
    } else if (kind == "MPIJob" || kind == "PyTorchJob") {
      const YNode& replicas = spec.Get(kind == "MPIJob" ? "mpiReplicaSpecs" : "pytorchReplicaSpecs");
      long long total = 0;
      for (const auto& [role, rs] : replicas.entries) {
        if (kind == "MPIJob" && role->value == "Launcher") continue;  // the launcher only starts mpirun
        total += IntOr(rs->Get("replicas"), 1);
      }
      for (const auto& [role, rs] : replicas.entries) {
        const YNode& t = rs->Get("template");
        AddPod(obj, t.Get("metadata"), t.Get("spec"), role->value, total, total > 1, index, profile, out);
      }
    } else if (kind == "LeaderWorkerSet") {
      const YNode& lwt = spec.Get("leaderWorkerTemplate");
      long long size = IntOr(lwt.Get("size"), 1);
      if (lwt.Has("leaderTemplate")) {
        const YNode& t = lwt.Get("leaderTemplate");
        AddPod(obj, t.Get("metadata"), t.Get("spec"), "leader", size, size > 1, index, profile, out);
      }
      const YNode& t = lwt.Get("workerTemplate");
      AddPod(obj, t.Get("metadata"), t.Get("spec"), "worker", size, size > 1, index, profile, out);
    }
  }
  return out;
}

}  // namespace fabcheck::k8s
