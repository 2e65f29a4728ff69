#include "agent/node_service.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "base/base64.h"
#include "base/log.h"
#include "base/strings.h"
#include "base/temp_dir.h"
#include "checks/dcb.h"
#include "checks/runner.h"
#include "dl/cuda.h"
#include "dl/nccl.h"
#include "inventory/inventory.h"
#include "inventory/snapshot.h"
#include "agent/coll_service.h"
#include "telemetry/ethtool_stats.h"
#include "telemetry/port_reader.h"
#include "sys/infiniband.h"
#include "sys/net_class.h"
#include "sys/procfs.h"

namespace fabcheck::agent {
namespace {

namespace fs = std::filesystem;

std::string JoinSet(const std::set<std::string>& values) {
  return Join(std::vector<std::string>(values.begin(), values.end()), ",");
}

// Settings of the node the inventory does not carry (NodeService's comment).
nlohmann::json Facts(const sys::SysRoot& root, const model::Inventory& inv) {
  std::set<std::string> pfc, trust, drivers;
  for (const auto& dev : inv.rdma_devices) {
    for (const auto& port : dev.ports) {
      if (port.link_layer != "Ethernet" || port.netdev.empty()) continue;
      auto dcb = checks::ReadDcb(root, port.netdev);
      if (dcb.ok()) {
        pfc.insert(port.netdev + "=" + dcb->PfcPriorities());
        trust.insert(dcb->Trust());
      }
    }
  }
  for (const auto& nic : inv.nics) {
    if (nic.pci.driver.empty() || nic.rdma_devices.empty()) continue;
    auto version = root.ReadAttribute(sys::procfs::ModuleDir(nic.pci.driver) + "/version");
    drivers.insert(version.ok() ? nic.pci.driver + " " + *version : nic.pci.driver);
  }
  // PFC per netdev differs by name between nodes; compare the priorities alone.
  std::set<std::string> pfc_values;
  for (const auto& p : pfc) pfc_values.insert(p.substr(p.find('=') + 1));
  return {{"pfc_priorities", JoinSet(pfc_values)}, {"trust_mode", JoinSet(trust)}, {"driver", JoinSet(drivers)}};
}

// {"nccl_version", "cuda_version", "errors"}: "" where the library is absent.
nlohmann::json LibraryVersions(bool query, bool gpus) {
  nlohmann::json out = {{"nccl_version", ""}, {"cuda_version", ""}, {"errors", nlohmann::json::array()}};
  if (!query) return out;
  auto nccl = dl::LoadNccl();
  if (nccl.ok()) {
    out["nccl_version"] = dl::NcclVersionString((*nccl)->version);
  } else {
    out["errors"].push_back("NCCL: " + nccl.status().message());
  }
  if (gpus) {  // loading CUDA on a CPU node only tells us it is missing
    auto cuda = dl::LoadCuda();
    if (cuda.ok()) {
      out["cuda_version"] = dl::CudaVersionString((*cuda)->runtime_version);
    } else {
      out["errors"].push_back("CUDA: " + cuda.status().message());
    }
  }
  return out;
}

Result<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return ErrnoError(errno, "cannot read " + path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

Result<std::shared_ptr<NodeService>> NodeService::Create(NodeServiceOptions options) {
  sys::SysRoot root = sys::SysRoot::Live();
  if (!options.sysroot.empty()) {
    ASSIGN_OR_RETURN(root, sys::SysRoot::Open(options.sysroot));
  }
  std::shared_ptr<NodeService> service(new NodeService(std::move(options), std::move(root)));
  const bool query = service->options_.query_libraries && service->root_.live();
  const bool gpus = query && !inventory::ReadInventory(service->root_, {/*query_libraries=*/false}).gpus.empty();
  service->libraries_ = std::async(std::launch::async, [query, gpus] { return LibraryVersions(query, gpus); }).share();
  return service;
}

Result<nlohmann::json> NodeService::Inventory() const {
  inventory::ReadOptions ro;
  ro.query_libraries = options_.query_libraries;
  return nlohmann::json(inventory::ReadInventory(root_, ro));
}

Result<nlohmann::json> NodeService::Node(const nlohmann::json& request) const {
  if (!request.is_object()) return InvalidArgumentError("/v1/node: the request is not a JSON object");
  std::string profile_yaml, profile_name = "profile.yaml", expect_transport;
  bool snapshot = true;
  try {
    profile_yaml = request.value("profile_yaml", "");
    profile_name = request.value("profile_name", profile_name);
    snapshot = request.value("snapshot", true);
    expect_transport = request.value("expect_transport", "");
    if (expect_transport != "" && expect_transport != "rdma" && expect_transport != "tcp") {
      return InvalidArgumentError("/v1/node: expect_transport must be \"rdma\" or \"tcp\", not \"" + expect_transport + "\"");
    }
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgumentError(fmt::format("/v1/node: {}", e.what()));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<TempDir> temp_dir, TempDir::Create("fabcheck-node"));
  const TempDir& temp = *temp_dir;
  nlohmann::json out;
  std::vector<std::string> errors;

  inventory::ReadOptions ro;
  ro.query_libraries = options_.query_libraries;
  model::Inventory inv = inventory::ReadInventory(root_, ro);
  out["inventory"] = inv;

  checks::DoctorOptions doctor;
  doctor.root = &root_;  // a capture is unpacked once, when the agent starts
  doctor.inventory = &inv;  // read once for both answers
  doctor.query_libraries = options_.query_libraries;
  doctor.expect_transport = expect_transport;
  if (!profile_yaml.empty()) {
    // The coordinator sends the profile's text: agents do not share its files.
    std::string name = fs::path(profile_name).filename().string();
    if (name.empty() || name == "." || name == "..") name = "profile.yaml";
    doctor.profile = temp.path() + "/" + name;
    std::ofstream(doctor.profile) << profile_yaml;
  }
  auto report = checks::RunDoctor(doctor, options_.fabcheck_version);
  if (!report.ok()) {
    // A bad profile is the coordinator's input: say so, it must not read as a node fault.
    if (report.status().code() == StatusCode::kInvalidArgument) return report.status();
    errors.push_back("doctor: " + report.status().message());
    out["doctor"] = nullptr;
  } else {
    out["doctor"] = *report;
  }
  nlohmann::json facts = Facts(root_, inv);
  // Bounded: a library whose loading hangs must not hang the ladder.
  if (libraries_.valid() && libraries_.wait_for(std::chrono::seconds(30)) == std::future_status::ready) {
    const nlohmann::json& libs = libraries_.get();
    facts["nccl_version"] = libs["nccl_version"];
    facts["cuda_version"] = libs["cuda_version"];
    for (const auto& e : libs["errors"]) errors.push_back(e.get<std::string>());
  } else {
    facts["nccl_version"] = "";
    facts["cuda_version"] = "";
    errors.push_back("NCCL/CUDA: still loading after 30 s; versions unknown");
  }
  out["facts"] = facts;

  out["snapshot_b64"] = "";
  if (snapshot) {
    Result<std::string> bytes = UnavailableError("no snapshot");
    if (root_.kind() == sys::SysRoot::Kind::kCapture) {
      bytes = ReadWholeFile(options_.sysroot);  // the node is a capture: that capture is its snapshot
    } else {
      // A fresh root: recording must not leak into the service's own root.
      auto snap_root = options_.sysroot.empty() ? Result<sys::SysRoot>(sys::SysRoot::Live())
                                                : sys::SysRoot::Open(options_.sysroot);
      const std::string file = temp.path() + "/snapshot.tar.gz";
      Status s = snap_root.ok() ? inventory::TakeSnapshot(*snap_root, file, options_.fabcheck_version).status()
                                : snap_root.status();
      bytes = s.ok() ? ReadWholeFile(file) : Result<std::string>(s);
    }
    if (bytes.ok()) {
      out["snapshot_b64"] = Base64Encode(*bytes);
    } else {
      errors.push_back("snapshot: " + bytes.status().message());
    }
  }
  out["errors"] = errors;
  return out;
}

model::CounterSample SampleCounters(const sys::SysRoot& root) {
  model::CounterSample sample;
  sample.time_unix = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  std::set<std::string> roce_netdevs;
  auto devices = sys::infiniband::ListDevices(root);
  for (const auto& dev : devices.ok() ? *devices : std::vector<std::string>{}) {
    auto ports = telemetry::ListPorts(root, dev);
    for (int port : ports.ok() ? *ports : std::vector<int>{}) {
      telemetry::PortReading r = telemetry::ReadPort(root, dev, port);
      std::map<std::string, uint64_t> values;
      for (const auto& c : r.counters) values[c.file] = c.value;
      for (const auto& c : r.hw_counters) values["hw_counters/" + c.file] = c.value;
      if (!values.empty()) sample.values[fmt::format("{}/{}", dev, port)] = std::move(values);
      if (r.link_layer == "Ethernet") {
        for (std::string& name : sys::infiniband::PortGidNetdevs(root, dev, port)) roce_netdevs.insert(std::move(name));
      }
    }
  }
  auto netdevs = sys::net_class::ListInterfaces(root);
  for (const auto& nd : netdevs.ok() ? *netdevs : std::vector<std::string>{}) {
    if (nd == "lo") continue;
    auto values = sys::net_class::ReadStatistics(root, nd);
    if (values.ok() && !values->empty()) sample.values[nd] = std::move(*values);
  }
  // PFC pause counters of the RoCE netdevs (mlx5 per-priority names).
  std::unique_ptr<telemetry::EthtoolSource> ethtool;
  if (root.live()) {
    ethtool = std::make_unique<telemetry::LiveEthtoolSource>();
  } else {
    ethtool = std::make_unique<telemetry::SysrootEthtoolSource>(root);
  }
  for (const auto& nd : roce_netdevs) {
    auto stats = ethtool->Read(nd);
    if (!stats.ok()) continue;
    auto pfc = telemetry::ExtractPfcStats(*stats);
    auto& values = sample.values[nd];
    for (const auto& [name, value] : *stats) {
      bool per_prio = name.find("_prio") != std::string::npos;
      if (per_prio || pfc.global.count(name)) values[name] = value;
    }
  }
  return sample;
}

Result<nlohmann::json> NodeService::Counters(const nlohmann::json&) const { return nlohmann::json(SampleCounters(root_)); }

void NodeService::Wire(const std::shared_ptr<NodeService>& service, AgentConfig& config) {
  config.inventory = [service] { return service->Inventory(); };
  config.node = [service](const nlohmann::json& r) { return service->Node(r); };
  config.counters = [service](const nlohmann::json& r) { return service->Counters(r); };
  auto coll = std::make_shared<CollService>(service->options().coll_executable, CollAgentSide{config.bind, config.tls_files});
  config.coll = [coll](const nlohmann::json& r) { return coll->Run(r); };
}

}  // namespace fabcheck::agent
