#include "diagnose/nccl_util.h"

#include <fmt/format.h>

#include "base/strings.h"

namespace fabcheck::diagnose {

std::vector<const model::NcclEvent*> EventsOf(const model::NcclLogSummary& log, std::string_view kind) {
  std::vector<const model::NcclEvent*> out;
  for (const auto& e : log.events) {
    if (e.kind == kind) out.push_back(&e);
  }
  return out;
}

std::string Cite(const model::NcclEvent& e) {
  std::string where = e.file.empty() ? "" : fmt::format("{}:{}: ", e.file, e.line);
  std::string who = e.host.empty() ? "" : e.host + ": ";
  std::string text = e.text.size() > 400 ? e.text.substr(0, 400) + "..." : e.text;
  return fmt::format("{}{}{}{}", where, who, text, e.count > 1 ? fmt::format(" (x{})", e.count) : "");
}

std::string Field(const model::NcclEvent& e, const std::string& name) {
  auto it = e.fields.find(name);
  return it == e.fields.end() ? "" : it->second;
}

bool NeedsNetwork(const model::NcclLogSummary& log) {
  if (log.nodes > 1) return true;
  for (const auto& c : log.connections) {
    if (StartsWith(c.transport, "NET/")) return true;
  }
  return false;
}

NetworkNeed NetworkNeedOf(const model::NcclLogSummary& log) {
  if (NeedsNetwork(log)) return NetworkNeed::kNeeded;
  if (log.nodes == 1) return NetworkNeed::kNotNeeded;
  if (log.nodes == 0 && !log.connections.empty() && log.hosts.size() <= 1) return NetworkNeed::kNotNeeded;
  return NetworkNeed::kUnknown;
}

std::string BootstrapAddress(const model::NcclLogSummary& log, const std::string& host) {
  auto it = log.bootstrap.find(host);
  if (it == log.bootstrap.end()) return "";
  std::string v = it->second;  // "eth0:10.0.0.5<0>"
  size_t colon = v.find(':');
  if (colon == std::string::npos) return "";
  v = v.substr(colon + 1);
  return v.substr(0, v.find('<'));
}

std::string BootstrapInterface(const model::NcclLogSummary& log, const std::string& host) {
  auto it = log.bootstrap.find(host);
  if (it == log.bootstrap.end()) return "";
  return it->second.substr(0, it->second.find(':'));
}

std::string HostList(const std::vector<std::string>& hosts, size_t max) {
  if (hosts.size() <= max) return Join(hosts, ", ");
  std::vector<std::string> first(hosts.begin(), hosts.begin() + static_cast<long>(max));
  return fmt::format("{} and {} more", Join(first, ", "), hosts.size() - max);
}

}  // namespace fabcheck::diagnose
