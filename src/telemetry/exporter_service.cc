#include "telemetry/exporter_service.h"

#include "sys/infiniband.h"

#include <algorithm>

#include "base/log.h"
#include "base/thread_group.h"
#include "fabcheck/version.h"
#include "telemetry/compression.h"
#include "telemetry/prometheus_text.h"

namespace fabcheck::telemetry {
namespace {

constexpr auto kGauge = MetricType::kGauge;
constexpr auto kCounter = MetricType::kCounter;
constexpr size_t kMaxWarnedPaths = 1024;

bool ResourceLooksRdma(const std::string& resource) {
  std::string lower = resource;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  return lower.find("rdma") != std::string::npos || lower.find("sriov") != std::string::npos ||
         lower.find("hca") != std::string::npos || lower.find("hostdev") != std::string::npos;
}

}  // namespace

ExporterService::ExporterService(sys::SysRoot root, ExporterOptions options, InventoryLoader inventory_loader,
                                 std::unique_ptr<EthtoolSource> ethtool)
    : root_(std::move(root)),
      options_(std::move(options)),
      inventory_loader_(std::move(inventory_loader)),
      ethtool_(std::move(ethtool)),
      collector_(root_) {}

ExporterService::~ExporterService() {
  {
    std::lock_guard lock(flight_mutex_);
    stopping_ = true;
  }
  flight_wanted_.notify_all();
  flight_done_.notify_all();
  if (collect_thread_.joinable()) collect_thread_.join();
}

void ExporterService::RefreshInventory(bool device_set_changed) {
  if (!inventory_loader_) return;
  auto now = std::chrono::steady_clock::now();
  bool never = inventory_time_ == std::chrono::steady_clock::time_point{};
  bool stale = now - inventory_time_ >= options_.inventory_interval;
  if (!never && !stale && !device_set_changed) return;
  inventory_time_ = now;
  auto listed = root_.ListDir(std::string(sys::infiniband::kClassDir));
  inventory_devices_ = listed.ok() ? *listed : std::vector<std::string>{};
  auto inventory = inventory_loader_(root_);
  if (!inventory.ok()) {
    inventory_error_ = inventory.status().message();
    LOG_WARN("exporter", "inventory refresh failed (labels kept from the last good read): {}", inventory_error_);
    return;
  }
  inventory_error_.clear();
  topology_ = LabelsFromInventory(*inventory);
  have_topology_ = true;
  for (const auto& w : inventory->warnings) LOG_DEBUG("exporter", "inventory: {}: {}", w.path, w.message);
}

void ExporterService::RefreshPods() {
  if (options_.kubelet_socket.empty()) return;
  auto now = std::chrono::steady_clock::now();
  if (pod_time_ != std::chrono::steady_clock::time_point{} && now - pod_time_ < options_.pod_interval) return;
  pod_time_ = now;
  auto forget = [this] {
    // Serving the last good mapping would hide a dead kubelet: drop it.
    pods_.reset();
    held_.reset();
    allocatable_.reset();
    accounting_ = {};
    unallocated_named_.clear();
    held_named_.clear();
  };
  if (!pod_client_) {
    auto client = PodResourcesClient::Connect(options_.kubelet_socket, options_.pod_timeout);
    if (!client.ok()) {
      pod_error_ = client.status().message();
      forget();
      return;
    }
    pod_client_ = std::move(*client);
  }
  auto devices = pod_client_->List();
  if (!devices.ok()) {
    if (pod_error_ != devices.status().message()) LOG_WARN("exporter", "{}", devices.status().message());
    pod_error_ = devices.status().message();
    forget();
    return;
  }
  pod_error_.clear();
  pods_ = MapPodDevices(root_, *devices, options_.shared_resources);
  held_ = std::move(*devices);
  RefreshAllocatable();
  accounting_ = AccountResources(allocatable_ ? &*allocatable_ : nullptr, *held_, remembered_resources_);
  unallocated_named_ = NameDevices(root_, accounting_.unallocated);
  held_named_ = NameHeldDevices(root_, accounting_.held_unallocatable);
}

void ExporterService::RefreshAllocatable() {
  // Asked on every refresh, also after Unimplemented: a kubelet upgraded
  // under a running exporter gains the call. Said once in the log.
  auto allocatable = pod_client_->GetAllocatable();
  if (allocatable.ok()) {
    if (allocatable_supported_ == false) LOG_INFO("exporter", "the kubelet now answers GetAllocatableResources");
    allocatable_supported_ = true;
    allocatable_error_.clear();
    for (const AllocatableDevice& d : *allocatable) remembered_resources_.insert(d.resource);
    allocatable_ = std::move(*allocatable);
    return;
  }
  allocatable_.reset();
  if (allocatable.status().code() == StatusCode::kUnimplemented) {
    allocatable_supported_ = false;
    if (!allocatable_unsupported_logged_) {
      allocatable_unsupported_logged_ = true;
      LOG_WARN("exporter",
               "{}; exporting the allocated devices per resource (List) without allocatable and unallocated "
               "counts",
               allocatable.status().message());
    }
    return;
  }
  if (allocatable_error_ != allocatable.status().message()) LOG_WARN("exporter", "{}", allocatable.status().message());
  allocatable_error_ = allocatable.status().message();
}

bool ExporterService::RefreshSriov() {
  auto now = std::chrono::steady_clock::now();
  if (sriov_time_ != std::chrono::steady_clock::time_point{} && now - sriov_time_ < options_.pod_interval) {
    return false;
  }
  sriov_time_ = now;
  sriov_.clear();
  sriov_errors_.clear();
  for (const std::string& bdf : sys::sriov::ListPhysicalFunctions(root_)) {
    auto pf = sys::sriov::ReadPhysicalFunction(root_, bdf);
    const std::string path = sys::sriov::PciDeviceDir(bdf);
    if (!pf.ok()) {
      // Listed a moment ago: a PF that vanished (hot unplug) is skipped like a device.
      sriov_errors_.push_back({"sriov", ReasonFor(pf.status()), path, pf.status().message()});
      continue;
    }
    for (const std::string& e : pf->errors) sriov_errors_.push_back({"sriov", "garbage", path, e});
    sriov_.push_back(std::move(*pf));
  }
  return true;
}

void ExporterService::RefreshHostFindings() {
  if (!options_.host_checks) return;
  auto now = std::chrono::steady_clock::now();
  if (host_checks_time_ != std::chrono::steady_clock::time_point{} &&
      now - host_checks_time_ < options_.host_checks_interval) {
    return;
  }
  host_checks_time_ = now;
  auto findings = options_.host_checks(root_);
  if (!findings.ok()) {
    if (host_checks_up_ || host_findings_.empty()) {
      LOG_WARN("exporter", "host checks failed (findings kept from the last good run): {}",
               findings.status().message());
    }
    host_checks_up_ = false;
    return;
  }
  host_findings_ = std::move(*findings);
  host_checks_up_ = true;
}

MetricSet ExporterService::Collect() {
  std::lock_guard lock(collect_mutex_);
  auto start = std::chrono::steady_clock::now();
  MetricSet metrics;

  RefreshInventory(false);
  RefreshPods();
  bool sriov_read = RefreshSriov();
  RefreshHostFindings();

  CollectContext context;
  context.node = options_.node_name;
  context.topology = have_topology_ ? &topology_ : nullptr;
  context.pods = pods_ ? &*pods_ : nullptr;
  context.ethtool = ethtool_.get();
  CollectResult result = collector_.Collect(context, metrics);
  if (inventory_loader_ && result.devices_seen != inventory_devices_) {
    // A device appeared or went away (driver reload, hot plug): the labels are
    // stale now. They are used from the next scrape on; this one has its values.
    RefreshInventory(true);
  }

  const Labels node = {{"node", options_.node_name}};
  if (context.pods) {
    for (const PodDevice& d : context.pods->unmapped) {
      if (!ResourceLooksRdma(d.resource)) continue;
      metrics.Add("fabcheck_pod_rdma_resource_unmapped_info",
                  "An RDMA-looking device-plugin allocation whose device ID names no RDMA device on this node "
                  "(e.g. the RDMA shared device plugin's synthetic IDs: map them with --rdma-shared-resource).",
                  kGauge,
                  {{"node", options_.node_name}, {"namespace", d.pod_namespace}, {"pod", d.pod},
                   {"container", d.container}, {"resource", d.resource}, {"device_id", d.device_id}},
                  1);
    }
  }

  if (held_) AddResourceMetrics(accounting_, unallocated_named_, held_named_, node, metrics);
  AddSriovMetrics({sriov_, held_ ? &*held_ : nullptr, allocatable_ ? &*allocatable_ : nullptr}, node, metrics);
  if (options_.host_checks) AddHostFindingMetrics(host_findings_, host_checks_up_, node, metrics);
  // Counted in the scrape that read them, not again until the next read.
  if (sriov_read) result.errors.insert(result.errors.end(), sriov_errors_.begin(), sriov_errors_.end());

  // Errors: a gauge for this scrape (by source, reason, device) and a running total.
  std::map<std::tuple<std::string, std::string, std::string>, int> grouped;
  for (const ReadError& e : result.errors) {
    std::string device = sys::infiniband::DeviceOfPath(e.path);
    grouped[{e.source, e.reason, device}]++;
    if (warned_paths_.size() < kMaxWarnedPaths && warned_paths_.insert(e.path).second) {
      LOG_WARN("exporter", "skipped ({}): {}", e.reason, e.message);
    } else {
      LOG_DEBUG("exporter", "skipped ({}): {}", e.reason, e.message);
    }
  }
  auto& errors_family = metrics.Family("fabcheck_exporter_read_errors",
                                       "Files or sources that could not be read in the last scrape and were skipped "
                                       "(reason: vanished, unreadable, garbage).",
                                       kGauge);
  for (const auto& [key, count] : grouped) {
    const auto& [source, reason, device] = key;
    Labels l = {{"node", options_.node_name}, {"source", source}, {"reason", reason}};
    if (!device.empty()) l.emplace_back("device", device);
    errors_family.samples.push_back({std::move(l), static_cast<double>(count)});
  }
  ++scrapes_total_;
  read_errors_total_ += static_cast<double>(result.errors.size());
  metrics.Add("fabcheck_exporter_scrapes_total", "Collections run since the exporter started.", kCounter, node,
              scrapes_total_);
  metrics.Add("fabcheck_exporter_read_errors_total", "Read errors skipped since the exporter started.", kCounter,
              node, read_errors_total_);
  if (inventory_loader_) {
    metrics.Add("fabcheck_exporter_inventory_up",
                "1 when the last inventory read (labels: PCI address, netdev, GPU affinity) succeeded.", kGauge, node,
                inventory_error_.empty() && have_topology_ ? 1 : 0);
  }
  if (!options_.kubelet_socket.empty()) {
    metrics.Add("fabcheck_exporter_pod_resources_up",
                "1 when the last kubelet PodResources List call succeeded (pod labels are current).", kGauge, node,
                pod_error_.empty() && pods_ ? 1 : 0);
    if (allocatable_supported_) {
      metrics.Add("fabcheck_exporter_pod_resources_allocatable_supported",
                  "1 when the kubelet answers PodResources GetAllocatableResources, 0 when it lacks the call "
                  "(before 1.23, or its feature gate off): then only allocated counts are exported.",
                  kGauge, node, *allocatable_supported_ ? 1 : 0);
    }
    if (allocatable_supported_ != false) {
      metrics.Add("fabcheck_exporter_pod_resources_allocatable_up",
                  "1 when the last List and GetAllocatableResources calls both succeeded (allocatable and "
                  "unallocated counts are current).",
                  kGauge, node, held_ && allocatable_ ? 1 : 0);
    }
  }
  metrics.Add("fabcheck_exporter_build_info", "The fabcheck version serving these metrics.", kGauge,
              {{"node", options_.node_name}, {"version", std::string(kVersion)}, {"sysroot", root_.Describe()}}, 1);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  metrics.Add("fabcheck_exporter_scrape_duration_seconds", "Time the last collection took.", kGauge, node, seconds);
  return metrics;
}

const std::string* ScrapeOutput::Gzip() const {
  std::call_once(gzip_once_, [this] {
    auto compressed = GzipCompress(text_);
    if (compressed.ok()) {
      gzip_ = std::move(*compressed);
      gzip_ok_ = true;
    } else {
      LOG_WARN("exporter", "{} (serving this scrape uncompressed)", compressed.status().message());
    }
  });
  return gzip_ok_ ? &gzip_ : nullptr;
}

std::shared_ptr<const ScrapeOutput> ExporterService::Scrape(std::string* error) {
  std::unique_lock lock(flight_mutex_);
  if (!collect_thread_.joinable()) {
    Status started = base::StartThread("the exporter's collector", collect_thread_, [this] { CollectLoop(); });
    if (!started.ok()) {
      LOG_WARN("exporter", "{}", started.message());
      if (error) *error = started.message();
      return nullptr;  // the next scrape tries again
    }
  }
  uint64_t waiting_for = generation_;
  if (!in_flight_) {
    in_flight_ = true;
    flight_wanted_.notify_one();
  }
  flight_done_.wait(lock, [&] { return generation_ != waiting_for || stopping_; });
  if (!last_) return std::make_shared<const ScrapeOutput>(std::string());
  return last_;
}

void ExporterService::CollectLoop() {
  std::unique_lock lock(flight_mutex_);
  while (true) {
    flight_wanted_.wait(lock, [&] { return in_flight_ || stopping_; });
    if (stopping_) return;
    lock.unlock();
    auto output = std::make_shared<const ScrapeOutput>(RenderPrometheusText(Collect()));
    // Scrapers (Prometheus) ask for gzip: compress here, once, before they wake.
    output->Gzip();
    lock.lock();
    last_ = std::move(output);
    in_flight_ = false;
    ++generation_;
    flight_done_.notify_all();
  }
}

}  // namespace fabcheck::telemetry
