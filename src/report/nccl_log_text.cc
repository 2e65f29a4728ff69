#include "report/nccl_log_text.h"

#include <fmt/format.h>

#include <map>

#include "base/strings.h"

namespace fabcheck::report {

using model::Severity;

std::string FormatNcclLogSummary(const model::NcclLogSummary& s) {
  std::string out;
  out += fmt::format("NCCL log: {} ({} lines, {} NCCL lines)\n", Join(s.files, ", "), s.lines_read, s.nccl_lines);
  out += fmt::format("  NCCL version: {}\n", s.nccl_versions.empty() ? "not printed" : Join(s.nccl_versions, ", "));
  // Big jobs: the first entries of each list here, everything in --json.
  std::string hosts = s.hosts.empty() ? "-" : "";
  for (size_t i = 0; i < s.hosts.size() && i < 32; ++i) hosts += (i ? ", " : "") + s.hosts[i];
  if (s.hosts.size() > 32) hosts += fmt::format(" and {} more", s.hosts.size() - 32);
  out += fmt::format("  hosts: {}   ranks: {}   nodes: {}\n", hosts, s.ranks,
                     s.nodes == 0 ? std::string("?") : std::to_string(s.nodes));
  for (const auto& [host, iface] : s.bootstrap) out += fmt::format("  bootstrap ({}): {}\n", host, iface);
  for (const auto& [host, net] : s.network) out += fmt::format("  network ({}): {}\n", host, net);
  size_t shown_devices = 0;
  for (const auto& d : s.net_devices) {
    if (++shown_devices > 64) {
      out += fmt::format("  ... {} more NICs and interfaces (--json lists them)\n", s.net_devices.size() - 64);
      break;
    }
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
    size_t shown = 0;
    for (const auto& c : s.connections) {
      if (++shown > 64) {
        out += fmt::format("    ... {} more connections (--json lists them)\n", s.connections.size() - 64);
        break;
      }
      std::vector<std::string> channels;
      for (int ch : c.channels) channels.push_back(std::to_string(ch));
      std::string net = c.net_device < 0 ? "" : fmt::format("/{}", c.net_device);
      if (c.proxy_rank >= 0) net += fmt::format("({})", c.proxy_rank);
      out += fmt::format("    {}: {}[{}] -> {}[{}] {}{}{}{}  channels {}\n", c.host, c.from_rank, c.from_device,
                         c.to_rank, c.to_device, c.direction.empty() ? "" : "[" + c.direction + "] ", c.transport, net,
                         c.detail, Join(channels, ","));
    }
  }
  std::map<std::string, int> events;
  for (const auto& e : s.events) {
    if (e.kind != "channel-socket" && e.kind != "channel-no-gdr" && e.kind != "hca-gdr-off") events[e.kind] += e.count;
  }
  if (!events.empty()) {
    std::string list;
    for (const auto& [kind, n] : events) list += fmt::format("{}{} x{}", list.empty() ? "" : ", ", kind, n);
    out += "  events: " + list + "\n";
  }
  if (s.unattributed_lines > 0 || s.binary_lines > 0 || s.lines_cut > 0) {
    out += fmt::format("  odd lines: {} without a readable host prefix, {} with binary bytes, {} cut (too long)\n",
                       s.unattributed_lines, s.binary_lines, s.lines_cut);
  }
  return out;
}

std::string FormatFindingLines(const model::Finding& f) {
  std::string out = fmt::format("  [{}] {}: {}\n", model::SeverityName(f.severity), f.id, f.message);
  for (const auto& e : f.evidence) out += fmt::format("      {}\n", e);
  if (!f.remedy.empty() && f.severity != Severity::kPass) out += fmt::format("      fix: {}\n", f.remedy);
  return out;
}

std::string FormatNcclFindings(const std::vector<model::Finding>& findings) {
  std::string out = "verdicts:\n";
  for (const auto& f : findings) out += FormatFindingLines(f);
  return out;
}

}  // namespace fabcheck::report
