#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <regex>
#include <unordered_set>

#include "base/input.h"
#include "base/units.h"
#include "base/strings.h"
#include "logs/line_clean.h"
#include "logs/nccl_log.h"
#include "logs/nccl_state.h"

namespace fabcheck::logs {
namespace {

// The path-type tables of NCCL's src/graph/topo.h, by version.
const std::vector<std::string> kPathsUpTo225 = {"LOC", "NVL", "NVB", "PIX", "PXB", "PXN", "PHB", "SYS", "NET", "DIS"};
const std::vector<std::string> kPaths226 = {"LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "PXN", "PHB", "SYS", "NET", "DIS"};
const std::vector<std::string> kPaths227 = {"LOC", "NVL", "NVB", "C2C", "PIX", "PXB",
                                            "PXN", "P2C", "PHB", "SYS", "NET", "DIS"};
const std::vector<std::string> kPaths228 = {"LOC", "NVL", "NVB", "C2C", "PIX", "PXB",
                                            "P2C", "PXN", "PHB", "SYS", "NET", "DIS"};

// Regexes only run on the rare lines whose start already matched; the
// frequent ones (channels, the prefix) are parsed by hand.
const std::regex kBootstrap(R"(^Bootstrap ?: Using +(?:\[\d+\])?(\S+))");
const std::regex kNetIb(R"(^NET/(IB\w*) ?: Using(.*); OOB (\S+))");
const std::regex kIbDevice(R"(\[(\d+)\] ?([A-Za-z0-9_.\-]+):(\d+)[^/\s,}]*/(IB|RoCE))");
const std::regex kNetSocket(R"(^NET/Socket ?: Using( \[.*))");
const std::regex kSocketDevice(R"(\[(\d+)\]([^:\s]+):(\S+))");
const std::regex kEnv(R"(^(NCCL_[A-Z0-9_]+) set (?:by environment )?to (.*?)\.?$)");
const std::regex kGdr(R"(^GPU Direct RDMA (Enabled|Disabled) for GPU (\S+) / HCA (\S+) \(distance (\d+) (?:<=|>) (\d+)\))");
const std::regex kHcaGdr(R"(^NET/(\S+) ?: GPU Direct RDMA (?:\(\S+\) )?(Enabled|Disabled|enabled|disabled) for HCA (\d+) '([^']*)')");
const std::regex kInit(
    R"(comm (?:0x[0-9a-fA-F]+|\(nil\)) rank (\d+) nranks (\d+) cudaDev (\d+)(?: nvmlDev (\d+))? busId ([0-9a-fA-F]+).*Init (START|COMPLETE))");
const std::regex kGraph(
    R"(^Pattern (\d+), crossNic \d+, nChannels (\d+), bw ([0-9.]+)/([0-9.]+), type ([A-Z0-9]+)/([A-Z0-9]+))");
const std::regex kNodes(R"(comm \S+ rank (\d+) nRanks (\d+) nNodes (\d+))");

// std::stoi throws on overflow; a log line must never end the program.
int ToInt(std::string_view text) {
  auto value = ParseInt(text);
  if (!value || *value > 1'000'000'000 || *value < -1'000'000'000) return -1;
  return static_cast<int>(*value);
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHostChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || IsDigit(c) || c == '-' || c == '_' || c == '.';
}

// Hand parser over a string_view.
struct Cursor {
  std::string_view s;
  size_t i = 0;
  bool Lit(std::string_view lit) {
    if (s.substr(i, lit.size()) != lit) return false;
    i += lit.size();
    return true;
  }
  bool Number(int* out) {
    size_t start = i;
    while (i < s.size() && IsDigit(s[i]) && i - start < 9) ++i;
    if (i == start) return false;
    *out = ToInt(s.substr(start, i - start));
    return true;
  }
  bool Bracket(std::string* out) {  // "[hex]"
    if (i >= s.size() || s[i] != '[') return false;
    size_t close = s.find(']', i);
    if (close == std::string_view::npos || close - i > 20) return false;
    *out = std::string(s.substr(i + 1, close - i - 1));
    i = close + 1;
    return true;
  }
  void Spaces() {
    while (i < s.size() && s[i] == ' ') ++i;
  }
};

// Splits a "via" tail into transport and detail.
bool SplitVia(std::string_view via, model::NcclConnection* c) {
  if (StartsWith(via, "NET/")) {
    std::string_view rest = via.substr(4);
    size_t slash = rest.find('/');
    if (slash == std::string_view::npos || slash == 0) return false;
    c->transport = "NET/" + std::string(rest.substr(0, slash));
    Cursor cur{rest, slash + 1};
    int dev = -1;
    if (!cur.Number(&dev)) return false;  // cut short: "NET/IB/"
    c->net_device = dev;
    if (cur.i < rest.size() && rest[cur.i] == '(') {
      ++cur.i;
      int proxy = -1;
      if (!cur.Number(&proxy) || !cur.Lit(")")) return false;
      c->proxy_rank = proxy;
    }
    c->detail = std::string(rest.substr(cur.i));
    c->gdr = c->detail.find("/GDRDMA") != std::string::npos;
    return true;
  }
  if (via == "direct shared memory" || StartsWith(via, "direct shared memory")) {  // NCCL 2.4-2.6
    c->transport = "SHM";
    c->detail = "/direct";
    return true;
  }
  for (std::string_view fixed : {"P2P/direct pointer", "P2P/indirect"}) {
    if (StartsWith(via, fixed)) {
      c->transport = std::string(fixed);
      c->detail = std::string(via.substr(fixed.size()));
      return true;
    }
  }
  size_t first = via.find('/');
  if (StartsWith(via, "P2P/") && first != std::string_view::npos) {
    size_t second = via.find('/', first + 1);
    c->transport = std::string(via.substr(0, second));
    c->detail = second == std::string_view::npos ? "" : std::string(via.substr(second));
    return true;
  }
  c->transport = std::string(first == std::string_view::npos ? via : via.substr(0, first));
  c->detail = first == std::string_view::npos ? "" : std::string(via.substr(first));
  return !c->transport.empty();
}

// "Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA", "Ring 00 : 3 -> 0 [receive] via NET/IB/0",
// "Channel 00 : 0[1a000] -> 1[1b000] via P2P/IPC". False for ring-order lines and cut lines.
bool ParseChannel(std::string_view message, model::NcclConnection* c, int* channel) {
  Cursor cur{message};
  if (!cur.Lit("Channel ") && !cur.Lit("Ring ")) return false;
  if (!cur.Number(channel)) return false;
  if (cur.Lit("/")) {
    int ignored = 0;
    if (!cur.Number(&ignored)) return false;
  }
  if (!cur.Lit(" : ")) return false;
  if (!cur.Number(&c->from_rank)) return false;
  cur.Bracket(&c->from_device);
  if (!cur.Lit(" -> ")) return false;
  if (!cur.Number(&c->to_rank)) return false;
  cur.Bracket(&c->to_device);
  if (!cur.Lit(" ")) return false;
  if (cur.Lit("[send] ")) {
    c->direction = "send";
  } else if (cur.Lit("[receive] ")) {
    c->direction = "receive";
  }
  if (!cur.Lit("via ")) return false;
  std::string_view via = Trim(message.substr(cur.i));
  if (via.empty()) return false;
  return SplitVia(via, c) && *channel >= 0 && c->from_rank >= 0 && c->to_rank >= 0;
}

// The "host:pid:tid [dev] " before "NCCL INFO/WARN" (WARN adds "file:line (func) "
// after it). `glued` is set when the host token holds characters a host name
// cannot have (another line's tail glued in front of it).
struct Head {
  std::string_view host;
  int pid = 0;
  bool found = false;
  bool glued = false;
};

Head ParseHead(std::string_view head) {
  Head out;
  // The last " [digits] " (or "^[digits] ") in the head.
  for (size_t close = head.rfind("] "); close != std::string_view::npos && close > 0;
       close = close == 0 ? std::string_view::npos : head.rfind("] ", close - 1)) {
    size_t open = close;
    while (open > 0 && IsDigit(head[open - 1])) --open;
    if (open == close || open == 0 || head[open - 1] != '[') continue;
    size_t bracket = open - 1;  // '['
    if (bracket == 0 || head[bracket - 1] != ' ') {
      if (bracket == 0) return out;  // "[4] NCCL INFO": prefix removed, no host
      continue;
    }
    std::string_view token = head.substr(0, bracket - 1);
    size_t space = token.find_last_of(" \t");
    if (space != std::string_view::npos) token = token.substr(space + 1);
    // host:pid:tid
    size_t c2 = token.rfind(':');
    if (c2 == std::string_view::npos) return out;
    size_t c1 = token.rfind(':', c2 == 0 ? 0 : c2 - 1);
    if (c1 == std::string_view::npos || c1 == 0) return out;
    std::string_view pid = token.substr(c1 + 1, c2 - c1 - 1);
    std::string_view tid = token.substr(c2 + 1);
    if (pid.empty() || tid.empty() || !std::all_of(pid.begin(), pid.end(), IsDigit) ||
        !std::all_of(tid.begin(), tid.end(), IsDigit)) {
      return out;
    }
    std::string_view host = token.substr(0, c1);
    size_t start = host.size();
    while (start > 0 && IsHostChar(host[start - 1])) --start;
    out.glued = start != 0;
    out.host = host.substr(start);
    out.pid = ToInt(pid.substr(0, 9));
    out.found = !out.host.empty() && out.pid >= 0;
    return out;
  }
  return out;
}

}  // namespace

std::string ProcessKey(std::string_view host, int pid) { return fmt::format("{}:{}", host, pid); }

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
  // "2.28.3+cuda13.0", "2.18.5-1+cuda12.2", "2.7.8", "2.28.3,".
  std::string s(text.substr(0, text.find_first_of("+-, ")));
  auto parts = Split(s, '.');
  if (parts.size() != 3) return 0;
  auto major = ParseInt(parts[0]), minor = ParseInt(parts[1]), patch = ParseInt(parts[2]);
  if (!major || !minor || !patch || *major != 2 || *minor < 0 || *minor > 99 || *patch < 0 || *patch > 99) return 0;
  return static_cast<int>(*major * 10000 + *minor * 100 + *patch);
}

struct NcclLogParser::State : ParserState {
  std::unordered_set<std::string> processes;  // "host:pid" of clean lines
  std::unordered_set<std::string> nodes_seen;  // processes whose "comm ... nNodes" line was read
  std::unordered_set<std::string> env_lines;   // NCCL_* lines already read (every rank prints them)
  std::unordered_map<std::string, std::vector<int>> host_pids;  // few-line hosts' pids (fragment check)
  void AddNcclLine(const LineContext& ctx, std::string_view message);
  void ResolveFragments();
  std::string ResolveGlued(std::string_view host, int pid) const;
};

NcclLogParser::NcclLogParser() : state_(std::make_unique<State>()) {}
NcclLogParser::~NcclLogParser() = default;

void NcclLogParser::AddText(std::string_view text, std::string_view name) {
  state_->summary.files.emplace_back(name);
  int line_number = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    ++line_number;
    if (line.size() > (64 << 10)) {
      line = line.substr(0, 64 << 10);
      ++state_->summary.lines_cut;
    }
    AddLine(line, name, line_number);
    pos = end + 1;
  }
}

