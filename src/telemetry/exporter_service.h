// The exporter behind the HTTP endpoint: one collection serves every scraper
// that asks while it runs (single flight), slowly changing labels are
// refreshed on their own schedule, and the exporter reports on itself
// (scrape duration, read errors, PodResources and inventory health).
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "fabcheck/model/inventory.h"
#include "sys/sysroot.h"
#include "telemetry/collector.h"
#include "telemetry/ethtool_stats.h"
#include "telemetry/host_findings.h"
#include "telemetry/metrics.h"
#include "sys/sriov.h"
#include "telemetry/pod_resources.h"
#include "telemetry/resource_accounting.h"
#include "telemetry/resource_metrics.h"
#include "telemetry/topology_labels.h"

namespace fabcheck::telemetry {

struct ExporterOptions {
  std::string node_name;
  std::string kubelet_socket;  // empty: no pod labels
  SharedResourceTable shared_resources;
  std::chrono::milliseconds inventory_interval{std::chrono::seconds(60)};
  std::chrono::milliseconds pod_interval{std::chrono::seconds(10)};
  std::chrono::milliseconds pod_timeout{std::chrono::seconds(2)};
  // Doctor's host checks (host_findings.h); empty: not run, nothing exported.
  HostFindingsLoader host_checks;
  std::chrono::milliseconds host_checks_interval{std::chrono::seconds(60)};
};

// Reads the inventory of a sysroot (inventory::ReadInventory on a node); injected
// so telemetry stays a consumer of model values and tests can pass their own.
using InventoryLoader = std::function<Result<model::Inventory>(const sys::SysRoot&)>;

// The result of one collection as served: the text, and its gzip, made once
// per collection however many scrapers share it.
class ScrapeOutput {
 public:
  explicit ScrapeOutput(std::string text) : text_(std::move(text)) {}
  const std::string& text() const { return text_; }
  // The gzip body; nullptr when compression failed (then serve the text).
  const std::string* Gzip() const;

 private:
  std::string text_;
  mutable std::once_flag gzip_once_;
  mutable std::string gzip_;
  mutable bool gzip_ok_ = false;
};

class ExporterService {
 public:
  ExporterService(sys::SysRoot root, ExporterOptions options, InventoryLoader inventory_loader,
                  std::unique_ptr<EthtoolSource> ethtool);
  ~ExporterService();

  // One scrape, rendered. Thread-safe; callers arriving while a collection
  // runs wait for it and share its result. Collections run on one thread of
  // the service (started on first use), never on the caller's: the memory of
  // a collection (read buffers, metric set, text, gzip) then comes from one
  // malloc arena and one stack, instead of from whichever HTTP worker asked,
  // which made the resident size grow with every worker that ever collected.
  // Null when the collector thread cannot start (the node's thread limit):
  // the scrape is answered 503 with the reason, never an abort.
  std::shared_ptr<const ScrapeOutput> Scrape(std::string* error = nullptr);
  // One collection as values (tests, `--once`).
  MetricSet Collect();

  const sys::SysRoot& root() const { return root_; }

 private:
  void CollectLoop();
  void RefreshInventory(bool device_set_changed);
  void RefreshPods();
  void RefreshAllocatable();
  bool RefreshSriov();  // false when not due
  void RefreshHostFindings();

  sys::SysRoot root_;
  ExporterOptions options_;
  InventoryLoader inventory_loader_;
  std::unique_ptr<EthtoolSource> ethtool_;

  // Collection state: used by one collection at a time (collect_mutex_).
  std::mutex collect_mutex_;
  FabricCollector collector_;
  TopologyLabels topology_;
  bool have_topology_ = false;
  std::string inventory_error_;
  std::chrono::steady_clock::time_point inventory_time_{};
  std::vector<std::string> inventory_devices_;
  std::unique_ptr<PodResourcesClient> pod_client_;
  std::optional<PodMapping> pods_;
  std::string pod_error_;
  std::chrono::steady_clock::time_point pod_time_{};
  // Kubernetes resource health (resource_accounting.h), from the same refresh.
  std::optional<std::vector<PodDevice>> held_;  // the last good List
  std::optional<std::vector<AllocatableDevice>> allocatable_;
  std::optional<bool> allocatable_supported_;  // unknown until the kubelet answers
  bool allocatable_unsupported_logged_ = false;
  std::string allocatable_error_;
  std::set<std::string> remembered_resources_;
  ResourceAccounting accounting_;
  std::vector<NamedDevice> unallocated_named_;
  std::vector<NamedDevice> held_named_;  // points into accounting_.held_unallocatable
  // SR-IOV PFs and VFs, on the PodResources schedule (VFs move with pods).
  std::vector<sys::sriov::PhysicalFunction> sriov_;
  std::vector<ReadError> sriov_errors_;
  std::chrono::steady_clock::time_point sriov_time_{};
  // Host-tuning findings, on their own schedule (they read /proc/interrupts,
  // cpufreq and config space: cheap, but not worth every scrape).
  std::vector<model::Finding> host_findings_;
  bool host_checks_up_ = false;
  std::chrono::steady_clock::time_point host_checks_time_{};
  double scrapes_total_ = 0;
  double read_errors_total_ = 0;
  std::set<std::string> warned_paths_;

  // Single flight, served by collect_thread_.
  std::mutex flight_mutex_;
  std::condition_variable flight_done_;
  std::condition_variable flight_wanted_;
  bool in_flight_ = false;
  bool stopping_ = false;
  uint64_t generation_ = 0;
  std::shared_ptr<const ScrapeOutput> last_;
  std::thread collect_thread_;
};

}  // namespace fabcheck::telemetry
