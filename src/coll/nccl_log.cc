#include "coll/nccl_log.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <exception>
#include <regex>
#include <set>
#include <sstream>

#include "base/input.h"
#include "base/strings.h"

namespace fabcheck::coll {
namespace {

// A whole job's NCCL_DEBUG=INFO output is tens of MiB; /dev/zero is not a log.
constexpr uint64_t kMaxLogBytes = 256ull << 20;

// The path-type tables of NCCL's src/graph/topo.h, by version.
const std::vector<std::string> kPathsUpTo225 = {"LOC", "NVL", "NVB", "PIX", "PXB", "PXN", "PHB", "SYS", "NET", "DIS"};
const std::vector<std::string> kPaths226 = {"LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "PXN", "PHB", "SYS", "NET", "DIS"};
const std::vector<std::string> kPaths227 = {"LOC", "NVL", "NVB", "C2C", "PIX", "PXB",
                                            "PXN", "P2C", "PHB", "SYS", "NET", "DIS"};
const std::vector<std::string> kPaths228 = {"LOC", "NVL", "NVB", "C2C", "PIX", "PXB",
                                            "P2C", "PXN", "PHB", "SYS", "NET", "DIS"};

// The prefix NCCL puts before INFO and WARN ("host:pid:tid [dev] "); launcher
// prefixes and timestamps before it are ignored.
const std::regex kPrefix(R"(([A-Za-z0-9_.\-]+):(\d+):(\d+) \[(\d+)\] )");
const std::regex kVersion(R"(^NCCL version (\S+))");
const std::regex kBootstrap(R"(^Bootstrap ?: Using +(?:\[\d+\])?(\S+))");
const std::regex kNetIb(R"(^NET/IB ?: Using(.*); OOB (\S+))");
const std::regex kIbDevice(R"(\[(\d+)\] ?([A-Za-z0-9_.\-]+):(\d+)[^/\s,}]*/(IB|RoCE))");
const std::regex kNetSocket(R"(^NET/Socket ?: Using( \[.*))");
const std::regex kSocketDevice(R"(\[(\d+)\]([^:\s]+):(\S+))");
const std::regex kNetwork(R"(^Using network (\S+))");
const std::regex kEnv(R"(^(NCCL_[A-Z0-9_]+) set (?:by environment )?to (.*?)\.?$)");
const std::regex kGdr(R"(^GPU Direct RDMA (Enabled|Disabled) for GPU (\S+) / HCA (\S+) \(distance (\d+) (?:<=|>) (\d+)\))");
const std::regex kHcaGdr(R"(^NET/(\S+) : GPU Direct RDMA (Enabled|Disabled) for HCA (\d+) '([^']*)')");
const std::regex kChannel(
    R"(^Channel (\d+)(?:/(\d+))? : (\d+)\[([0-9a-fA-F]+)\] -> (\d+)\[([0-9a-fA-F]+)\] (?:\[(send|receive)\] )?via (\S.*)$)");
const std::regex kNetVia(R"(^NET/([^/]+)/(\d+)(?:\((\d+)\))?(.*)$)");
const std::regex kInit(
    R"(comm (?:0x[0-9a-fA-F]+|\(nil\)) rank (\d+) nranks (\d+) cudaDev (\d+)(?: nvmlDev (\d+))? busId ([0-9a-fA-F]+).*Init (START|COMPLETE))");
const std::regex kGraph(
    R"(^Pattern (\d+), crossNic \d+, nChannels (\d+), bw ([0-9.]+)/([0-9.]+), type ([A-Z0-9]+)/([A-Z0-9]+))");
const std::regex kNodes(R"(comm \S+ rank \d+ nRanks (\d+) nNodes (\d+))");

constexpr size_t kMaxWarnings = 20;

// std::stoi throws on overflow; a log line must never end the program.
int ToInt(const std::string& text) {
  auto value = ParseInt(text);
  if (!value || *value > 1'000'000'000 || *value < -1'000'000'000) return -1;
  return static_cast<int>(*value);
}
constexpr size_t kMaxEvidence = 3;

// Splits a P2P/SHM/other "via" tail into transport and detail.
void SplitVia(const std::string& via, model::NcclConnection* c) {
  std::smatch m;
  if (std::regex_match(via, m, kNetVia)) {
    c->transport = "NET/" + m[1].str();
    c->net_device = ToInt(m[2].str());
    if (m[3].matched) c->proxy_rank = ToInt(m[3].str());
    c->detail = m[4].str();
    c->gdr = c->detail.find("/GDRDMA") != std::string::npos;
    return;
  }
  for (const char* fixed : {"P2P/direct pointer", "P2P/indirect"}) {
    if (StartsWith(via, fixed)) {
      c->transport = fixed;
      c->detail = via.substr(std::string_view(fixed).size());
      return;
    }
  }
  size_t first = via.find('/');
  if (StartsWith(via, "P2P/") && first != std::string::npos) {
    size_t second = via.find('/', first + 1);
    c->transport = via.substr(0, second);
    c->detail = second == std::string::npos ? "" : via.substr(second);
    return;
  }
  c->transport = first == std::string::npos ? via : via.substr(0, first);
  c->detail = first == std::string::npos ? "" : via.substr(first);
}

}  // namespace

std::string NcclPathTypeName(int distance, int version) {
  const std::vector<std::string>* table = &kPaths228;
  if (version > 0 && version < 22600) {
    table = &kPathsUpTo225;
  } else if (version >= 22600 && version < 22700) {
    table = &kPaths226;
  } else if (version >= 22700 && version < 22800) {
    table = &kPaths227;
  }
  if (distance < 0 || distance >= static_cast<int>(table->size())) return fmt::format("PATH{}", distance);
  return (*table)[distance];
}

int NcclVersionCode(std::string_view text) {
  // "2.28.3+cuda13.0" or "2.18.5-1+cuda12.2" or "2.28.3".
  std::string s(text.substr(0, text.find_first_of("+-")));
  auto parts = Split(s, '.');
  if (parts.size() != 3) return 0;
  auto major = ParseInt(parts[0]), minor = ParseInt(parts[1]), patch = ParseInt(parts[2]);
  if (!major || !minor || !patch || *major != 2 || *minor > 99 || *patch > 99) return 0;
  return static_cast<int>(*major * 10000 + *minor * 100 + *patch);
}

void NcclLogParser::AddText(std::string_view text, std::string_view name) {
  summary_.files.emplace_back(name);
  int line_number = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    ++line_number;
    ++summary_.lines_read;
    // Bound the work per line: NCCL lines are short; a multi-megabyte line is
    // not NCCL's and would only slow the regexes.
    if (line.size() < 4096) {
      try {
        AddLine(line, name, line_number);
      } catch (const std::exception&) {
        // std::regex may throw on pathological input: skip that line.
      }
    }
    pos = end + 1;
  }
}

Status NcclLogParser::AddFile(const std::string& path) {
  auto text = ReadFileBounded(path, kMaxLogBytes);
  if (!text.ok()) {
    bool missing = text.status().code() == StatusCode::kNotFound || text.status().code() == StatusCode::kPermissionDenied;
    return Status(text.status().code(),
                  fmt::format("cannot read NCCL log: {}{}", text.status().message(),
                              missing ? " (give the file NCCL_DEBUG_FILE wrote, or the job's stdout/stderr saved "
                                        "with NCCL_DEBUG=INFO)"
                                      : ""));
  }
  AddText(*text, path);
  return Status::Ok();
}

void NcclLogParser::AddLine(std::string_view raw, std::string_view file, int line_number) {
  bool warn = false;
  size_t at = raw.find(" NCCL INFO ");
  if (at == std::string_view::npos) {
    at = raw.find(" NCCL WARN ");
    if (at == std::string_view::npos) return;
    warn = true;
  }
  std::string head(raw.substr(0, at + 1));
  std::string message(Trim(raw.substr(at + 11)));
  // The last "host:pid:tid [dev] " in the head; WARN adds "file:line " after it.
  std::string host, process;
  for (auto it = std::sregex_iterator(head.begin(), head.end(), kPrefix); it != std::sregex_iterator(); ++it) {
    host = (*it)[1].str();
    process = host + ":" + (*it)[2].str();
  }
  if (host.empty()) return;
  ++summary_.nccl_lines;
  if (std::find(summary_.hosts.begin(), summary_.hosts.end(), host) == summary_.hosts.end()) {
    summary_.hosts.push_back(host);
  }
  if (warn) {
    if (summary_.warnings.size() < kMaxWarnings) {
      summary_.warnings.push_back(fmt::format("{}:{}: {}: {}", file, line_number, host, message));
    }
    return;
  }
  std::smatch m;
  const std::string cite = fmt::format("{}:{}: {}", file, line_number, message);
  if (StartsWith(message, "Channel ")) {
    if (!std::regex_match(message, m, kChannel)) return;
    model::NcclConnection c;
    c.host = host;
    c.from_rank = ToInt(m[3].str());
    c.from_device = m[4].str();
    c.to_rank = ToInt(m[5].str());
    c.to_device = m[6].str();
    c.direction = m[7].matched ? m[7].str() : "";
    SplitVia(m[8].str(), &c);
    int channel = ToInt(m[1].str());
    // A line cut short ("via NET/I") or with numbers out of range is not evidence.
    if (channel < 0 || c.from_rank < 0 || c.to_rank < 0 || (StartsWith(m[8].str(), "NET/") && c.net_device < 0)) {
      return;
    }
    summary_.transport_channels[c.transport]++;
    if (c.transport == "NET/Socket" && evidence_socket_.size() < kMaxEvidence) evidence_socket_.push_back(cite);
    if (StartsWith(c.transport, "NET/") && c.transport != "NET/Socket" && !c.gdr &&
        evidence_ib_nogdr_.size() < kMaxEvidence) {
      evidence_ib_nogdr_.push_back(cite);
    }
    for (auto& existing : summary_.connections) {
      if (existing.host == c.host && existing.from_rank == c.from_rank && existing.to_rank == c.to_rank &&
          existing.direction == c.direction && existing.transport == c.transport && existing.detail == c.detail &&
          existing.net_device == c.net_device && existing.proxy_rank == c.proxy_rank) {
        if (std::find(existing.channels.begin(), existing.channels.end(), channel) == existing.channels.end()) {
          existing.channels.push_back(channel);
        }
        return;
      }
    }
    c.channels.push_back(channel);
    summary_.connections.push_back(std::move(c));
    return;
  }
  if (std::regex_search(message, m, kVersion)) {
    std::string version = m[1].str();
    if (std::find(summary_.nccl_versions.begin(), summary_.nccl_versions.end(), version) ==
        summary_.nccl_versions.end()) {
      summary_.nccl_versions.push_back(version);
    }
    process_version_[process] = NcclVersionCode(version);
  } else if (std::regex_search(message, m, kBootstrap)) {
    summary_.bootstrap[host] = m[1].str();
  } else if (std::regex_search(message, m, kNetIb)) {
    std::string list = m[1].str();
    bool known = std::any_of(summary_.net_devices.begin(), summary_.net_devices.end(),
                             [&](const auto& d) { return d.host == host && d.kind == "IB"; });
    if (!known) {
      for (auto it = std::sregex_iterator(list.begin(), list.end(), kIbDevice); it != std::sregex_iterator(); ++it) {
        model::NcclNetDevice d;
        d.host = host;
        d.kind = "IB";
        d.index = ToInt((*it)[1].str());
        d.name = (*it)[2].str();
        d.port = ToInt((*it)[3].str());
        d.link_layer = (*it)[4].str();
        d.address = "OOB " + m[2].str();  // the interface NCCL's IB transport talks out of band on
        summary_.net_devices.push_back(std::move(d));
      }
    }
  } else if (message.find("NET/IB : No device found") != std::string::npos) {
    ib_no_device_ = true;
  } else if (std::regex_search(message, m, kNetSocket)) {
    std::string list = m[1].str();
    bool known = std::any_of(summary_.net_devices.begin(), summary_.net_devices.end(),
                             [&](const auto& d) { return d.host == host && d.kind == "Socket"; });
    if (!known) {
      for (auto it = std::sregex_iterator(list.begin(), list.end(), kSocketDevice); it != std::sregex_iterator();
           ++it) {
        model::NcclNetDevice d;
        d.host = host;
        d.kind = "Socket";
        d.index = ToInt((*it)[1].str());
        d.name = (*it)[2].str();
        d.address = (*it)[3].str();
        summary_.net_devices.push_back(std::move(d));
      }
    }
  } else if (std::regex_search(message, m, kNetwork)) {
    summary_.network[host] = m[1].str();
  } else if (std::regex_search(message, m, kEnv)) {
    summary_.env[m[1].str()] = m[2].str();
  } else if (std::regex_search(message, m, kGdr)) {
    model::NcclGdrDecision g;
    g.host = host;
    g.enabled = m[1].str() == "Enabled";
    g.gpu = m[2].str();
    g.hca = m[3].str();
    g.distance = ToInt(m[4].str());
    g.limit = ToInt(m[5].str());
    if (g.distance < 0 || g.limit < 0) return;
    bool duplicate = std::any_of(summary_.gdr.begin(), summary_.gdr.end(), [&](const auto& o) {
      return o.host == g.host && o.gpu == g.gpu && o.hca == g.hca && o.enabled == g.enabled;
    });
    if (!duplicate) {
      summary_.gdr.push_back(std::move(g));
      gdr_process_.emplace_back(process, 0);
    }
  } else if (std::regex_search(message, m, kHcaGdr)) {
    // Only IB HCAs can do GPUDirect RDMA; the Socket transport always says Disabled.
    if (m[2].str() == "Disabled" && m[1].str() != "Socket") {
      std::string text = fmt::format("{}: {}", host, message);
      if (std::find(hca_gdr_off_.begin(), hca_gdr_off_.end(), text) == hca_gdr_off_.end()) {
        hca_gdr_off_.push_back(text);
      }
    }
  } else if (std::regex_search(message, m, kInit)) {
    summary_.ranks = std::max(summary_.ranks, ToInt(m[2].str()));
    rank_bus_[host][ToInt(m[1].str())] = m[5].str();
    if (m[6].str() == "COMPLETE") summary_.init_complete = true;
  } else if (std::regex_search(message, m, kGraph)) {
    model::NcclGraph g;
    g.host = host;
    g.pattern = ToInt(m[1].str());
    g.channels = ToInt(m[2].str());
    g.bw_intra = ParseDouble(m[3].str()).value_or(0);
    g.bw_inter = ParseDouble(m[4].str()).value_or(0);
    g.type_intra = m[5].str();
    g.type_inter = m[6].str();
    if (summary_.graphs.size() < 64) summary_.graphs.push_back(std::move(g));
  } else if (std::regex_search(message, m, kNodes)) {
    summary_.ranks = std::max(summary_.ranks, ToInt(m[1].str()));
    summary_.nodes = std::max(summary_.nodes, ToInt(m[2].str()));
  }
}

model::NcclLogSummary NcclLogParser::Finish() {
  // Name GDR distances with the table of the version that printed them; a
  // process that printed no version line takes the only (or newest) one seen.
  int fallback = 0;
  for (const auto& v : summary_.nccl_versions) fallback = std::max(fallback, NcclVersionCode(v));
  for (size_t i = 0; i < summary_.gdr.size(); ++i) {
    auto& g = summary_.gdr[i];
    // Its own process's version, else one printed on the same host, else the newest.
    const std::string& process = gdr_process_[i].first;
    auto it = process_version_.find(process);
    int version = it != process_version_.end() ? it->second : 0;
    if (version <= 0) {
      const std::string host_prefix = process.substr(0, process.rfind(':') + 1);
      for (const auto& [p, v] : process_version_) {
        if (StartsWith(p, host_prefix) && v > 0) version = v;
      }
    }
    if (version <= 0) version = fallback;
    g.distance_name = NcclPathTypeName(g.distance, version);
    g.limit_name = NcclPathTypeName(g.limit, version);
    // Map NCCL's HCA id to the IB device it listed on that host.
    if (auto hca = ParseUint(g.hca, 16)) {
      for (const auto& d : summary_.net_devices) {
        if (d.host == g.host && d.kind == "IB" && d.index == static_cast<int>(*hca)) g.hca_name = d.name;
      }
    }
    // 2.28+ prints the rank; name its bus id when the Init line gave it.
    if (version >= 22800) {
      if (auto rank = ParseInt(g.gpu); rank && rank_bus_[g.host].count(static_cast<int>(*rank))) {
        g.gpu = fmt::format("{} (busId {})", g.gpu, rank_bus_[g.host][static_cast<int>(*rank)]);
      }
    }
  }
  // Evidence for the verdicts travels in the findings.
  summary_.findings = NcclLogVerdicts(summary_, ib_no_device_, hca_gdr_off_);
  for (auto& f : summary_.findings) {
    if (f.id == "nccl.net.socket") f.evidence.insert(f.evidence.end(), evidence_socket_.begin(), evidence_socket_.end());
    if (f.id == "nccl.gdr.not-used") {
      f.evidence.insert(f.evidence.end(), evidence_ib_nogdr_.begin(), evidence_ib_nogdr_.end());
    }
  }
  return summary_;
}

Result<model::NcclLogSummary> ParseNcclLogFiles(const std::vector<std::string>& paths) {
  NcclLogParser parser;
  Status last;
  int read = 0;
  for (const auto& path : paths) {
    Status s = parser.AddFile(path);
    if (s.ok()) {
      ++read;
    } else {
      last = s;
    }
  }
  if (read == 0) return last.ok() ? InvalidArgumentError("no NCCL log file given") : last;
  auto summary = parser.Finish();
  if (!last.ok()) {
    summary.findings.insert(summary.findings.begin(),
                            model::Finding{"nccl.log.unreadable", model::Severity::kUnknown, "NCCL", "NCCL log",
                                           last.message(), {}, "check the path and permissions", std::nullopt});
  }
  return summary;
}

}  // namespace fabcheck::coll