Status NcclLogParser::AddFile(const std::string& path) {
  // Streamed line by line, so a regular file of any realistic size is read
  // whole in constant memory; a pipe, FIFO or device (/dev/zero) has no size
  // and stops at a smaller cap.
  struct stat st {};
  bool regular = path != "-" && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
  const uint64_t cap = regular ? kMaxLogFileBytes : kMaxLogStreamBytes;
  auto reader = LineReader::Open(path, {.max_line = 64 << 10, .max_total = cap});
  if (!reader.ok()) {
    bool missing = reader.status().code() == StatusCode::kNotFound ||
                   reader.status().code() == StatusCode::kPermissionDenied;
    return Status(reader.status().code(),
                  fmt::format("cannot read NCCL log: {}{}", reader.status().message(),
                              missing ? " (give the file NCCL_DEBUG_FILE wrote, or the job's stdout/stderr saved "
                                        "with NCCL_DEBUG=INFO)"
                                      : ""));
  }
  state_->summary.files.push_back(path);
  std::string_view line;
  while (reader->Next(&line)) {
    if (reader->truncated()) ++state_->summary.lines_cut;
    AddLine(line, path, static_cast<int>(std::min<uint64_t>(reader->line_number(), 2'000'000'000)));
  }
  if (reader->status().code() == StatusCode::kResourceExhausted) {
    return ResourceExhaustedError(fmt::format(
        "{} is larger than {} ({}): stopped reading there{}", path == "-" ? "stdin" : path, FormatSize(cap),
        regular ? "the limit for one log" : "the limit for a pipe, FIFO or device",
        regular ? "" : " (is it an endless stream such as /dev/zero? save a log to a file to read all of it)"));
  }
  return reader->status();
}

int NcclLogParser::nccl_lines() const { return state_->summary.nccl_lines; }

std::string NcclLogParser::State::ResolveGlued(std::string_view host, int pid) const {
  // "882gpu-18": the longest suffix that is a known process's host.
  for (size_t k = 1; k < host.size(); ++k) {
    std::string_view suffix = host.substr(k);
    if (processes.count(ProcessKey(suffix, pid))) return std::string(suffix);
  }
  return "";
}

// The "file.cc:line" NCCL prints before "NCCL WARN" (2.5+), with or without
// the function after it ("misc/socket.cc:483 (socketStartConnect)"); "" when absent.
static std::string WarnSource(std::string_view before) {
  before = Trim(before);
  if (!before.empty() && before.back() == ')') {
    size_t open = before.rfind(" (");
    if (open != std::string_view::npos) before = Trim(before.substr(0, open));
  }
  size_t space = before.find_last_of(" \t");
  std::string_view token = space == std::string_view::npos ? before : before.substr(space + 1);
  size_t colon = token.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || token.find('.') == std::string_view::npos) return "";
  std::string_view line = token.substr(colon + 1);
  if (line.empty() || line.find_first_not_of("0123456789") != std::string_view::npos) return "";
  return std::string(token.substr(0, 200));
}

void NcclLogParser::AddLine(std::string_view raw, std::string_view file, int line_number) {
  State& st = *state_;
  ++st.summary.lines_read;
  CleanLine clean = Clean(raw, &st.scratch);
  if (clean.had_binary) ++st.summary.binary_lines;
  std::string_view text = clean.text;
  // NCCL's own lines are far shorter; std::regex recursion grows with the
  // input, so what the regexes see stays small.
  if (text.size() > 4096) text = text.substr(0, 4096);
  LineContext ctx;
  ctx.file = file;
  ctx.line = line_number;
  ctx.launcher_rank = clean.launcher_rank;
  ctx.repeated = clean.repeated;
  size_t at = text.find(" NCCL INFO ");
  size_t skip = 11;
  if (at == std::string_view::npos) {
    at = text.find(" NCCL WARN ");
    ctx.warn = at != std::string_view::npos;
  }
  if (at == std::string_view::npos) {
    // "NCCL INFO ..." with the host prefix removed.
    if (StartsWith(text, "NCCL INFO ") || StartsWith(text, "NCCL WARN ")) {
      ctx.warn = text[5] == 'W';
      at = 0;
      skip = 10;
    } else {
      ParseFrameworkLine(st, ctx, text);
      return;
    }
  }
  std::string_view message = Trim(text.substr(at + skip));
  Head head = at == 0 ? Head{} : ParseHead(text.substr(0, at + 1));
  std::string host;
  if (head.found) {
    host = std::string(head.host);
    if (head.glued) {
      std::string resolved = st.ResolveGlued(host, head.pid);
      if (!resolved.empty()) {
        host = resolved;
      } else if (!st.processes.count(ProcessKey(host, head.pid))) {
        host.clear();  // a fragment: keep the line, not the name
      }
    }
    ctx.pid = head.pid;
  }
  std::string process = host.empty() ? std::string() : ProcessKey(host, head.pid);
  if (host.empty()) {
    ++st.summary.unattributed_lines;
  } else if (!head.glued || st.processes.count(process)) {
    auto [it, inserted] = st.hosts.try_emplace(host, HostInfo{st.hosts.size(), 0});
    if (inserted && st.hosts.size() > kMaxHosts) {
      st.hosts.erase(it);
    } else {
      it->second.lines++;
      if (it->second.lines <= 3) {
        auto& pids = st.host_pids[host];
        if (std::find(pids.begin(), pids.end(), head.pid) == pids.end() && pids.size() < 4) pids.push_back(head.pid);
      }
      if (!head.glued && st.processes.size() < kMaxHosts * 4) st.processes.insert(process);
    }
  }
  ctx.host = host;
  ctx.process = process;
  ++st.summary.nccl_lines;
  if (int rank = st.RankOf(ctx); rank >= 0) {
    auto& seen = st.Seen(rank);
    if (seen.file != file) seen.file = std::string(file);
    seen.last_line = line_number;
    if (seen.host.empty()) seen.host = host;
    if (seen.pid == 0) seen.pid = ctx.pid;
  }
  if (ctx.warn) {
    if (!ParseEventLine(st, ctx, message)) {
      if (st.summary.warnings.size() < kMaxWarnings) {
        st.summary.warnings.push_back(
            fmt::format("{}:{}: {}{}", file, line_number, host.empty() ? "" : host + ": ", message));
      }
      st.AddEvent(ctx, "warn", message,
                  {{"text", std::string(message.substr(0, 200))}, {"source", WarnSource(text.substr(0, at))}});
    }
    return;
  }
  st.AddNcclLine(ctx, message);
}

int ParserState::RankOf(const LineContext& ctx) const {
  if (!ctx.host.empty() && !process_rank.empty()) {
    auto it = process_rank.find(ctx.process.empty() ? ProcessKey(ctx.host, ctx.pid) : std::string(ctx.process));
    if (it != process_rank.end()) return it->second;
  }
  return ctx.launcher_rank;
}

model::NcclRankSeen& ParserState::Seen(int rank) {
  auto [it, inserted] = rank_seen_index.try_emplace(rank, summary.ranks_seen.size());
  if (inserted) {
    model::NcclRankSeen seen;
    seen.rank = rank;
    summary.ranks_seen.push_back(std::move(seen));
  }
  return summary.ranks_seen[it->second];
}

model::NcclEvent* ParserState::AddEvent(const LineContext& ctx, std::string kind, std::string_view text,
                                        std::map<std::string, std::string> fields) {
  std::string key = kind + "|" + std::string(ctx.host);
  for (const auto& [k, v] : fields) key += "|" + k + "=" + v;
  auto it = event_index.find(key);
  if (it != event_index.end()) {
    summary.events[it->second].count += ctx.repeated;
    return nullptr;
  }
  if (summary.events.size() >= kMaxEvents) {
    summary.events_dropped += ctx.repeated;
    return nullptr;
  }
  model::NcclEvent e;
  e.kind = std::move(kind);
  e.file = std::string(ctx.file);
  e.line = ctx.line;
  e.host = std::string(ctx.host);
  e.pid = ctx.pid;
  e.rank = RankOf(ctx);
  e.text = std::string(text.substr(0, 1000));
  e.fields = std::move(fields);
  e.count = ctx.repeated;
  event_index.emplace(std::move(key), summary.events.size());
  summary.events.push_back(std::move(e));
  return &summary.events.back();
}

void ParserState::AddVersion(const LineContext& ctx, std::string_view version) {
  std::string v(version);
  while (!v.empty() && (v.back() == '.' || v.back() == ',')) v.pop_back();
  if (NcclVersionCode(v) == 0) return;
  if (std::find(summary.nccl_versions.begin(), summary.nccl_versions.end(), v) == summary.nccl_versions.end() &&
      summary.nccl_versions.size() < 64) {
    summary.nccl_versions.push_back(v);
  }
  if (!ctx.host.empty()) process_version[ProcessKey(ctx.host, ctx.pid)] = NcclVersionCode(v);
}

void NcclLogParser::State::AddNcclLine(const LineContext& ctx, std::string_view message) {
  if (message.empty()) return;
  const std::string host(ctx.host);
  auto cite = [&] { return fmt::format("{}:{}: {}", ctx.file, ctx.line, message); };
  std::match_results<std::string_view::const_iterator> m;
  auto search = [&](const std::regex& re) { return std::regex_search(message.begin(), message.end(), m, re); };
  auto str = [&](int i) { return m[i].str(); };
  switch (message[0]) {
    case 'C':
    case 'R': {
      if (!StartsWith(message, "Channel ") && !StartsWith(message, "Ring ")) break;
      model::NcclConnection c;
      int channel = -1;
      if (!ParseChannel(message, &c, &channel)) return;
      c.host = host;
      summary.transport_channels[c.transport]++;
      if (c.transport == "NET/Socket" && evidence_socket.size() < kMaxEvidence) evidence_socket.push_back(cite());
      if (StartsWith(c.transport, "NET/") && c.transport != "NET/Socket" && !c.gdr &&
          evidence_ib_nogdr.size() < kMaxEvidence) {
        evidence_ib_nogdr.push_back(cite());
      }
      std::string key = fmt::format("{}|{}|{}|{}|{}|{}|{}|{}", c.host, c.from_rank, c.to_rank, c.direction,
                                    c.transport, c.detail, c.net_device, c.proxy_rank);
      auto it = connection_index.find(key);
      if (it != connection_index.end()) {
        auto& channels = summary.connections[it->second].channels;
        if (std::find(channels.begin(), channels.end(), channel) == channels.end() && channels.size() < 256) {
          channels.push_back(channel);
        }
        return;
      }
      if (summary.connections.size() >= kMaxConnections) {
        ++connections_dropped;
        return;
      }
      c.channels.push_back(channel);
      connection_index.emplace(std::move(key), summary.connections.size());
      summary.connections.push_back(std::move(c));
      return;
    }
    case 'B':
      if (StartsWith(message, "Bootstrap") && search(kBootstrap)) {
        summary.bootstrap[host] = str(1);
        return;
      }
      break;
    case 'U':
      if (StartsWith(message, "Using network ")) {
        summary.network[host] = std::string(Trim(message.substr(14)));  // may hold spaces: "AWS Libfabric"
        return;
      }
      break;
    case 'G':
      if (StartsWith(message, "GPU Direct RDMA") && search(kGdr)) {
        model::NcclGdrDecision g;
        g.host = host;
        g.enabled = str(1) == "Enabled";
        g.gpu = str(2);
        g.hca = str(3);
        g.distance = ToInt(str(4));
        g.limit = ToInt(str(5));
        if (g.distance < 0 || g.limit < 0) return;
        bool duplicate = std::any_of(summary.gdr.begin(), summary.gdr.end(), [&](const auto& o) {
          return o.host == g.host && o.gpu == g.gpu && o.hca == g.hca && o.enabled == g.enabled;
        });
        if (!duplicate && summary.gdr.size() < 4096) {
          summary.gdr.push_back(std::move(g));
          gdr_process.push_back(ProcessKey(ctx.host, ctx.pid));
        }
        return;
      }
      break;
    case 'N':
      if (StartsWith(message, "NCCL version ")) {
        std::string_view v = message.substr(13);
        AddVersion(ctx, v.substr(0, v.find(' ')));
        return;
      }
      if (StartsWith(message, "NCCL_") && env_lines.insert(std::string(message.substr(0, 300))).second &&
          env_lines.size() < 4096 && search(kEnv)) {
        if (summary.env.size() < 256 || summary.env.count(str(1))) summary.env[str(1)] = str(2);
        return;
      }
      if (StartsWith(message, "NET/IB") && message.find(": Using") != std::string_view::npos) {
        // One list per host (every rank prints it): a set, not a scan (100k
        // hosts), and the regex only for the first one.
        if (net_device_name.count(host + "|IB")) return;
        if (!search(kNetIb)) return;
        net_device_name.emplace(host + "|IB", "");
        std::string list = str(2);
        std::string oob = str(3);
        if (summary.net_devices.size() < 65536) {
          for (auto it = std::sregex_iterator(list.begin(), list.end(), kIbDevice); it != std::sregex_iterator();
               ++it) {
            model::NcclNetDevice d;
            d.host = host;
            d.kind = "IB";
            d.index = ToInt((*it)[1].str());
            d.name = (*it)[2].str();
            d.port = ToInt((*it)[3].str());
            d.link_layer = (*it)[4].str();
            d.address = "OOB " + oob;  // the interface NCCL's IB transport talks out of band on
            net_device_name[fmt::format("{}|IB|{}", host, d.index)] = d.name;
            summary.net_devices.push_back(std::move(d));
          }
        }
        return;
      }
      if (message.find("NET/IB : No device found") != std::string_view::npos ||
          StartsWith(message, "NET/IB: No device found")) {
        ib_no_device = true;
        AddEvent(ctx, "ib-no-device", message, {});
        return;
      }
      if (StartsWith(message, "NET/Socket") && search(kNetSocket)) {
        std::string list = str(1);
        bool known = !net_device_name.emplace(host + "|Socket", "").second;
        if (!known && summary.net_devices.size() < 65536) {
          for (auto it = std::sregex_iterator(list.begin(), list.end(), kSocketDevice); it != std::sregex_iterator();
               ++it) {
            model::NcclNetDevice d;
            d.host = host;
            d.kind = "Socket";
            d.index = ToInt((*it)[1].str());
            d.name = (*it)[2].str();
            d.address = (*it)[3].str();
            summary.net_devices.push_back(std::move(d));
          }
        }
        return;
      }
      if (StartsWith(message, "NET/") && message.find("GPU Direct RDMA") != std::string_view::npos &&
          search(kHcaGdr)) {
        // Only IB HCAs can do GPUDirect RDMA; the Socket transport always says Disabled.
        if (ToLower(str(2)) == "disabled" && str(1) != "Socket") {
          std::string text = fmt::format("{}: {}", host, message);
          if (std::find(hca_gdr_off.begin(), hca_gdr_off.end(), text) == hca_gdr_off.end() &&
              hca_gdr_off.size() < 256) {
            hca_gdr_off.push_back(text);
          }
        }
        return;
      }
      break;
    case 'P':
      if (StartsWith(message, "Pattern ") && search(kGraph)) {
        model::NcclGraph g;
        g.host = host;
        g.pattern = ToInt(str(1));
        g.channels = ToInt(str(2));
        g.bw_intra = ParseDouble(str(3)).value_or(0);
        g.bw_inter = ParseDouble(str(4)).value_or(0);
        g.type_intra = str(5);
        g.type_inter = str(6);
        if (summary.graphs.size() < 64) summary.graphs.push_back(std::move(g));
        return;
      }
      break;
    default:
      break;
  }
  if (message.find("Init ") != std::string_view::npos &&
      (EndsWith(message, "Init START") || EndsWith(message, "Init COMPLETE") ||
       message.find("- Init COMPLETE") != std::string_view::npos) &&
      search(kInit)) {
    int rank = ToInt(str(1));
    summary.ranks = std::max(summary.ranks, ToInt(str(2)));
    if (rank >= 0 && rank_bus.size() < kMaxHosts) rank_bus[host][rank] = str(5);
    if (str(6) == "COMPLETE") summary.init_complete = true;
    if (rank >= 0 && !ctx.host.empty()) {
      process_rank[ProcessKey(ctx.host, ctx.pid)] = rank;
      auto& seen = Seen(rank);
      seen.host = host;
      seen.pid = ctx.pid;
      seen.file = std::string(ctx.file);
      seen.last_line = ctx.line;
    }
    return;
  }
  if (StartsWith(message, "comm ") && message.find(" nNodes ") != std::string_view::npos &&
      nodes_seen.insert(ProcessKey(ctx.host, ctx.pid)).second && search(kNodes)) {
    summary.ranks = std::max(summary.ranks, ToInt(str(2)));
    summary.nodes = std::max(summary.nodes, ToInt(str(3)));
    return;
  }
  ParseEventLine(*this, ctx, message);
}

void NcclLogParser::State::ResolveFragments() {
  // A host seen on a few lines whose name is a proper suffix of a known host
  // with the same pid ("7" from "gpu-17:88231", the line cut mid-name) is a
  // fragment: its lines belong to that host. Indexed by pid: linear time.
  std::unordered_map<int, std::vector<std::string_view>> pid_hosts;
  for (const auto& p : processes) {
    size_t colon = p.rfind(':');
    int pid = ToInt(std::string_view(p).substr(colon + 1));
    auto& list = pid_hosts[pid];
    if (list.size() < 16) list.push_back(std::string_view(p).substr(0, colon));
  }
  std::map<std::string, std::string> rename;
  for (const auto& [host, info] : hosts) {
    if (info.lines > 3) continue;
    auto pids = host_pids.find(host);
    if (pids == host_pids.end()) continue;
    for (int pid : pids->second) {
      auto it = pid_hosts.find(pid);
      if (it == pid_hosts.end()) continue;
      for (std::string_view other : it->second) {
        if (other.size() > host.size() && EndsWith(other, host) && hosts.count(std::string(other)) &&
            hosts.at(std::string(other)).lines > info.lines) {
          rename[host] = std::string(other);
          break;
        }
      }
      if (rename.count(host)) break;
    }
  }
  if (rename.empty()) return;
  auto fix = [&](std::string& h) {
    auto it = rename.find(h);
    if (it != rename.end()) h = it->second;
  };
  for (auto& c : summary.connections) fix(c.host);
  for (auto& e : summary.events) fix(e.host);
  for (auto& d : summary.net_devices) fix(d.host);
  for (auto& s : summary.ranks_seen) fix(s.host);
  for (const auto& [from, to] : rename) hosts.erase(from);
}

model::NcclLogSummary NcclLogParser::Finish() {
  State& st = *state_;
  st.ResolveFragments();
  std::vector<std::pair<size_t, std::string>> ordered;
  ordered.reserve(st.hosts.size());
  for (const auto& [host, info] : st.hosts) ordered.emplace_back(info.order, host);
  std::sort(ordered.begin(), ordered.end());
  st.summary.hosts.clear();
  for (auto& [order, host] : ordered) st.summary.hosts.push_back(std::move(host));
  // Name GDR distances with the table of the version that printed them; a
  // process that printed no version line takes one of its host, else the newest.
  int fallback = 0;
  for (const auto& v : st.summary.nccl_versions) fallback = std::max(fallback, NcclVersionCode(v));
  std::unordered_map<std::string, int> host_version;
  for (const auto& [p, v] : st.process_version) {
    if (v > 0) host_version[p.substr(0, p.rfind(':'))] = v;
  }
  for (size_t i = 0; i < st.summary.gdr.size(); ++i) {
    auto& g = st.summary.gdr[i];
    const std::string& process = st.gdr_process[i];
    auto it = st.process_version.find(process);
    int version = it != st.process_version.end() ? it->second : 0;
    if (version <= 0) {
      auto h = host_version.find(process.substr(0, process.rfind(':')));
      if (h != host_version.end()) version = h->second;
    }
    if (version <= 0) version = fallback;
    g.distance_name = NcclPathTypeName(g.distance, version);
    g.limit_name = NcclPathTypeName(g.limit, version);
    if (auto hca = ParseUint(g.hca, 16)) {
      auto it = st.net_device_name.find(fmt::format("{}|IB|{}", g.host, *hca));
      if (it != st.net_device_name.end()) g.hca_name = it->second;
    }
    // 2.28+ prints the rank; name its bus id when the Init line gave it.
    if (version >= 22800) {
      if (auto rank = ParseInt(g.gpu); rank && st.rank_bus[g.host].count(static_cast<int>(*rank))) {
        g.gpu = fmt::format("{} (busId {})", g.gpu, st.rank_bus[g.host][static_cast<int>(*rank)]);
      }
    }
  }
  std::sort(st.summary.ranks_seen.begin(), st.summary.ranks_seen.end(),
            [](const auto& a, const auto& b) { return a.rank < b.rank; });
  // What only the parser knows, for the rules: the first socket / no-GDR
  // channel lines and the HCA GPUDirect lines travel as events.
  for (const auto& line : st.hca_gdr_off) {
    LineContext ctx;
    ctx.host = std::string_view(line).substr(0, line.find(':'));
    st.AddEvent(ctx, "hca-gdr-off", line, {{"line", line}});
  }
  for (const auto& line : st.evidence_socket) st.AddEvent(LineContext{}, "channel-socket", line, {{"line", line}});
  for (const auto& line : st.evidence_ib_nogdr) st.AddEvent(LineContext{}, "channel-no-gdr", line, {{"line", line}});
  if (st.connections_dropped > 0) {
    st.AddEvent(LineContext{}, "connections-dropped", fmt::format("{}", st.connections_dropped),
                {{"count", std::to_string(st.connections_dropped)}});
  }
  return std::move(st.summary);
}

Result<model::NcclLogSummary> ParseNcclLogFiles(const std::vector<std::string>& paths) {
  NcclLogParser parser;
  Status last;
  int read = 0;
  std::vector<std::string> problems;
  for (const auto& path : paths) {
    int before = parser.nccl_lines();
    Status s = parser.AddFile(path);
    if (s.ok()) {
      ++read;
    } else {
      // Cut at a limit: what came before counts when it held NCCL lines
      // (a huge log); an endless stream of nothing (/dev/zero) does not.
      bool partial = s.code() == StatusCode::kResourceExhausted || s.code() == StatusCode::kDeadlineExceeded;
      if (partial && parser.nccl_lines() > before) ++read;
      problems.push_back(s.message());
      last = s;
    }
  }
  if (read == 0) return last.ok() ? InvalidArgumentError("no NCCL log file given") : last;
  auto summary = parser.Finish();
  for (const auto& problem : problems) {
    summary.findings.push_back(model::Finding{"nccl.log.unreadable", model::Severity::kUnknown, "NCCL", "NCCL log",
                                              problem, {}, "check the path and permissions", std::nullopt,
                                              "", "job", std::nullopt, ""});
  }
  return summary;
}

}  // namespace fabcheck::logs
