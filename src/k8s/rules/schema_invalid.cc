// schema.invalid: documents that are not objects, unknown apiVersions, and
// wrong types in the fields the rules read (hostNetwork: "true", env value: 1).
#include <map>
#include <set>

#include "base/strings.h"
#include "k8s/rules/common.h"

namespace fabcheck::k8s::rules {
namespace {

const std::map<std::string, std::set<std::string>>& ApiVersions() {
  static const std::map<std::string, std::set<std::string>> kVersions = {
      {"Pod", {"v1"}}, {"ConfigMap", {"v1"}}, {"Namespace", {"v1"}}, {"Service", {"v1"}},
      {"Deployment", {"apps/v1"}}, {"StatefulSet", {"apps/v1"}}, {"DaemonSet", {"apps/v1"}},
      {"ReplicaSet", {"apps/v1"}}, {"Job", {"batch/v1", "batch.volcano.sh/v1alpha1"}},
      {"CronJob", {"batch/v1", "batch.volcano.sh/v1alpha1"}},
      {"JobSet", {"jobset.x-k8s.io/v1alpha2"}}, {"MPIJob", {"kubeflow.org/v2beta1", "kubeflow.org/v1"}},
      {"PyTorchJob", {"kubeflow.org/v1"}}, {"LeaderWorkerSet", {"leaderworkerset.x-k8s.io/v1"}},
      {"NetworkAttachmentDefinition", {"k8s.cni.cncf.io/v1"}},
      {"SriovNetwork", {"sriovnetwork.openshift.io/v1"}}, {"SriovIBNetwork", {"sriovnetwork.openshift.io/v1"}},
      {"SriovNetworkNodePolicy", {"sriovnetwork.openshift.io/v1"}},
      {"NicClusterPolicy", {"mellanox.com/v1alpha1"}}, {"MacvlanNetwork", {"mellanox.com/v1alpha1"}},
      {"HostDeviceNetwork", {"mellanox.com/v1alpha1"}}, {"IPoIBNetwork", {"mellanox.com/v1alpha1"}},
      {"KubeletConfiguration", {"kubelet.config.k8s.io/v1beta1", "kubelet.config.k8s.io/v1"}},
      {"Role", {"rbac.authorization.k8s.io/v1"}}, {"ClusterRole", {"rbac.authorization.k8s.io/v1"}},
      {"RoleBinding", {"rbac.authorization.k8s.io/v1"}}, {"ClusterRoleBinding", {"rbac.authorization.k8s.io/v1"}},
  };
  return kVersions;
}

class Checker {
 public:
  Checker(const Context& ctx, const Object& obj, const PodView* pod, Reporter& out)
      : obj_(obj), pod_(pod), out_(out), template_file_(ctx.set.template_files.count(obj.file) > 0) {}

  void Fail(const YNode& node, const std::string& path, const std::string& message) {
    Report r = pod_ ? PodReport(*pod_, nullptr, node.LineOr(obj_.line), "") : ObjectReport(obj_, node.LineOr(obj_.line), "");
    r.column = node.column;
    r.message = path + ": " + message;
    if (template_file_) {
      r.message += " (the file holds {{ ... }} template markup: lint what the template renders, e.g. "
                   "'helm template CHART | fabcheck k8s lint -')";
    }
    if (node.IsScalar()) r.evidence.push_back(path + " = " + (node.quoted ? "\"" + node.value + "\"" : node.value));
    out_.Add(std::move(r));
  }
  void Bool(const YNode& node, const std::string& path) {
    if (node.IsNull() || node.AsBool()) return;
    Fail(node, path, node.IsScalar() && node.quoted ? "is the string \"" + node.value +
                                                          "\", not a boolean; the API server rejects it (write true or "
                                                          "false without quotes)"
                                                    : "must be true or false");
  }
  void Int(const YNode& node, const std::string& path) {
    if (node.IsNull() || node.AsInt()) return;
    Fail(node, path, node.IsScalar() && node.quoted ? "is a string, not an integer (remove the quotes)"
                                                    : "must be an integer");
  }
  void String(const YNode& node, const std::string& path) {
    if (node.IsNull() || node.IsString()) return;
    Fail(node, path, node.IsScalar() ? "is a " + std::string(node.AsBool() ? "boolean" : "number") +
                                           " but must be a string; kubectl rejects it (quote it: \"" + node.value +
                                           "\")"
                                     : "must be a string");
  }
  void List(const YNode& node, const std::string& path) {
    if (!node.IsNull() && !node.IsSeq()) Fail(node, path, "must be a list");
  }
  void Map(const YNode& node, const std::string& path) {
    if (!node.IsNull() && !node.IsMap()) Fail(node, path, "must be a map");
  }

