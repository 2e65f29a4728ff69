// k8s.nccl.ib-hca: NCCL_IB_HCA names HCAs the allocation does not give.
#include <regex>

#include "base/strings.h"
#include "k8s/rules/common.h"

namespace fabcheck::k8s::rules {
namespace {

constexpr const char* kId = "k8s.nccl.ib-hca";

void Check(const Context& ctx, Reporter& out) {
  std::vector<std::string> known = ctx.ParamList(kId, "hcas");
  for (const auto& pod : ctx.pods) {
    if (pod.host_network) continue;
    for (const auto& c : pod.containers) {
      const EnvVar* e = c.FindEnv("NCCL_IB_HCA");
      if (!e || !e->has_value) continue;
      std::string value(Trim(e->value));
      if (value.empty() || value[0] == '^' || value.find('$') != std::string::npos) continue;
      bool exact = value[0] == '=';
      if (exact) value = value.substr(1);
      std::vector<std::string> names;
      for (const auto& item : Split(value, ',', true)) {
        std::string name(Trim(item));
        name = name.substr(0, name.find(':'));  // mlx5_0:1 -> mlx5_0
        if (!name.empty()) names.push_back(name);
      }
      long long devices = PerDeviceNics(ctx, c);
      std::vector<std::string> evidence = {"NCCL_IB_HCA = " + e->value, "resources: " + DescribeResources(c)};
      if (!known.empty()) {
        std::vector<std::string> unknown;
        for (const auto& n : names) {
          bool found = false;
          for (const auto& k : known) found = found || (exact ? k == n : StartsWith(k, n));
          if (!found) unknown.push_back(n);
        }
        if (!unknown.empty()) {
          evidence.push_back("HCAs of the nodes (params.hcas): " + Join(known, ", "));
          out.Add(PodReport(pod, &c, e->line, "NCCL_IB_HCA names " + Join(unknown, ", ") +
                                                  ", which the nodes do not have", evidence));
          continue;
        }
      }
      if (devices <= 0) continue;
      // mlx5_3, rocep12s0f0, ibp12s0: names of one device on one node, not a prefix of the VFs' names.
      static const std::regex kSpecific("^(.*_[0-9]+|rocep.*|ibp.*)$");
      bool numbered = false;
      for (const auto& n : names) numbered = numbered || std::regex_match(n, kSpecific);
      if (numbered) {
        out.Add(PodReport(pod, &c, e->line,
                          "NCCL_IB_HCA=" + e->value + " names specific devices, but the pod gets " +
                              std::to_string(devices) +
                              " SR-IOV VF(s)/host device(s) whose RDMA names (mlx5_N) depend on the node and the "
                              "allocation: NCCL may find none of them and fall back to sockets",
                          evidence));
      } else if (static_cast<long long>(names.size()) > devices) {
        out.Add(PodReport(pod, &c, e->line,
                          "NCCL_IB_HCA lists " + std::to_string(names.size()) + " HCAs but the pod is given " +
                              std::to_string(devices) + " RDMA device(s)",
                          evidence));
      }
    }
  }
}

}  // namespace

const Rule& RuleNcclIbHca() {
  static const Rule kRule{
      {kId, Level::kWarning, "workload", "NCCL_IB_HCA names HCAs the allocation does not give",
       "Inside a pod with SR-IOV VFs the RDMA devices are the VFs' (mlx5_12, mlx5_17...), numbered by the host "
       "kernel and different per node and per allocation. NCCL_IB_HCA copied from bare metal (mlx5_0,mlx5_1) then "
       "matches nothing, or a PF the pod must not use, and NCCL silently falls back to sockets.",
       "Leave NCCL_IB_HCA unset in pods with VFs (the pod only sees its own devices), or use a prefix such as "
       "'mlx5'. Set params.k8s.nccl.ib-hca.hcas to the nodes' HCA names to check explicit lists.",
       "NVIDIA/nccl#925; Mellanox/network-operator#738",
       {{"hcas", "list", "(empty)", "RDMA device names present on the nodes, e.g. from fabcheck inventory"}}},
      &Check};
  return kRule;
}

}  // namespace fabcheck::k8s::rules
