// The failure lines of NCCL's log and of the frameworks around it, as
// events with their fields (see model::NcclEvent). Formats: NCCL 2.5 to 2.28
// source (net_ib.cc "Got completion", misc/socket.cc connect/recv failures,
// ibvwrap.cc "Call to ibv_X failed", net.cc / plugin loader lines) and
// PyTorch's ProcessGroupNCCL watchdog lines.
#include <fmt/format.h>

#include <regex>

#include "base/strings.h"
#include "logs/nccl_state.h"
#include "logs/wc_status.h"

namespace fabcheck::logs {
namespace {

using Fields = std::map<std::string, std::string>;
using Match = std::match_results<std::string_view::const_iterator>;

bool Search(std::string_view text, Match& m, const std::regex& re) {
  return std::regex_search(text.begin(), text.end(), m, re);
}

// "NET/IB: Got completion from peer 10.0.0.2<54862> with status=12 opcode=0 len=0 vendor err 129 (Recv)
//  localGid ::ffff:10.0.0.1 remoteGids::ffff:10.0.0.2 hca mlx5_0"        (2.19+)
// "NET/IB : Got completion from peer fe80::...%ib0<33397> with error 4, opcode 32611, len 32611,
//  vendor err 81 (Send) localGid ... remoteGid ..."                      (2.10-2.18)
// "NET/IB : Got completion with error 12, opcode 1, len 0, vendor err 129"  (2.5-2.9)
const std::regex kWc(
    R"(Got completion (?:from peer (\S+) )?with (?:status=|error )(\d+),? opcode[= ](\d+),? len[= ](\d+),? vendor err (\d+)(?: \((\w+)\))?)");
const std::regex kWcLocalGid(R"(localGid ?(\S+))");
const std::regex kWcRemoteGid(R"(remoteGids? ?=?(\S+))");
const std::regex kWcHca(R"( hca (\S+))");
// "socketPollConnect: connect to 10.0.0.2<52597> returned Connection refused, exceeded error retry count after 35 attempts"
const std::regex kSocketExceeded(R"(connect to (\S+) returned (.+?), exceeded (?:error )?retry count)");
// "socketStartConnect: Connect to 10.0.0.2<45763> failed : Software caused connection abort",
// "Net : Connect to 10.0.0.1<1234> failed : Connection refused", "socketPollConnect to X failed with error E"
const std::regex kSocketFailed(R"([Cc]onnect to (\S+) failed(?: with error| :) (.+)$)");
// "Call to connect returned Connection refused, retrying" (2.7-2.23 INFO)
const std::regex kSocketRetry(R"(Call to connect returned (.+?), retrying)");
const std::regex kSocketRetryNew(R"(connect to (\S+) returned (.+?), retrying)");
// "socketProgress: Connection closed by remote peer node1<57557>", "Net : Connection closed by remote peer 10.0.0.2<1234>"
const std::regex kClosed(R"(Connection closed by remote peer (\S+))");
// "socketProgressOpt: Call to recv from 10.0.0.2<43210> failed : Connection reset by peer"
const std::regex kRecv(R"(Call to (recv|send) from (\S+) failed : (.+)$)");
// "Call to ibv_modify_qp failed with error No such device", "... failed with error Invalid argument errno 22",
// "Call to ibv_modify_qp failed with 110 Connection timed out, ..." (2.28)
const std::regex kVerbs(R"(((?:ibv|mlx5dv)_\w+) failed(?: with(?: error)?)? ?(?:(\d+) )?([A-Za-z][A-Za-z '\-]*[a-z])?(?: errno (\d+))?)");
const std::regex kNetNotFound(R"(network (.+?) not found)");
const std::regex kPluginLoaded(R"(Loaded (net|coll) plugin (.+?) \(v(\d+)\))");
// PyTorch: "[Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE,
// NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600013 milliseconds before timing out."
const std::regex kWatchdog(R"(Watchdog caught collective operation timeout: WorkNCCL\(SeqNum=(\d+), OpType=(\w+)(.*?)Timeout\(ms\)=(\d+)\) ran for (\d+) milliseconds)");
const std::regex kTorchRank(R"(\[(?:PG [^\]]*?)?Rank (\d+)\])");
// "[PG 1 Rank 0] Exception (either an error or timeout) detected by watchdog at work: 1580, last enqueued NCCL work: 1582, last completed NCCL work: 1579."
const std::regex kWorkState(R"(at work: (\d+), last enqueued NCCL work: (-?\d+), last completed NCCL work: (-?\d+))");
const std::regex kNcclError(R"((nccl(?:Remote|System|Internal|InvalidUsage|InvalidArgument|UnhandledCuda)Error)\b)");
const std::regex kVersionAnywhere(R"(NCCL version (\d+\.\d+\.\d+[^\s,;)]*))");
const std::regex kNcclTestsVersion(R"(nccl-library=(\d{5}))");
const std::regex kStoreTimeout(R"(Timed out after (\d+) seconds waiting for clients\. (\d+)/(\d+) clients joined)");

// strerror text -> errno name, for the errors NCCL's verbs and socket calls report.
std::string ErrnoName(std::string_view text, std::string_view number) {
  static const std::pair<std::string_view, std::string_view> kNames[] = {
      {"No such device", "ENODEV"},          {"Invalid argument", "EINVAL"},
      {"Cannot allocate memory", "ENOMEM"},  {"Operation not permitted", "EPERM"},
      {"Permission denied", "EACCES"},       {"Connection refused", "ECONNREFUSED"},
      {"Connection timed out", "ETIMEDOUT"}, {"No route to host", "EHOSTUNREACH"},
      {"Network is unreachable", "ENETUNREACH"}, {"Connection reset by peer", "ECONNRESET"},
      {"Software caused connection abort", "ECONNABORTED"}, {"Input/output error", "EIO"},
      {"Device or resource busy", "EBUSY"},  {"No such file or directory", "ENOENT"},
      {"Resource temporarily unavailable", "EAGAIN"}, {"Cannot assign requested address", "EADDRNOTAVAIL"},
      {"Operation not supported", "EOPNOTSUPP"}, {"Bad address", "EFAULT"},
      {"No data available", "ENODATA"},      {"Address family not supported by protocol", "EAFNOSUPPORT"},
      {"Protocol not supported", "EPROTONOSUPPORT"}, {"Too many open files", "EMFILE"},
      {"No space left on device", "ENOSPC"}, {"Broken pipe", "EPIPE"},
  };
  for (const auto& [t, name] : kNames) {
    if (StartsWith(text, t)) return std::string(name);
  }
  static const std::pair<std::string_view, std::string_view> kNumbers[] = {
      {"1", "EPERM"}, {"2", "ENOENT"}, {"5", "EIO"}, {"11", "EAGAIN"}, {"12", "ENOMEM"}, {"13", "EACCES"},
      {"14", "EFAULT"}, {"16", "EBUSY"}, {"19", "ENODEV"}, {"22", "EINVAL"}, {"61", "ENODATA"}, {"95", "EOPNOTSUPP"},
      {"99", "EADDRNOTAVAIL"}, {"101", "ENETUNREACH"}, {"110", "ETIMEDOUT"}, {"111", "ECONNREFUSED"},
      {"113", "EHOSTUNREACH"}};
  for (const auto& [n, name] : kNumbers) {
    if (number == n) return std::string(name);
  }
  return "";
}

// "10.0.0.2<54862>" -> "10.0.0.2"; "fe80::1%ib0<33397>" -> "fe80::1"; "[::ffff:1.2.3.4]:5" stays readable.
std::string PeerIp(std::string_view addr) {
  addr = addr.substr(0, addr.find('<'));
  addr = addr.substr(0, addr.find('%'));
  while (!addr.empty() && (addr.back() == ',' || addr.back() == '.')) addr.remove_suffix(1);
  return std::string(addr);
}

std::string Clip(std::string_view s, size_t n = 300) { return std::string(s.substr(0, n)); }

bool ParseWc(ParserState& st, const LineContext& ctx, std::string_view message) {
  Match m;
  if (!Search(message, m, kWc)) return false;
  Fields f;
  if (m[1].matched) {
    f["peer"] = m[1].str();
    f["peer_ip"] = PeerIp(m[1].str());
  }
  f["status"] = m[2].str();
  auto status = ParseInt(m[2].str());
  if (const WcStatusInfo* info = status ? FindWcStatus(static_cast<int>(*status)) : nullptr) {
    f["status_name"] = std::string(info->name);
  }
  f["vendor_err"] = m[5].str();
  if (m[6].matched) f["request"] = m[6].str();
  std::string_view rest(m[0].second, static_cast<size_t>(message.end() - m[0].second));
  Match g;
  if (Search(rest, g, kWcLocalGid)) f["local_gid"] = g[1].str();
  if (Search(rest, g, kWcRemoteGid)) f["remote_gid"] = g[1].str();
  if (Search(rest, g, kWcHca)) f["hca"] = g[1].str();
  // opcode and length vary per request: kept in the text, not in the merge key.
  Fields key = f;
  key.erase("peer");
  key.erase("vendor_err");
  key.erase("request");
  if (model::NcclEvent* e = st.AddEvent(ctx, "wc-error", message, key)) {
    for (const char* k : {"peer", "vendor_err", "request"}) {
      if (f.count(k)) e->fields.emplace(k, f[k]);
    }
  }
  return true;
}

bool ParseSocket(ParserState& st, const LineContext& ctx, std::string_view message) {
  Match m;
  if (Search(message, m, kSocketExceeded)) {
    st.AddEvent(ctx, "socket", message,
                {{"op", "connect"}, {"addr", m[1].str()}, {"peer_ip", PeerIp(m[1].str())},
                 {"error", m[2].str()}, {"errno", ErrnoName(m[2].str(), "")}, {"final", "1"}});
    return true;
  }
  if (Search(message, m, kSocketFailed)) {
    std::string error(Trim(m[2].str()));
    st.AddEvent(ctx, "socket", message,
                {{"op", "connect"}, {"addr", m[1].str()}, {"peer_ip", PeerIp(m[1].str())}, {"error", error},
                 {"errno", ErrnoName(error, "")}, {"final", ctx.warn ? "1" : "0"}});
    return true;
  }
  if (Search(message, m, kSocketRetryNew)) {
    st.AddEvent(ctx, "socket-retry", message,
                {{"addr", m[1].str()}, {"peer_ip", PeerIp(m[1].str())}, {"error", m[2].str()}});
    return true;
  }
  if (Search(message, m, kSocketRetry)) {
    st.AddEvent(ctx, "socket-retry", message, {{"error", m[1].str()}});
    return true;
  }
  if (Search(message, m, kClosed)) {
    st.AddEvent(ctx, "socket", message,
                {{"op", "closed"}, {"addr", m[1].str()}, {"peer_ip", PeerIp(m[1].str())},
                 {"error", "Connection closed by remote peer"}, {"final", "1"}});
    return true;
  }
  if (Search(message, m, kRecv)) {
    std::string error(Trim(m[3].str()));
    st.AddEvent(ctx, "socket", message,
                {{"op", m[1].str()}, {"addr", m[2].str()}, {"peer_ip", PeerIp(m[2].str())}, {"error", error},
                 {"errno", ErrnoName(error, "")}, {"final", "1"}});
    return true;
  }
  return false;
}

bool ParseVerbs(ParserState& st, const LineContext& ctx, std::string_view message) {
  if (message.find("ibv_") == std::string_view::npos && message.find("mlx5dv_") == std::string_view::npos) {
    return false;
  }
  if (message.find(" failed") == std::string_view::npos) return false;
  if (StartsWith(message, "dlvsym failed") || StartsWith(message, "dlsym failed")) {
    // At INFO level this is NCCL probing an optional symbol its rdma-core may
    // lack (mlx5dv_reg_dmabuf_mr on rdma-core < 45) and going on without it:
    // every healthy run on such a host prints it. Only a WARN is a failure.
    if (ctx.warn) st.AddEvent(ctx, "verbs", message, {{"call", "dlsym"}, {"error", Clip(message, 200)}});
    return true;
  }
  Match m;
  if (!Search(message, m, kVerbs)) return false;
  std::string error = m[3].matched ? m[3].str() : "";
  std::string number = m[4].matched ? m[4].str() : (m[2].matched ? m[2].str() : "");
  // NCCL 2.28's modify_qp line says "retrying": only the final one is a failure.
  bool retrying = message.find("retrying") != std::string_view::npos;
  st.AddEvent(ctx, retrying ? "verbs-retry" : "verbs", message,
              {{"call", m[1].str()}, {"error", error}, {"errno", ErrnoName(error, number)}});
  return true;
}

// True for a dlopen error about the plugin library itself (no plugin installed: normal).
bool PluginAbsent(std::string_view message) {
  size_t at = message.find(": cannot open shared object file");
  if (at == std::string_view::npos) return false;
  std::string_view before = message.substr(0, at);
  size_t start = before.find_last_of(" :(");
  std::string_view lib = start == std::string_view::npos ? before : before.substr(start + 1);
  return StartsWith(lib, "libnccl-net") || StartsWith(lib, "libnccl-coll") || StartsWith(lib, "libnccl-tuner") ||
         StartsWith(lib, "libnccl-profiler") || StartsWith(lib, "libnccl-env");
}

bool ParsePlugin(ParserState& st, const LineContext& ctx, std::string_view message) {
  Match m;
  if (message.find("not found") != std::string_view::npos && message.find("Error") != std::string_view::npos &&
      Search(message, m, kNetNotFound)) {
    st.AddEvent(ctx, "net-not-found", message, {{"net", m[1].str()}});
    return true;
  }
  if (message.find("Failed to open libibverbs") != std::string_view::npos ||
      message.find("Failed to open libibverbs.so") != std::string_view::npos) {
    st.AddEvent(ctx, "ib-unavailable", message, {});
    return true;
  }
  if (message.find("Failed to initialize any NET plugin") != std::string_view::npos) {
    st.AddEvent(ctx, "plugin-load", message, {{"error", Clip(message)}, {"stage", "init"}});
    return true;
  }
  bool plugin_line = StartsWith(message, "NET/Plugin") || StartsWith(message, "Plugin Path") ||
                     StartsWith(message, "P2P plugin") || StartsWith(message, "NET/OFI") ||
                     StartsWith(message, "NET/gIB") || StartsWith(message, "NET/IBext");
  if (!plugin_line) return false;
  if (Search(message, m, kPluginLoaded)) {
    if (m[1].str() == "net") st.summary.plugin[std::string(ctx.host)] = m[2].str();
    st.AddEvent(ctx, "plugin-loaded", message, {{"type", m[1].str()}, {"name", m[2].str()}, {"api", m[3].str()}});
    if (m[1].str() == "coll") st.AddEvent(ctx, "feature", message, {{"name", "CollNet"}});
    return true;
  }
  if (StartsWith(message, "P2P plugin ")) {
    std::string name(Trim(message.substr(11)));
    st.summary.plugin[std::string(ctx.host)] = name;
    st.AddEvent(ctx, "plugin-loaded", message, {{"type", "net"}, {"name", name}});
    return true;
  }
  if (StartsWith(message, "NET/OFI") || StartsWith(message, "NET/gIB")) {
    std::string name = StartsWith(message, "NET/OFI") ? "AWS Libfabric" : "gIB";
    std::string lower = ToLower(message);
    bool failed = lower.find("fail") != std::string::npos || lower.find("unable") != std::string::npos ||
                  lower.find("error") != std::string::npos || lower.find("couldn't") != std::string::npos ||
                  lower.find("could not") != std::string::npos;
    if (failed && ctx.warn) {
      st.AddEvent(ctx, "plugin-load", message, {{"name", name}, {"error", Clip(message)}, {"stage", "init"}});
    } else {
      if (!st.summary.plugin.count(std::string(ctx.host))) st.summary.plugin[std::string(ctx.host)] = name;
    }
    return true;
  }
  // Loader messages: "Plugin load returned 2 : <dlerror>", "NET/Plugin: <lib>: <dlerror>",
  // "NET/Plugin : dlerror=<dlerror> No plugin found (libnccl-net.so)".
  bool loader = message.find("returned") != std::string_view::npos || message.find("dlerror") != std::string_view::npos ||
                message.find(".so") != std::string_view::npos;
  if (!loader) return true;  // other plugin chatter ("Could not find", "Failed to find ncclNetPlugin_v8 symbol")
  if (message.find("Could not find") != std::string_view::npos ||
      message.find("Failed to find ncclNetPlugin") != std::string_view::npos ||
      message.find("Failed to find ncclCollNetPlugin") != std::string_view::npos ||
      message.find("Using internal") != std::string_view::npos || PluginAbsent(message)) {
    return true;
  }
  bool error = message.find("not found") != std::string_view::npos || message.find("undefined symbol") != std::string_view::npos ||
               message.find("cannot open shared object") != std::string_view::npos ||
               message.find("wrong ELF class") != std::string_view::npos ||
               message.find("invalid ELF header") != std::string_view::npos || message.find("returned") != std::string_view::npos;
  if (error) st.AddEvent(ctx, "plugin-load", message, {{"error", Clip(message)}, {"stage", "load"}});
  return true;
}

bool ParseFeature(ParserState& st, const LineContext& ctx, std::string_view message) {
  if (StartsWith(message, "NVLS multicast support is available")) {
    st.AddEvent(ctx, "feature", message, {{"name", "NVLS"}});
    return true;
  }
  if (StartsWith(message, "NVLS multicast support is not available")) return true;
  size_t nvls = message.find(" nvls channels");
  if (nvls != std::string_view::npos) {
    // "16 coll channels, 16 collnet channels, 16 nvls channels, ..." (counts before the words)
    size_t start = message.rfind(", ", nvls);
    std::string_view n = start == std::string_view::npos ? "" : message.substr(start + 2, nvls - start - 2);
    if (!n.empty() && n != "0") st.AddEvent(ctx, "feature", message.substr(0, 0), {{"name", "NVLS"}});
    return true;
  }
  if (message.find("CollNet") != std::string_view::npos &&
      (message.find("Connected") != std::string_view::npos || message.find("enabled") != std::string_view::npos)) {
    st.AddEvent(ctx, "feature", message, {{"name", "CollNet"}});
    return true;
  }
  if (message.find("Loaded coll plugin") != std::string_view::npos) {
    st.AddEvent(ctx, "feature", message, {{"name", "CollNet"}});
    return true;
  }
  return false;
}

// NCCL 2.29+ modes that go on without failing: a NIC-count mismatch accepted
// (NCCL_IGNORE_NET_MISMATCH, on by default in 2.30), an IB port marked failed
// (traffic moved to the other ports) and recovered.
const std::regex kNetMismatch(R"(Detected mixed local Net device counts across ranks \(min (\d+), max (\d+)\))");
const std::regex kRankNetCount(R"(^Rank (\d+) has (\d+) local Net devices \(max (\d+)\))");
const std::regex kPortFailed(R"(Device (\d+) marked as failed)");
const std::regex kPortRecovered(R"(Marking device (\d+) as recovered)");

bool ParseSilentMode(ParserState& st, const LineContext& ctx, std::string_view message) {
  Match m;
  if (StartsWith(message, "Detected mixed local Net device counts") && Search(message, m, kNetMismatch)) {
    bool ignored = message.find("Ignoring") != std::string_view::npos;
    st.AddEvent(ctx, "net-count-mismatch", message,
                {{"min", m[1].str()}, {"max", m[2].str()}, {"ignored", ignored ? "1" : "0"}});
    return ignored;  // the failing (WARN) form stays a WARN for the catalogue too
  }
  if (StartsWith(message, "Rank ") && Search(message, m, kRankNetCount)) {
    st.AddEvent(ctx, "net-count-rank", message, {{"rank", m[1].str()}, {"count", m[2].str()}, {"max", m[3].str()}});
    return true;
  }
  if (StartsWith(message, "NET/IB") && (message.find("marked as failed") != std::string_view::npos ||
                                         message.find("as recovered") != std::string_view::npos)) {
    if (Search(message, m, kPortFailed)) {
      st.AddEvent(ctx, "ib-port-failed", message, {{"device", m[1].str()}});
      return true;
    }
    if (Search(message, m, kPortRecovered)) {
      st.AddEvent(ctx, "ib-port-recovered", message, {{"device", m[1].str()}});
      return true;
    }
  }
  return false;
}

}  // namespace

// NCCL's WARN text as a framework relayed it (without NCCL's prefix): an
// event when a rule of the parser knows it, else a WARN like NCCL's own.
void RelayWarn(ParserState& st, const LineContext& ctx_in, std::string_view what) {
  LineContext warn = ctx_in;
  warn.warn = true;
  if (ParseEventLine(st, warn, what)) return;
  if (st.summary.warnings.size() < kMaxWarnings) {
    st.summary.warnings.push_back(fmt::format("{}:{}: {}", ctx_in.file, ctx_in.line, what));
  }
  st.AddEvent(warn, "warn", what, {{"text", std::string(what.substr(0, 200))}, {"source", ""}});
}

bool ParseEventLine(ParserState& st, const LineContext& ctx, std::string_view message) {
  if (message.find("Got completion") != std::string_view::npos) return ParseWc(st, ctx, message);
  // Cheap filters before the regexes: most INFO lines are none of these.
  if (message.find("onnect to ") != std::string_view::npos || message.find("Connection closed") != std::string_view::npos ||
      message.find("Call to recv") != std::string_view::npos || message.find("Call to send") != std::string_view::npos ||
      message.find("Call to connect") != std::string_view::npos) {
    if (ParseSocket(st, ctx, message)) return true;
  }
  if (ParseVerbs(st, ctx, message)) return true;
  if (ParsePlugin(st, ctx, message)) return true;
  if (message.find("remote process exited or there was a network error") != std::string_view::npos) {
    st.AddEvent(ctx, "peer-gone", message, {});
    return true;
  }
  if (ParseFeature(st, ctx, message)) return true;
  if (!message.empty() && (message[0] == 'D' || message[0] == 'R' || message[0] == 'N') && ParseSilentMode(st, ctx, message)) return true;
  if (ctx.warn) {
    Match m;
    if (Search(message, m, kNcclError)) {
      st.AddEvent(ctx, "nccl-error", message, {{"error", m[1].str()}});
      return true;
    }
  }
  return false;
}

void ParseFrameworkLine(ParserState& st, const LineContext& ctx_in, std::string_view text) {
  // Cheap filters first: most lines of a job's output are none of these.
  bool nccl = text.find("NCCL") != std::string_view::npos || text.find("nccl") != std::string_view::npos;
  bool watchdog = text.find("atchdog") != std::string_view::npos;
  bool store = text.find("clients joined") != std::string_view::npos;
  // Frameworks relay NCCL's last error on its own line ("Last error:\n<NCCL's WARN text>").
  bool relayed = StartsWith(text, "socket") || StartsWith(text, "Call to ") || StartsWith(text, "NET/") ||
                 text.find("Last error:") != std::string_view::npos;
  // The line after a bare "Last error:" is NCCL's WARN text, whatever it starts with.
  bool after_last_error = ctx_in.line == st.last_error_line + 1 && ctx_in.file == st.last_error_file;
  // (the relayed text may name an NCCL function: "ncclSocketInit: connecting to ...")
  if ((relayed && !nccl) || after_last_error) {
    std::string_view what = text;
    if (size_t at = what.find("Last error:"); at != std::string_view::npos) what = Trim(what.substr(at + 11));
    if (what.empty() && text.find("Last error:") != std::string_view::npos) {
      st.last_error_file = std::string(ctx_in.file);
      st.last_error_line = ctx_in.line;
      return;
    }
    if (!what.empty()) RelayWarn(st, ctx_in, what);
    return;
  }
  if (!nccl && !watchdog && !store) return;
  LineContext ctx = ctx_in;
  Match m;
  int torch_rank = -1;
  if (Search(text, m, kTorchRank)) torch_rank = static_cast<int>(ParseInt(m[1].str()).value_or(-1));
  if (torch_rank < 0) torch_rank = ctx.launcher_rank;
  ctx.launcher_rank = torch_rank;
  if (watchdog && Search(text, m, kWatchdog)) {
    Fields f{{"seq", m[1].str()}, {"op", m[2].str()}, {"timeout_ms", m[4].str()}};
    if (torch_rank >= 0) f["rank"] = std::to_string(torch_rank);
    if (model::NcclEvent* e = st.AddEvent(ctx, "timeout", text, f)) e->fields.emplace("ran_ms", m[5].str());
    if (torch_rank >= 0) {
      auto& seen = st.Seen(torch_rank);
      seen.timed_out = true;
      seen.file = std::string(ctx.file);
      seen.last_line = ctx.line;
    }
    return;
  }
  if (watchdog && Search(text, m, kWorkState)) {
    if (torch_rank >= 0) {
      auto& seen = st.Seen(torch_rank);
      seen.last_enqueued = ParseInt(m[2].str()).value_or(-1);
      seen.last_completed = ParseInt(m[3].str()).value_or(-1);
      seen.file = std::string(ctx.file);
      seen.last_line = ctx.line;
    }
    st.AddEvent(ctx, "watchdog-work", text,
                {{"rank", std::to_string(torch_rank)}, {"work", m[1].str()}, {"last_enqueued", m[2].str()},
                 {"last_completed", m[3].str()}});
    return;
  }
  if (watchdog && text.find("watchdog got stuck") != std::string_view::npos) {
    st.AddEvent(ctx, "timeout", text, {{"op", "watchdog-heartbeat"}, {"rank", std::to_string(torch_rank)}});
    return;
  }
  if (store && Search(text, m, kStoreTimeout)) {
    st.AddEvent(ctx, "store-timeout", text, {{"seconds", m[1].str()}, {"joined", m[2].str()}, {"world", m[3].str()}});
    return;
  }
  if (!nccl) return;
  if (Search(text, m, kVersionAnywhere)) st.AddVersion(ctx, m[1].str());
  if (Search(text, m, kNcclTestsVersion)) {
    int code = static_cast<int>(ParseInt(m[1].str()).value_or(0));
    if (code > 20000) st.AddVersion(ctx, fmt::format("{}.{}.{}", code / 10000, code / 100 % 100, code % 100));
  }
  if (text.find("remote process exited or there was a network error") != std::string_view::npos) {
    st.AddEvent(ctx, "peer-gone", text, {{"rank", std::to_string(torch_rank)}});
  } else if (Search(text, m, kNcclError)) {
    st.AddEvent(ctx, "nccl-error", text, {{"error", m[1].str()}, {"rank", std::to_string(torch_rank)}});
  } else if (size_t at = text.find("Last error:"); at != std::string_view::npos) {
    // "... NCCL version 2.20.5 ... Last error: NET/IB : Got completion ..." on one line.
    std::string_view what = Trim(text.substr(at + 11));
    if (what.empty()) {
      st.last_error_file = std::string(ctx.file);
      st.last_error_line = ctx.line;
    } else {
      RelayWarn(st, ctx, what);
    }
  } else if (text.find("Got completion") != std::string_view::npos) {
    ParseWc(st, ctx, text);
  }
}

}  // namespace fabcheck::logs