  void StringMap(const YNode& node, const std::string& path) {
    Map(node, path);
    for (const auto& [k, v] : node.entries) String(*v, path + "." + k->value);
  }

  void Container(const YNode& c, const std::string& path) {
    if (!c.IsMap()) {
      Fail(c, path, "must be a map (a container)");
      return;
    }
    if (!c.Get("name").IsScalar()) Fail(c, path + ".name", "is required");
    const YNode& res = c.Get("resources");
    Map(res, path + ".resources");
    for (const char* block : {"limits", "requests"}) {
      const YNode& b = res.Get(block);
      Map(b, path + ".resources." + block);
      for (const auto& [k, v] : b.entries) {
        if (k->value.find('/') == std::string::npos) continue;
        if (!v->IsScalar() || !ParseInt(Trim(v->value))) {
          Fail(*v, path + ".resources." + block + "[" + k->value + "]", "extended resources take whole numbers");
        }
      }
    }
    const YNode& sc = c.Get("securityContext");
    Map(sc, path + ".securityContext");
    Bool(sc.Get("privileged"), path + ".securityContext.privileged");
    Bool(sc.Get("runAsNonRoot"), path + ".securityContext.runAsNonRoot");
    Bool(sc.Get("allowPrivilegeEscalation"), path + ".securityContext.allowPrivilegeEscalation");
    Int(sc.Get("runAsUser"), path + ".securityContext.runAsUser");
    const YNode& add = sc.Get("capabilities").Get("add");
    List(add, path + ".securityContext.capabilities.add");
    for (const auto& cap : add.items) String(*cap, path + ".securityContext.capabilities.add[]");
    const YNode& env = c.Get("env");
    List(env, path + ".env");
    for (const auto& e : env.items) {
      std::string name = e->Get("name").Str();
      if (!e->IsMap() || name.empty()) {
        Fail(*e, path + ".env[]", "an env entry needs a name");
        continue;
      }
      String(e->Get("value"), path + ".env[" + name + "].value");
    }
    const YNode& mounts = c.Get("volumeMounts");
    List(mounts, path + ".volumeMounts");
    for (const auto& m : mounts.items) Bool(m->Get("readOnly"), path + ".volumeMounts[].readOnly");
  }

  void PodSpec(const YNode& spec, const std::string& path) {
    for (const char* f : {"hostNetwork", "hostIPC", "hostPID"}) Bool(spec.Get(f), path + "." + f);
    const YNode& sc = spec.Get("securityContext");
    Int(sc.Get("runAsUser"), path + ".securityContext.runAsUser");
    Bool(sc.Get("runAsNonRoot"), path + ".securityContext.runAsNonRoot");
    List(spec.Get("volumes"), path + ".volumes");
    for (const char* list : {"initContainers", "containers"}) {
      const YNode& cs = spec.Get(list);
      List(cs, path + "." + list);
      for (const auto& c : cs.items) Container(*c, path + "." + list + "[" + c->Get("name").Str() + "]");
    }
    if (!spec.Get("containers").IsSeq() || spec.Get("containers").items.empty()) {
      Fail(spec, path + ".containers", "a pod needs at least one container");
    }
  }

