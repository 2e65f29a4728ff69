// k8s.nccl.socket-ifname: NCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME name an interface the pod will not have.
#include "base/strings.h"
#include "k8s/rules/common.h"

namespace fabcheck::k8s::rules {
namespace {

void Check(const Context& ctx, Reporter& out) {
  for (const auto& pod : ctx.pods) {
    if (pod.host_network) continue;  // the host's interfaces are not in the manifest
    for (const auto& c : pod.containers) {
      for (const char* var : {"NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME"}) {
        const EnvVar* env = c.FindEnv(var);
        if (!env || !env->has_value) continue;
        std::string value(Trim(env->value));
        // "^..." excludes interfaces; "$(VAR)" is resolved at run time.
        if (value.empty() || value[0] == '^' || value.find('$') != std::string::npos) continue;
        bool exact = value[0] == '=';
        if (exact) value = value.substr(1);
        std::vector<std::string> missing;
        size_t wanted = 0;
        for (const auto& item : Split(value, ',', true)) {
          std::string name(Trim(item));
          if (name.empty()) continue;
          ++wanted;
          bool found = false;
          for (const auto& iface : pod.interfaces) {
            // NCCL matches prefixes ("eth" matches eth0) unless the list starts with '='.
            if (exact ? iface == name : StartsWith(iface, name)) found = true;
          }
          if (!found) missing.push_back(name);
        }
        if (missing.empty()) continue;
        Report r = PodReport(pod, &c, env->line,
                             std::string(var) + "=" + env->value + " names " + Join(missing, ", ") +
                                 ", which the pod will not have (its interfaces: " + Join(pod.interfaces, ", ") + ")",
                             {std::string(var) + " = " + env->value,
                              "interfaces: lo, eth0 (cluster network) and one per networks annotation entry, named "
                              "by its @interface or net1, net2, ..."});
        if (missing.size() < wanted) {
          r.level = Level::kWarning;
          r.message += "; the other names still match";
        } else {
          r.message += ": bootstrap fails with 'no socket interface found'";
        }
        out.Add(std::move(r));
      }
    }
  }
}

}  // namespace

const Rule& RuleNcclSocketIfname() {
  static const Rule kRule{
      {"k8s.nccl.socket-ifname", Level::kError, "workload", "NCCL/Gloo socket interface not present in the pod",
       "NCCL_SOCKET_IFNAME (and GLOO_SOCKET_IFNAME for torch.distributed) select the interface for bootstrap and "
       "the socket transport by name prefix. Copied from a bare-metal run (ens1f0, ib0, bond0) they match nothing "
       "in the pod, and NCCL aborts with 'Bootstrap : no socket interface found' or uses an unintended interface.",
       "Use names the pod has: eth0 for the cluster network, and the Multus interfaces (net1, net2... or the "
       "@name given in the networks annotation) for the data plane.",
       "NVIDIA/nccl#1000, #1536; NCCL src/misc/socket.cc ncclFindInterfaces", {}},
      &Check};
  return kRule;
}

}  // namespace fabcheck::k8s::rules
