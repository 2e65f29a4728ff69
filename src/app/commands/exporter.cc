// `fabcheck exporter`: Prometheus metrics of the RDMA fabric of this node,
// correlated to pods. Parsing and wiring only; the work is in telemetry/.
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>

#include "app/command.h"
#include "app/tunables.h"
#include "base/exit_codes.h"
#include "base/json_text.h"
#include "base/log.h"
#include "base/malloc_arenas.h"
#include "base/strings.h"
#include "base/units.h"
#include "checks/profile.h"
#include "checks/registry.h"
#include "checks/runner.h"
#include "fabcheck/version.h"
#include "inventory/inventory.h"
#include "inventory/snapshot.h"
#include "sys/sriov.h"
#include "sys/sysroot.h"
#include "telemetry/ethtool_stats.h"
#include "telemetry/exporter_service.h"
#include "telemetry/http_server.h"
#include "telemetry/prometheus_text.h"
#include "sys/procfs.h"

namespace {

using namespace fabcheck;

constexpr const char* kDefaultKubeletSocket = "/var/lib/kubelet/pod-resources/kubelet.sock";

// Doctor's host checks that describe the node, not the caller: cpu.pinning
// judges the CPUs of the process that runs it, which for the exporter is the
// exporter's own pod, not the workload's.
constexpr std::string_view kDefaultHostChecks = "irq.affinity,cpu.frequency,mem.hugepages,pcie.devctl";

struct ExporterFlags {
  std::string listen = ":9877";
  std::string sysroot = "/";
  std::string kubelet_socket = "auto";
  std::string node_name;
  std::vector<std::string> shared_resources;
  std::string inventory_interval = "60s";
  std::string pod_interval = "10s";
  std::string ethtool = "auto";
  std::string host_checks = std::string(kDefaultHostChecks);
  std::string profile;
  fabcheck::net::TlsFiles tls;
  bool once = false;
  bool json = false;
};

// One scrape as JSON: the same families and samples as the Prometheus text.
nlohmann::json ScrapeJson(const telemetry::MetricSet& metrics, const std::string& node) {
  nlohmann::json families = nlohmann::json::array();
  for (const auto& family : metrics.families()) {
    nlohmann::json samples = nlohmann::json::array();
    for (const auto& sample : family->samples) {
      nlohmann::json labels = nlohmann::json::object();
      for (const auto& [k, v] : sample.labels) labels[k] = v;
      samples.push_back({{"labels", labels}, {"value", sample.value}});
    }
    families.push_back({{"name", family->name},
                        {"type", family->type == telemetry::MetricType::kCounter ? "counter" : "gauge"},
                        {"help", family->help},
                        {"samples", samples}});
  }
  return {{"schema", "fabcheck.exporter/v1"}, {"node", node}, {"families", families}};
}

std::string DefaultNodeName(const sys::SysRoot& root) {
  if (auto host = root.ReadAttribute(sys::procfs::kHostname); host.ok() && !host->empty()) return *host;
  char buffer[256] = {};
  if (::gethostname(buffer, sizeof(buffer) - 1) == 0 && buffer[0]) return buffer;
  return "unknown";
}

Result<std::chrono::milliseconds> Interval(const std::string& text, const char* flag) {
  auto seconds = ParseDurationSeconds(text);
  if (!seconds.ok() || *seconds < 0) {
    return InvalidArgumentError(std::string(flag) + " '" + text + "': expected a duration such as 30s or 2m");
  }
  return std::chrono::milliseconds(static_cast<int64_t>(*seconds * 1000));
}

// The exporter keeps every counter file of every port open (~65 per port,
// >1000 on a 16-NIC node), past the usual soft limit of 1024: raise it to the
// hard limit, as Go programs such as node_exporter do at start.
void RaiseFileLimit() {
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return;
  rlim_t want = limit.rlim_max == RLIM_INFINITY ? 65536 : std::min<rlim_t>(limit.rlim_max, 65536);
  if (limit.rlim_cur >= want) return;
  limit.rlim_cur = want;
  if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) {
    LOG_WARN("exporter", "cannot raise the open-file limit to {} (counters past it are opened per scrape)", want);
  }
}

