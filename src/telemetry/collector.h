// Builds the fabric metrics of one scrape from a SysRoot.
//
// Every file is read once per scrape (port_reader.h) and every metric of a
// port is derived from that one reading. The slowly changing labels (PCI
// address, netdev, GPU affinity) and the pod assignment come in from the
// caller, which refreshes them on their own schedule (exporter_service.h).
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sys/sysroot.h"
#include "telemetry/ethtool_stats.h"
#include "telemetry/metrics.h"
#include "telemetry/pod_resources.h"
#include "telemetry/port_reader.h"
#include "telemetry/topology_labels.h"

namespace fabcheck::telemetry {

struct CollectContext {
  std::string node;                         // value of the node label
  const TopologyLabels* topology = nullptr;  // null: no inventory yet
  const PodMapping* pods = nullptr;          // null: no PodResources
  EthtoolSource* ethtool = nullptr;          // null: ethtool metrics off
};

struct CollectResult {
  std::vector<ReadError> errors;
  std::vector<std::string> devices_seen;  // RDMA devices listed in this scrape
};

// Collects scrape after scrape from one root, keeping the counter
// directories of every port open in between (PortHandles). Not thread-safe:
// one collection at a time (ExporterService serialises them).
class FabricCollector {
 public:
  explicit FabricCollector(sys::SysRoot root) : root_(std::move(root)) {}
  // Appends the fabric metrics to `out`.
  CollectResult Collect(const CollectContext& context, MetricSet& out);

 private:
  sys::SysRoot root_;
  std::map<std::pair<std::string, int>, PortHandles> ports_;
  std::map<std::string, std::string> ports_dirs_;  // device -> its resolved ports/ directory
  uint64_t collections_ = 0;
};

// One collection without kept handles (tests, one-shot use).
CollectResult CollectFabric(const sys::SysRoot& root, const CollectContext& context, MetricSet& out);

}  // namespace fabcheck::telemetry
