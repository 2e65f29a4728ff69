// k8s.nccl.transport-disabled: NCCL transports disabled on an RDMA or multi-GPU workload.
#include "base/strings.h"
#include "k8s/rules/common.h"

namespace fabcheck::k8s::rules {
namespace {

bool Truthy(const std::string& v) {
  std::string s = ToLower(Trim(v));
  return s == "1" || s == "true" || s == "yes";
}

void Check(const Context& ctx, Reporter& out) {
  for (const auto& pod : ctx.pods) {
    bool network_path = pod.UsesRdma() || (pod.multi_node_group && pod.Gpus() > 0);
    for (const auto& c : pod.containers) {
      auto report = [&](const EnvVar& env, const std::string& why) {
        out.Add(PodReport(pod, &c, env.line, env.name + "=" + env.value + " " + why,
                          {env.name + " = " + env.value, "resources: " + DescribeResources(c)}));
      };
      if (const EnvVar* e = c.FindEnv("NCCL_IB_DISABLE"); e && e->has_value && Truthy(e->value) && network_path) {
        report(*e, "turns off the IB/RoCE transport in a workload that requests RDMA: NCCL runs over TCP sockets");
      }
      if (const EnvVar* e = c.FindEnv("NCCL_NET"); e && e->has_value && ToLower(e->value) == "socket" && network_path) {
        report(*e, "forces the socket transport in a workload that requests RDMA");
      }
      if (c.gpus >= 2) {
        if (const EnvVar* e = c.FindEnv("NCCL_P2P_DISABLE"); e && e->has_value && Truthy(e->value)) {
          report(*e, "turns off NVLink/PCIe peer-to-peer between the container's " + std::to_string(c.gpus) +
                         " GPUs: intra-node traffic goes through host memory");
        }
        if (const EnvVar* e = c.FindEnv("NCCL_SHM_DISABLE"); e && e->has_value && Truthy(e->value)) {
          report(*e, "turns off the shared-memory transport between the container's GPUs");
        }
      }
    }
  }
}

}  // namespace

const Rule& RuleNcclTransportDisabled() {
  static const Rule kRule{
      {"k8s.nccl.transport-disabled", Level::kWarning, "workload", "NCCL transport disabled on an RDMA or multi-GPU workload",
       "NCCL_IB_DISABLE=1 or NCCL_NET=Socket are left over from debugging a pod without IPC_LOCK or /dev/shm; they "
       "make NCCL use TCP even though the RDMA device is there (only an 'NCCL_IB_DISABLE set by environment' line "
       "says so). NCCL_P2P_DISABLE / NCCL_SHM_DISABLE cut intra-node bandwidth by an order of magnitude.",
       "Remove the variable and fix the cause it worked around (k8s.rdma.no-ipc-lock, k8s.shm.missing); check the "
       "transport NCCL chose with NCCL_DEBUG=INFO ('via NET/IB').",
       "NVIDIA/nccl#525, #342, #1422; NCCL src/transport/net_ib.cc ncclIbInit", {}},
      &Check};
  return kRule;
}

}  // namespace fabcheck::k8s::rules