int Run(const ExporterFlags& flags) {
  // Collections run on one thread (ExporterService); the HTTP workers only
  // need small allocations. Set before any thread starts.
  base::LimitMallocArenas();
  RaiseFileLimit();
  auto root = flags.sysroot == "/" ? Result<sys::SysRoot>(sys::SysRoot::Live()) : sys::SysRoot::Open(flags.sysroot);
  if (!root.ok()) {
    LOG_ERROR("exporter", "{}", root.status().message());
    return kExitError;
  }
  telemetry::ExporterOptions options;
  options.node_name = flags.node_name.empty() ? DefaultNodeName(*root) : flags.node_name;
  auto shared = telemetry::ParseSharedResources(flags.shared_resources);
  auto inventory_interval = Interval(flags.inventory_interval, "--inventory-interval");
  auto pod_interval = Interval(flags.pod_interval, "--pod-resources-interval");
  for (const Status& s : {shared.status(), inventory_interval.status(), pod_interval.status()}) {
    if (!s.ok()) {
      LOG_ERROR("exporter", "{}", s.message());
      return kExitUsage;
    }
  }
  options.shared_resources = *shared;
  options.inventory_interval = *inventory_interval;
  options.pod_interval = *pod_interval;
  if (flags.kubelet_socket == "auto") {
    // Present on a Kubernetes node (or mounted into the exporter's pod); absent elsewhere.
    if (root->live() && ::access(kDefaultKubeletSocket, F_OK) == 0) options.kubelet_socket = kDefaultKubeletSocket;
  } else if (flags.kubelet_socket != "none") {
    options.kubelet_socket = flags.kubelet_socket;
    if (::access(flags.kubelet_socket.c_str(), F_OK) != 0) {
      LOG_WARN("exporter",
               "kubelet socket {} does not exist (yet): pod labels stay off until it appears "
               "(mount hostPath /var/lib/kubelet/pod-resources into the pod)",
               flags.kubelet_socket);
    }
  }

  std::unique_ptr<telemetry::EthtoolSource> ethtool;
  std::string ethtool_mode = flags.ethtool == "auto" ? (root->live() ? "live" : "recorded") : flags.ethtool;
  if (ethtool_mode == "live") {
    // Also with --sysroot /host in a pod: the ioctl goes to this network namespace (hostNetwork: true).
    ethtool = std::make_unique<telemetry::LiveEthtoolSource>();
  } else if (ethtool_mode == "recorded") {
    ethtool = std::make_unique<telemetry::SysrootEthtoolSource>(*root);
  }
  // sysfs only: the exporter never loads libibverbs or NVML (small image, no GPU access needed).
  auto loader = [](const sys::SysRoot& r) -> Result<model::Inventory> {
    inventory::ReadOptions read_options;
    read_options.query_libraries = false;
    return inventory::ReadInventory(r, read_options);
  };
  if (flags.host_checks != "none") {
    if (!flags.profile.empty()) {
      if (auto profile = checks::LoadProfile(flags.profile); !profile.ok()) {
        LOG_ERROR("exporter", "{}", profile.status().message());
        // A profile that says something wrong is the user's to fix; one that cannot be read could not run.
        return profile.status().code() == StatusCode::kInvalidArgument ? kExitUsage : kExitError;
      }
    }
    std::vector<std::string> only = Split(flags.host_checks, ',', /*skip_empty=*/true);
    if (auto selected = checks::SelectChecks(only); !selected.ok()) {
      LOG_ERROR("exporter", "--host-checks: {}", selected.status().message());
      return kExitUsage;
    }
    options.host_checks_interval = options.inventory_interval;
    options.host_checks = [only, profile = flags.profile](const sys::SysRoot& r)
        -> Result<std::vector<model::Finding>> {
      checks::DoctorOptions doctor;
      doctor.root = &r;
      doctor.only = only;
      doctor.profile = profile;
      doctor.use_process_env = false;  // the NCCL settings of the exporter's process judge nothing
      doctor.query_libraries = false;
      ASSIGN_OR_RETURN(model::DoctorReport report, checks::RunDoctor(doctor, std::string(kVersion)));
      return std::move(report.findings);
    };
  }
  telemetry::ExporterService service(*root, options, loader, std::move(ethtool));

  if (flags.once) {
    if (flags.json) {
      std::cout << ToJsonText(ScrapeJson(service.Collect(), options.node_name), 2) << "\n";
    } else {
      std::cout << telemetry::RenderPrometheusText(service.Collect());
    }
    return kExitOk;
  }
  auto address = telemetry::ParseListenAddress(flags.listen);
  if (!address.ok()) {
    LOG_ERROR("exporter", "{}", address.status().message());
    return kExitUsage;
  }

  // Signals are taken by sigwait on this thread, so the server threads never run a handler.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  std::shared_ptr<const net::TlsContext> tls;
  if (flags.tls.enabled()) {
    auto context = net::TlsContext::ForServer(flags.tls);
    if (!context.ok()) {
      LOG_ERROR("exporter", "{}", context.status().message());
      return kExitUsage;
    }
    tls = *context;
  }
  telemetry::HttpServer server(service);
  if (Status s = server.Start(*address, tls); !s.ok()) {
    LOG_ERROR("exporter", "{}", s.message());
    return kExitError;
  }
  if (flags.json) {
    // One line when serving, as perf serve and agent print with --json.
    std::cout << ToJsonText({{"schema", "fabcheck.exporter/v1"},
                             {"node", options.node_name},
                             {"serving", fmt::format("{}://{}:{}/metrics", tls ? "https" : "http", address->host,
                                                     server.port())},
                             {"port", server.port()}})
              << std::endl;
  }
  LOG_WARN("exporter", "node {}: serving {}://{}:{}/metrics from the {} (pod labels: {})", options.node_name,
           tls ? "https" : "http", address->host, server.port(), root->Describe(),
           options.kubelet_socket.empty() ? "off" : options.kubelet_socket);
  int signal_number = 0;
  sigwait(&signals, &signal_number);
  LOG_INFO("exporter", "signal {}: stopping", signal_number);
  server.Stop();
  return kExitOk;
}

