// What an agent does for the ladder on its own node (control/api.h routes):
//
//   POST /v1/node      {"profile_yaml": "...", "profile_name": "dgx.yaml", "snapshot": true,
//                       "expect_transport": "tcp" (optional: the coordinator's --transport tcp)}
//                   -> {"inventory": fabcheck.inventory/v1, "doctor": fabcheck.doctor/v1,
//                       "facts": {setting: value}, "snapshot_b64": "<capture .tar.gz>", "errors": [...]}
//   GET  /v1/counters -> {"time_unix": t, "values": {object: {counter: value}}}
//
// "facts" are the cluster-wide settings the inventory does not hold: PFC
// priorities and trust mode (dcbnl), NIC driver version, NCCL and CUDA
// library versions; "" where unknown. The node is read through the agent's
// sysroot: the live node, or a fixture/capture given to `fabcheck agent
// --sysroot` (tests plant a PCIe downgrade that way).
#pragma once

#include <nlohmann/json.hpp>

#include <future>
#include <memory>
#include <string>

#include "base/status.h"
#include "fabcheck/model/ladder.h"
#include "agent/local_agent.h"
#include "sys/sysroot.h"

namespace fabcheck::agent {

struct NodeServiceOptions {
  std::string sysroot;            // "" = the live node
  std::string fabcheck_version;
  bool query_libraries = true;    // ask libibverbs/NVML/NCCL/CUDA (live node only)
  std::string coll_executable;    // the fabcheck binary L4's ranks run ("" = this process's)
};

class NodeService {
 public:
  static Result<std::shared_ptr<NodeService>> Create(NodeServiceOptions options);

  Result<nlohmann::json> Node(const nlohmann::json& request) const;
  Result<nlohmann::json> Counters(const nlohmann::json& request) const;
  Result<nlohmann::json> Inventory() const;
  // Puts the handlers above, and the L4 ranks' (coll_service.h), into an
  // agent's configuration.
  static void Wire(const std::shared_ptr<NodeService>& service, AgentConfig& config);
  const NodeServiceOptions& options() const { return options_; }

 private:
  explicit NodeService(NodeServiceOptions options, sys::SysRoot root)
      : options_(std::move(options)), root_(std::move(root)) {}
  NodeServiceOptions options_;
  sys::SysRoot root_;
  // NCCL and CUDA library versions: loading a 200 MB libnccl costs a third of
  // a second, so the agent does it once, in the background, when it starts.
  std::shared_future<nlohmann::json> libraries_;
};

// The counter sample of a node (RDMA port counters/ and hw_counters/, netdev
// statistics/, ethtool per-priority PFC counters where the driver has them).
model::CounterSample SampleCounters(const sys::SysRoot& root);

}  // namespace fabcheck::agent