 private:
  const Object& obj_;
  const PodView* pod_;
  Reporter& out_;
  bool template_file_;
};

void CheckObject(const Context& ctx, const Object& obj, Reporter& out) {
  Checker check(ctx, obj, nullptr, out);
  const YNode& meta = obj.Metadata();
  check.Map(meta, "metadata");
  // Component configurations (kubeconfig, KubeletConfiguration, kind or
  // skaffold configs, controller-runtime's ControllerManagerConfig) are read
  // by programs, never sent to the API server, and carry no metadata. An
  // object that has metadata, or a kind fabcheck reads, needs its name.
  bool api_object = obj.Root().Has("metadata") || ApiVersions().count(obj.kind) > 0;
  if (obj.kind != "KubeletConfiguration" && api_object && obj.name.empty()) {
    check.Fail(meta, "metadata.name", "is required");
  }
  check.StringMap(meta.Get("labels"), "metadata.labels");
  check.StringMap(meta.Get("annotations"), "metadata.annotations");
  auto known = ApiVersions().find(obj.kind);
  if (known != ApiVersions().end() && !known->second.count(obj.api_version)) {
    check.Fail(obj.Root().Get("apiVersion"), "apiVersion",
               obj.api_version + " is not served for " + obj.kind + " (use " + *known->second.begin() + ")");
  }
  const YNode& spec = obj.Spec();
  for (const char* f : {"replicas", "parallelism", "completions"}) check.Int(spec.Get(f), std::string("spec.") + f);
  if (obj.kind == "NetworkAttachmentDefinition") {
    const YNode& config = spec.Get("config");
    if (!config.IsNull() && !config.IsScalar()) {
      check.Fail(config, "spec.config", "must be a JSON string (write it as a block scalar: config: |)");
    }
  } else if (obj.kind == "SriovNetworkNodePolicy") {
    check.Bool(spec.Get("isRdma"), "spec.isRdma");
    check.Int(spec.Get("numVfs"), "spec.numVfs");
    check.Int(spec.Get("mtu"), "spec.mtu");
    if (spec.Get("resourceName").Str().empty()) check.Fail(spec, "spec.resourceName", "is required");
  } else if (obj.kind == "SriovNetwork" || obj.kind == "SriovIBNetwork") {
    check.Int(spec.Get("vlan"), "spec.vlan");
    if (spec.Get("resourceName").Str().empty()) check.Fail(spec, "spec.resourceName", "is required");
    check.String(spec.Get("ipam"), "spec.ipam");
  } else if (obj.kind == "KubeletConfiguration") {
    const YNode& r = obj.Root();
    const std::map<std::string, std::set<std::string>> kEnums = {
        {"topologyManagerPolicy", {"none", "best-effort", "restricted", "single-numa-node"}},
        {"topologyManagerScope", {"container", "pod"}},
        {"cpuManagerPolicy", {"none", "static"}},
        {"memoryManagerPolicy", {"None", "Static"}}};
    for (const auto& [field, values] : kEnums) {
      const YNode& v = r.Get(field);
      if (!v.IsNull() && !values.count(v.Str())) {
        check.Fail(v, field, "'" + v.Str() + "' is not one of " + Join({values.begin(), values.end()}, ", ") +
                                 "; the kubelet refuses to start");
      }
    }
  }
}

void Check(const Context& ctx, Reporter& out) {
  for (const auto& bad : ctx.set.bad_documents) {
    Report r;
    r.file = bad.file;
    r.subject = bad.file;
    r.line = bad.line;
    r.message = bad.message;
    out.Add(std::move(r));
  }
  for (const auto& obj : ctx.set.objects) CheckObject(ctx, obj, out);
  for (const auto& pod : ctx.pods) {
    Checker check(ctx, *pod.owner, &pod, out);
    check.PodSpec(*pod.spec, pod.owner->kind == "Pod" ? "spec" : "template.spec");
    check.StringMap(pod.meta->Get("annotations"), "template.metadata.annotations");
    if (!pod.networks_error.empty()) {
      check.Fail(pod.meta->Get("annotations").Get(pod.networks_key), pod.networks_key,
                 pod.networks_error + "; Multus rejects the pod");
    }
  }
  for (const auto& p : ctx.index.problems()) out.Add(ObjectReport(*p.source, p.line, p.message));
}

}  // namespace

const Rule& RuleSchemaInvalid() {
  static const Rule kRule{
      {"schema.invalid", Level::kError, "generic", "Not a valid Kubernetes object, or a field of the wrong type",
       "The API server rejects an object whose fields have the wrong type (hostNetwork: \"true\" is a string, "
       "value: 1 in env is a number), an apiVersion it does not serve, or a document that is not an object. "
       "fabcheck checks the fields its rules read, so a rule never silently reads a wrong-typed value as absent.",
       "Fix the field as the message says (quote strings, unquote booleans and integers, use the served "
       "apiVersion).",
       "k8s-lint-evidence GEN002; Kubernetes API reference", {}},
      &Check};
  return kRule;
}

}  // namespace fabcheck::k8s::rules