fabcheck::app::RunFn Setup(CLI::App& root) {
  auto* cmd = root.add_subcommand(
      "exporter",
      "Serve Prometheus metrics of this node's RDMA fabric (ports, counters, PFC, pods)");
  auto flags = std::make_shared<ExporterFlags>();
  fabcheck::app::Tunables t(cmd, "exporter");
  t.Text("--listen", flags->listen, "Address to serve /metrics and /healthz on (ADDR:PORT, :PORT, [IPv6]:PORT)",
         "address");
  t.Path("--sysroot", flags->sysroot,
         "Read this sysroot instead of the node: a directory with sys/ or a `fabcheck snapshot` capture");
  t.Text("--kubelet-socket", flags->kubelet_socket,
         "Kubelet PodResources socket for pod/namespace/container labels; 'auto' uses "
         "/var/lib/kubelet/pod-resources/kubelet.sock when present, 'none' turns pod labels off",
         "path|auto|none");
  t.Text("--node-name", flags->node_name, "Value of the node label (default: $NODE_NAME, else the sysroot's hostname)",
         "name", "NODE_NAME");
  t.List("--rdma-shared-resource", flags->shared_resources,
         "RESOURCE=DEV[,DEV...]: RDMA devices behind a shared-device-plugin resource, whose kubelet "
         "device IDs are synthetic (repeatable)",
         "RESOURCE=DEV,...");
  t.Text("--inventory-interval", flags->inventory_interval,
         "How often to re-read the labels (PCI address, netdev, GPU affinity); a device appearing or "
         "vanishing re-reads them at once",
         "duration");
  t.Text("--pod-resources-interval", flags->pod_interval,
         "How often to ask the kubelet which pod holds which device and what each resource offers, and to "
         "re-read the SR-IOV VFs",
         "duration");
  t.Text("--ethtool", flags->ethtool,
         "Driver statistics (PFC pause, discards): live = SIOCETHTOOL in this network namespace, "
         "recorded = <sysroot>/fabcheck/ethtool/<if>.txt (`ethtool -S` output), off; auto = live on the "
         "node, recorded for a --sysroot",
         "auto|live|recorded|off")
      ->check(CLI::IsMember({"auto", "live", "recorded", "off"}));
  t.Text("--host-checks", flags->host_checks,
         "Doctor checks whose findings are exported as fabcheck_host_finding (comma-separated IDs or "
         "rungs, run on the --inventory-interval schedule); 'none' turns them off",
         "check list|none");
  t.Path("--profile", flags->profile,
         "Profile YAML the host checks judge against (HugePages, PCIe read size: see docs/profiles.md); "
         "without one only what is wrong on any node is a warning");
  t.Tls(flags->tls, fabcheck::app::Tunables::TlsRole::kServer);
  t.Flag("--once", flags->once, "Print one scrape to stdout and exit (for checks and captures)");
  t.Flag("--json", flags->json,
         "With --once: the scrape as JSON (schema fabcheck.exporter/v1: families with their samples); serving:\n"
         "one JSON line on stdout once it listens; errors as fabcheck.error/v1");
  cmd->footer(
      "Metrics are named fabcheck_rdma_port_* (counters/), fabcheck_rdma_port_ext_* (counters_ext/, the 64-bit "
      "counters of kernels before 4.5), fabcheck_rdma_hw_* (hw_counters/), fabcheck_netdev_* (netdev, PFC), "
      "fabcheck_sriov_* (SR-IOV PFs and VFs), fabcheck_k8s_* (allocatable, allocated and unallocated devices per "
      "kubelet resource, from PodResources GetAllocatableResources and List) and fabcheck_exporter_* (the exporter "
      "itself); see docs/exporter.md.\n"
      "/metrics is gzip-compressed when the scraper accepts it (Prometheus does), once per collection.\n\n"
      "Examples:\n"
      "  fabcheck exporter                                  # serve on :9877 from this node\n"
      "  fabcheck exporter --listen 127.0.0.1:9877 --ethtool off\n"
      "  fabcheck exporter --sysroot /host --ethtool live   # in a pod with hostNetwork and /sys at /host/sys\n"
      "  fabcheck exporter --sysroot node07.tar.gz --once   # one scrape of a capture, to stdout\n"
      "  fabcheck exporter --rdma-shared-resource rdma/rdma_shared_device_a=mlx5_0,mlx5_1\n"
      "  curl -s localhost:9877/metrics | grep fabcheck_rdma_port_up");
  return [flags] { return Run(*flags); };
}

const bool kRegistered = fabcheck::app::RegisterCommand({"exporter", 900, &Setup});

// Snapshots carry the SR-IOV files the exporter reads (sriov_totalvfs,
// sriov_numvfs, every virtfn link and its VF's driver, net/ and infiniband/),
// so `exporter --sysroot capture` shows the same PFs and VFs.
const bool kSnapshotRegistered =
    fabcheck::inventory::RegisterSnapshotReader("sriov", [](const fabcheck::sys::SysRoot& root) {
      for (const std::string& pf : fabcheck::sys::sriov::ListPhysicalFunctions(root)) {
        (void)fabcheck::sys::sriov::ReadPhysicalFunction(root, pf);
      }
    });

}  // namespace
