// Plain verdicts over what NCCL's log says it used. Rule IDs are stable:
//   nccl.net.socket        fail  inter-node traffic used sockets
//   nccl.env.ib-disable    warn  NCCL_IB_DISABLE was set
//   nccl.env.p2p-disable   warn  NCCL_P2P_DISABLE was set
//   nccl.net.ib-no-device  warn  NET/IB found no device
//   nccl.gdr.disabled      warn  GPUDirect disabled for GPU X / NIC Y (distance PHB > PXB)
//   nccl.gdr.hca-disabled  warn  NCCL found no GPUDirect support for an HCA (no peermem / dma-buf)
//   nccl.gdr.not-used      warn  NET/IB channels without /GDRDMA
//   nccl.version.mismatch  warn  several NCCL versions in one job
//   nccl.warn              warn  NCCL printed WARN lines
//   nccl.log.no-transport  unknown  no channel lines (logging too low)
//   nccl.log.incomplete    info  no "Init COMPLETE" (truncated, or the job hung)
//   nccl.transport         pass/info  which transports carried the channels
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "base/strings.h"
#include "coll/nccl_log.h"

namespace fabcheck::coll {
namespace {

using model::Finding;
using model::Severity;

Finding Make(std::string id, Severity severity, std::string object, std::string message, std::string remedy) {
  Finding f;
  f.id = std::move(id);
  f.severity = severity;
  f.group = "NCCL";
  f.object = std::move(object);
  f.message = std::move(message);
  f.remedy = std::move(remedy);
  return f;
}

bool EnvIsOne(const model::NcclLogSummary& s, const std::string& name) {
  auto it = s.env.find(name);
  return it != s.env.end() && Trim(it->second) == "1";
}

}  // namespace

std::vector<Finding> NcclLogVerdicts(const model::NcclLogSummary& s, bool ib_no_device,
                                     const std::vector<std::string>& hca_gdr_off) {
  std::vector<Finding> out;
  const std::string files = Join(s.files, ", ");

  // Socket channels: the silent fallback nobody else reports.
  std::set<std::string> socket_hosts;
  int socket_channels = 0;
  for (const auto& c : s.connections) {
    if (c.transport == "NET/Socket") {
      socket_hosts.insert(c.host);
      socket_channels += static_cast<int>(c.channels.size());
    }
  }
  if (!socket_hosts.empty()) {
    auto f = Make("nccl.net.socket", Severity::kFail,
                  Join(std::vector<std::string>(socket_hosts.begin(), socket_hosts.end()), ", "),
                  fmt::format("inter-node traffic used sockets (NET/Socket on {} channel connections), not RDMA",
                              socket_channels),
                  "make NCCL use IB/RoCE: unset NCCL_IB_DISABLE, check NCCL_IB_HCA matches a device in ibv_devices, "
                  "that /dev/infiniband is visible (containers: the RDMA device plugin) and the NET/IB line lists "
                  "the NICs");
    for (const auto& [host, network] : s.network) f.evidence.push_back(fmt::format("{}: Using network {}", host, network));
    out.push_back(std::move(f));
  } else {
    for (const auto& [host, network] : s.network) {
      if (network == "Socket" && s.nodes > 1) {
        out.push_back(Make("nccl.net.socket", Severity::kFail, host,
                           "NCCL chose the Socket network on a multi-node job: inter-node traffic will use sockets",
                           "unset NCCL_IB_DISABLE and check that NET/IB finds the NICs (ibv_devices, NCCL_IB_HCA)"));
        break;
      }
    }
  }

  if (EnvIsOne(s, "NCCL_IB_DISABLE")) {
    out.push_back(Make("nccl.env.ib-disable", Severity::kWarn, "NCCL_IB_DISABLE",
                       "NCCL_IB_DISABLE was set: NCCL does not use InfiniBand/RoCE and falls back to sockets",
                       "unset NCCL_IB_DISABLE (check the job spec, the container image's environment and "
                       "/etc/nccl.conf)"));
    out.back().evidence.push_back("NCCL_IB_DISABLE set by environment to " + s.env.at("NCCL_IB_DISABLE"));
  }
  if (EnvIsOne(s, "NCCL_P2P_DISABLE")) {
    std::string used;
    for (const auto& [transport, count] : s.transport_channels) {
      if (!StartsWith(transport, "NET/")) used += fmt::format("{}{} ({} channels)", used.empty() ? "" : ", ", transport, count);
    }
    out.push_back(Make("nccl.env.p2p-disable", Severity::kWarn, "NCCL_P2P_DISABLE",
                       fmt::format("NCCL_P2P_DISABLE was set: GPUs of one node do not talk over NVLink/PCIe P2P{}",
                                   used.empty() ? "" : "; intra-node traffic used " + used),
                       "unset NCCL_P2P_DISABLE unless P2P is broken on this platform (then fix ACS/IOMMU settings)"));
  }
  if (ib_no_device) {
    // Without NET channels (one node) no traffic needed a NIC: worth knowing only.
    bool net_used = std::any_of(s.connections.begin(), s.connections.end(),
                                [](const auto& c) { return StartsWith(c.transport, "NET/"); });
    out.push_back(Make("nccl.net.ib-no-device", net_used || s.nodes > 1 ? Severity::kWarn : Severity::kInfo, "NET/IB",
                       "NCCL's IB transport found no device (NET/IB : No device found.)",
                       "check ibv_devices on the node (and inside the container), NCCL_IB_HCA, and that the RDMA "
                       "devices are passed to the job"));
  }
  for (const auto& g : s.gdr) {
    if (g.enabled) continue;
    std::string nic = g.hca_name.empty() ? "HCA " + g.hca : g.hca_name;
    auto f = Make("nccl.gdr.disabled", Severity::kWarn, fmt::format("{}: GPU {} / NIC {}", g.host, g.gpu, nic),
                  fmt::format("GPUDirect disabled for GPU {} / NIC {} (distance {} > {})", g.gpu, nic,
                              g.distance_name, g.limit_name),
                  fmt::format("place the GPU and NIC under one PCIe switch, or raise NCCL_NET_GDR_LEVEL to {} if "
                              "the platform supports peer-to-peer through that path",
                              g.distance_name));
    f.evidence.push_back(fmt::format("GPU Direct RDMA Disabled for GPU {} / HCA {} (distance {} > {})", g.gpu, g.hca,
                                     g.distance, g.limit));
    out.push_back(std::move(f));
  }
  for (const auto& line : hca_gdr_off) {
    auto f = Make("nccl.gdr.hca-disabled", Severity::kWarn, line.substr(0, line.find(':')),
                  "NCCL found no GPUDirect RDMA support for an HCA: traffic is staged through host memory",
                  "load nvidia-peermem (modprobe nvidia_peermem) or use a dma-buf capable kernel and driver "
                  "(open kernel modules)");
    f.evidence.push_back(line);
    out.push_back(std::move(f));
  }
  int ib_nogdr = 0, ib_gdr = 0;
  std::set<std::string> nogdr_hosts;
  for (const auto& c : s.connections) {
    if (!StartsWith(c.transport, "NET/") || c.transport == "NET/Socket") continue;
    if (c.gdr) {
      ib_gdr += static_cast<int>(c.channels.size());
    } else {
      ib_nogdr += static_cast<int>(c.channels.size());
      nogdr_hosts.insert(c.host);
    }
  }
  if (ib_nogdr > 0) {
    out.push_back(Make("nccl.gdr.not-used", Severity::kWarn,
                       Join(std::vector<std::string>(nogdr_hosts.begin(), nogdr_hosts.end()), ", "),
                       fmt::format("{} NET channel connections ran without GPUDirect RDMA (no /GDRDMA){}", ib_nogdr,
                                   ib_gdr > 0 ? fmt::format("; {} used it", ib_gdr) : ""),
                       "check nvidia-peermem or dma-buf support, NCCL_NET_GDR_LEVEL, and the GPU-NIC PCIe distance "
                       "(fabcheck inventory)"));
  }
  if (s.nccl_versions.size() > 1) {
    out.push_back(Make("nccl.version.mismatch", Severity::kWarn, "NCCL",
                       "several NCCL versions in one job: " + Join(s.nccl_versions, ", "),
                       "use one NCCL build on every node (the container image or the same libnccl2 package)"));
  }
  if (!s.warnings.empty()) {
    auto f = Make("nccl.warn", Severity::kWarn, "NCCL", fmt::format("NCCL printed {} WARN line(s)", s.warnings.size()),
                  "read the WARN lines: they name the failing call");
    f.evidence = s.warnings;
    out.push_back(std::move(f));
  }
  if (s.connections.empty()) {
    const bool single_rank = s.ranks == 1;
    out.push_back(Make("nccl.log.no-transport", single_rank ? Severity::kInfo : Severity::kUnknown, files,
                       s.nccl_lines == 0 ? "no NCCL INFO lines found in the log"
                       : single_rank     ? "one rank: NCCL opened no connections"
                                         : "the log has no channel lines, so the transports are unknown",
                       "rerun with NCCL_DEBUG=INFO (NCCL_DEBUG_SUBSYS=INIT,NET,ENV or unset) and "
                       "NCCL_DEBUG_FILE=/path/nccl.%h.%p.log, then pass those files"));
  } else {
    std::string used;
    for (const auto& [transport, count] : s.transport_channels) {
      used += fmt::format("{}{}: {} channel lines", used.empty() ? "" : "; ", transport, count);
    }
    bool only_fast = std::none_of(s.connections.begin(), s.connections.end(), [](const auto& c) {
      return c.transport == "NET/Socket" || c.transport == "SHM" || (StartsWith(c.transport, "NET/") && !c.gdr);
    });
    out.push_back(Make("nccl.transport", only_fast ? Severity::kPass : Severity::kInfo, files,
                       "NCCL used " + used, ""));
    if (!s.init_complete && s.nccl_lines > 0) {
      out.push_back(Make("nccl.log.incomplete", Severity::kInfo, files,
                         "no communicator reached \"Init COMPLETE\" in this log (truncated, or the job hung in init)",
                         "if the job hung, look at the last lines of each rank's log"));
    }
  }
  return out;
}

std::string FormatNcclLogSummary(const model::NcclLogSummary& s) {
  std::string out;
  out += fmt::format("NCCL log: {} ({} lines, {} NCCL lines)\n", Join(s.files, ", "), s.lines_read, s.nccl_lines);
  out += fmt::format("  NCCL version: {}\n", s.nccl_versions.empty() ? "not printed" : Join(s.nccl_versions, ", "));
  out += fmt::format("  hosts: {}   ranks: {}   nodes: {}\n", s.hosts.empty() ? "-" : Join(s.hosts, ", "), s.ranks,
                     s.nodes == 0 ? std::string("?") : std::to_string(s.nodes));
  for (const auto& [host, iface] : s.bootstrap) out += fmt::format("  bootstrap ({}): {}\n", host, iface);
  for (const auto& [host, net] : s.network) out += fmt::format("  network ({}): {}\n", host, net);
  for (const auto& d : s.net_devices) {
    if (d.kind == "IB") {
      out += fmt::format("  NET/IB device ({}): [{}] {}:{} {} {}\n", d.host, d.index, d.name, d.port, d.link_layer, d.address);
    } else {
      out += fmt::format("  NET/Socket interface ({}): [{}] {} {}\n", d.host, d.index, d.name, d.address);
    }
  }
  for (const auto& [name, value] : s.env) out += fmt::format("  env: {}={}\n", name, value);
  for (const auto& g : s.gdr) {
    out += fmt::format("  GPUDirect RDMA {} for GPU {} / {} (distance {} {} {})\n", g.enabled ? "enabled" : "DISABLED",
                       g.gpu, g.hca_name.empty() ? "HCA " + g.hca : g.hca_name, g.distance_name,
                       g.enabled ? "<=" : ">", g.limit_name);
  }
  if (!s.connections.empty()) {
    out += "  connections (host: rank -> rank  transport  channels):\n";
    for (const auto& c : s.connections) {
      std::vector<std::string> channels;
      for (int ch : c.channels) channels.push_back(std::to_string(ch));
      std::string net = c.net_device < 0 ? "" : fmt::format("/{}", c.net_device);
      if (c.proxy_rank >= 0) net += fmt::format("({})", c.proxy_rank);
      out += fmt::format("    {}: {}[{}] -> {}[{}] {}{}{}{}  channels {}\n", c.host, c.from_rank, c.from_device,
                         c.to_rank, c.to_device, c.direction.empty() ? "" : "[" + c.direction + "] ", c.transport, net,
                         c.detail, Join(channels, ","));
    }
  }
  out += "verdicts:\n";
  for (const auto& f : s.findings) {
    out += fmt::format("  [{}] {}: {}\n", model::SeverityName(f.severity), f.id, f.message);
    for (const auto& e : f.evidence) out += fmt::format("      {}\n", e);
    if (!f.remedy.empty() && f.severity != Severity::kPass) out += fmt::format("      fix: {}\n", f.remedy);
  }
  return out;
}

}  // namespace fabcheck::coll
