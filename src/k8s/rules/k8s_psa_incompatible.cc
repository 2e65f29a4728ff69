// k8s.psa.incompatible: a namespace's Pod Security level rejects what its workloads use.
#include <set>

#include "base/strings.h"
#include "k8s/rules/common.h"

namespace fabcheck::k8s::rules {
namespace {

// Pod Security Standards, Baseline: capabilities that may be added.
const std::set<std::string> kBaselineCaps = {"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL",
                                             "MKNOD", "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID",
                                             "SYS_CHROOT"};

void Check(const Context& ctx, Reporter& out) {
  for (const auto& pod : ctx.pods) {
    PsaLevel psa = NamespacePsa(ctx, pod.ns());
    if (psa.enforce != "baseline" && psa.enforce != "restricted") continue;
    std::vector<std::string> violations;
    if (pod.host_network) violations.push_back("hostNetwork");
    if (pod.host_ipc) violations.push_back("hostIPC");
    for (const auto& v : pod.spec->Get("volumes").items) {
      if (v->Has("hostPath")) violations.push_back("hostPath volume " + v->Get("name").Str());
    }
    for (const auto& c : pod.containers) {
      if (c.privileged) violations.push_back("privileged (" + c.name + ")");
      for (const auto& cap : c.node->Get("securityContext").Get("capabilities").Get("add").items) {
        std::string name = cap->Str();
        if (StartsWith(name, "CAP_")) name = name.substr(4);
        bool allowed = psa.enforce == "baseline" ? kBaselineCaps.count(name) > 0 : name == "NET_BIND_SERVICE";
        if (!allowed) violations.push_back("capability " + name + " (" + c.name + ")");
      }
    }
    if (violations.empty()) continue;
    Report r = PodReport(pod, nullptr, pod.line,
                         "runs in namespace " + pod.ns() + ", which enforces Pod Security '" + psa.enforce +
                             "', but uses " + Join(violations, ", ") + ": the API server rejects its pods",
                         {"Namespace " + pod.ns() + " label pod-security.kubernetes.io/enforce: " + psa.enforce + " (" +
                          psa.ns->file + ":" + std::to_string(psa.line) + ")"});
    if (ctx.profile.psa_label_sync) {
      // OpenShift's synchronizer writes only the warn and audit labels; an
      // enforce label in the manifest is enforced as written.
      r.evidence.push_back("OpenShift's Pod Security label synchronization sets warn/audit only, not enforce");
    }
    out.Add(std::move(r));
  }
}

}  // namespace

const Rule& RulePsaIncompatible() {
  static const Rule kRule{
      {"k8s.psa.incompatible", Level::kError, "workload", "Namespace Pod Security level rejects the workload",
       "Pod Security Admission's Baseline level allows only a short list of added capabilities, and IPC_LOCK is "
       "not on it; it also forbids hostNetwork, hostIPC, hostPath and privileged. Every RDMA pod that adds "
       "IPC_LOCK therefore needs a namespace labelled privileged, or its Deployment/Job never creates pods "
       "(the error appears only in the controller's events).",
       "Label the namespace pod-security.kubernetes.io/enforce: privileged (keep warn/audit at baseline to see "
       "other violations), and keep RDMA workloads in dedicated namespaces.",
       "Kubernetes Pod Security Standards (Baseline capabilities list); k8s-lint-evidence RDMA019", {}},
      &Check};
  return kRule;
}

}  // namespace fabcheck::k8s::rules
