#include "coll/coll.h"
#include "base/utc_time.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <map>

#include "base/log.h"
#include "base/strings.h"
#include "logs/nccl_log.h"
#include "fabcheck/version.h"

extern char** environ;

namespace fabcheck::coll {
namespace {

void SetIfUnset(const char* name, const std::string& value) {
  const char* current = std::getenv(name);
  if (current == nullptr || *current == '\0') ::setenv(name, value.c_str(), 1);
}

}  // namespace

Status SetupNcclLogging(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return UnavailableError(fmt::format("cannot create the NCCL log directory {}: {} (choose another with --nccl-log-dir)",
                                        dir, ec.message()));
  }
  SetIfUnset("NCCL_DEBUG", "INFO");
  SetIfUnset("NCCL_DEBUG_FILE", dir + "/nccl.%h.%p.log");
  // INIT: channels and transports; NET: NICs and GPUDirect; GRAPH: NCCL's
  // bandwidth estimate from the topology; ENV: variables it honoured.
  SetIfUnset("NCCL_DEBUG_SUBSYS", "INIT,BOOTSTRAP,ENV,NET,GRAPH");
  return Status::Ok();
}

namespace {

// Whether `name` fits an NCCL_DEBUG_FILE file-name pattern: %h is the host
// name, %p the process ID (NCCL's two), %% a percent sign.
bool FitsDebugFilePattern(std::string_view pattern, std::string_view name) {
  if (pattern.empty()) return name.empty();
  if (pattern.size() >= 2 && pattern[0] == '%' && (pattern[1] == 'h' || pattern[1] == 'p')) {
    const bool digits = pattern[1] == 'p';
    for (size_t taken = 1; taken <= name.size(); ++taken) {
      char c = name[taken - 1];
      if (c == '/' || (digits && (c < '0' || c > '9'))) break;
      if (FitsDebugFilePattern(pattern.substr(2), name.substr(taken))) return true;
    }
    return false;
  }
  size_t literal = pattern.size() >= 2 && pattern[0] == '%' && pattern[1] == '%' ? 2 : 1;
  return !name.empty() && name[0] == pattern[literal - 1] && FitsDebugFilePattern(pattern.substr(literal), name.substr(1));
}

}  // namespace

std::vector<std::string> NcclLogFiles(const std::string& dir, std::filesystem::file_time_type since) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    if (StartsWith(name, "nccl.") && EndsWith(name, ".log")) files.push_back(entry.path().string());
  }
  // The user's own NCCL_DEBUG_FILE wins over fabcheck's: a fixed file, or a
  // %h/%p pattern whose files this run wrote (not older runs' beside them).
  const char* user = std::getenv("NCCL_DEBUG_FILE");
  if (files.empty() && user != nullptr && *user != '\0') {
    std::filesystem::path pattern(user);
    if (std::string_view(user).find('%') == std::string_view::npos) {
      if (std::filesystem::exists(pattern, ec)) files.push_back(user);
    } else if (pattern.parent_path().string().find('%') == std::string::npos) {
      std::filesystem::path parent = pattern.has_parent_path() ? pattern.parent_path() : ".";
      for (const auto& entry : std::filesystem::directory_iterator(parent, ec)) {
        if (!entry.is_regular_file(ec) || entry.last_write_time(ec) < since) continue;
        if (FitsDebugFilePattern(pattern.filename().string(), entry.path().filename().string())) {
          files.push_back(entry.path().string());
        }
      }
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

void AddExpectationAndFindings(model::CollReport* report) {
  using model::Finding;
  using model::Severity;
  // NCCL's ring estimate: channels x per-channel bandwidth, from the links it found.
  if (report->nccl_log && report->nranks > 1) {
    for (const auto& g : report->nccl_log->graphs) {
      if (g.pattern != 4 || g.type_intra == "LOC") continue;  // NCCL_TOPO_PATTERN_RING between GPUs
      bool multi_node = report->nccl_log->nodes > 1;
      double bw = g.channels * (multi_node ? g.bw_inter : g.bw_intra);
      if (bw > report->expected.busbw_gbps) {
        report->expected.busbw_gbps = bw;
        report->expected.basis = fmt::format(
            "NCCL's ring estimate from the detected topology: {} channels x {:.1f} GB/s over {} ({})", g.channels,
            multi_node ? g.bw_inter : g.bw_intra, multi_node ? g.type_inter : g.type_intra, g.host);
      }
    }
  }
  if (report->wrong > 0) {
    Finding f;
    f.id = "coll.wrong";
    f.severity = Severity::kFail;
    f.group = "NCCL";
    f.object = report->mode;
    f.message = fmt::format("{} elements were wrong after the collectives (--check)", report->wrong);
    for (const auto& op : report->results) {
      if (op.wrong > 0) f.evidence.push_back(fmt::format("{}: {} wrong", op.op, op.wrong));
    }
    f.remedy = "data corruption: rerun with NCCL_P2P_DISABLE=1 or NCCL_PROTO=Simple to isolate the path, check dmesg "
               "for Xid/PCIe AER errors and the GPU's ECC counters";
    report->findings.push_back(std::move(f));
  }
  if (report->nranks > 1 && report->expected.busbw_gbps > 0) {
    for (const auto& op : report->results) {
      if (op.rows.empty() || (op.op != "all_reduce" && op.op != "all_gather" && op.op != "reduce_scatter")) continue;
      const auto& last = op.rows.back();
      if (last.size_bytes < (256ull << 20)) continue;  // small sizes measure latency, not bandwidth
      double ratio = last.out_of_place.busbw_gbps / report->expected.busbw_gbps;
      Finding f;
      f.id = "coll.busbw";
      f.group = "NCCL";
      f.object = fmt::format("{} at {} B", op.op, last.size_bytes);
      f.evidence.push_back(fmt::format("busbw {:.1f} GB/s; expected about {:.1f} GB/s ({})", last.out_of_place.busbw_gbps,
                                       report->expected.busbw_gbps, report->expected.basis));
      if (ratio < 0.6) {
        f.severity = Severity::kWarn;
        f.message = fmt::format("{} busbw is {:.0f}% of what the topology allows", op.op, ratio * 100);
        f.remedy = "look at the transports NCCL used (below), GPU clocks and PCIe/NVLink link state (fabcheck gpu, "
                   "nvidia-smi nvlink -s)";
      } else {
        f.severity = Severity::kPass;
        f.message = fmt::format("{} busbw is {:.0f}% of NCCL's topology estimate", op.op, ratio * 100);
      }
      report->findings.push_back(std::move(f));
    }
  }
  // The NCCL log's own verdicts are the diagnose rules': the command adds them
  // (diagnose sits above coll).
  if (!report->nccl_log) {
    Finding f;
    f.id = "coll.nccl-log.missing";
    f.severity = Severity::kUnknown;
    f.group = "NCCL";
    f.object = report->nccl_log_file;
    f.message = "no NCCL log was found, so which transport NCCL used is unknown";
    f.remedy = "leave NCCL_DEBUG unset (fabcheck sets INFO) or set NCCL_DEBUG=INFO";
    report->findings.push_back(std::move(f));
  }
}

Result<model::CollReport> RunColl(const CollOptions& options, const RankSetup& setup, const std::string& log_dir) {
  model::CollReport report;
  report.fabcheck_version = kVersion;
  report.start_time = UtcNowIso8601();
  std::vector<std::string> ops;
  for (CollOp op : options.ops) ops.emplace_back(CollOpName(op));
  std::vector<std::string> sizes;
  for (uint64_t s : options.sizes) sizes.push_back(std::to_string(s));
  report.args = {{"op", Join(ops, ",")},
                 {"sizes", Join(sizes, ",")},
                 {"dtype", std::string(NcclTypeName(options.dtype))},
                 {"redop", std::string(NcclRedOpName(options.redop))},
                 {"root", std::to_string(options.root)},
                 {"iters", std::to_string(options.iters)},
                 {"warmup", std::to_string(options.warmup)},
                 {"check", options.check ? "1" : "0"}};
  RETURN_IF_ERROR(SetupNcclLogging(log_dir));
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry(*e);
    if (StartsWith(entry, "NCCL_")) {
      auto eq = entry.find('=');
      report.env[entry.substr(0, eq)] = eq == std::string::npos ? "" : entry.substr(eq + 1);
    }
  }
  report.nccl_log_file = log_dir;
  const auto started = std::filesystem::file_time_type::clock::now() - std::chrono::seconds(2);
  RETURN_IF_ERROR(RunCollectives(options, setup, &report));
  char host[256] = {};
  ::gethostname(host, sizeof(host) - 1);
  for (auto& r : report.ranks) r.host = host;
  // Rank 0 reads every rank's log (all in `log_dir` for local ranks).
  if (setup.single_process || setup.env.rank == 0) {
    auto files = NcclLogFiles(log_dir, started);
    if (!files.empty()) {
      report.nccl_log_file = Join(files, ", ");
      auto summary = logs::ParseNcclLogFiles(files);
      if (summary.ok()) report.nccl_log = std::move(summary).value();
    }
  }
  AddExpectationAndFindings(&report);
  return report;
}

RankOutcome OutcomeOf(const Result<model::CollReport>& report, int rank, const std::string& host) {
  RankOutcome o;
  o.rank = rank;
  o.host = host;
  if (!report.ok()) {
    o.error = report.status().message();
    return o;
  }
  for (const auto& r : report->ranks) {
    if (r.rank != rank) continue;
    o.cuda_device = r.cuda_device;
    o.pci_bus_id = r.pci_bus_id;
    o.name = r.name;
  }
  return o;
}

void MergeRankOutcomes(const std::vector<RankOutcome>& outcomes, model::CollReport* report) {
  std::map<int, model::CollRankInfo> ranks;
  for (const auto& r : report->ranks) ranks[r.rank] = r;
  std::vector<std::string> failed;
  for (const auto& o : outcomes) {
    if (!o.error.empty()) {
      model::Finding f;
      f.id = "coll.rank";
      f.severity = model::Severity::kFail;
      f.group = "NCCL";
      f.object = fmt::format("rank {}{}", o.rank, o.host.empty() ? "" : " on " + o.host);
      f.message = fmt::format("rank {} did not complete the run", o.rank);
      f.evidence.push_back(o.error);
      f.remedy = "run that rank's node alone (fabcheck coll on it, fabcheck gpu) and read the rank's own output";
      report->findings.push_back(std::move(f));
      continue;
    }
    if (ranks.count(o.rank)) continue;  // rank 0's own entry is already complete
    model::CollRankInfo info;
    info.rank = o.rank;
    info.host = o.host;
    info.cuda_device = o.cuda_device;
    info.pci_bus_id = o.pci_bus_id;
    info.name = o.name;
    ranks[o.rank] = std::move(info);
  }
  report->ranks.clear();
  for (auto& [rank, info] : ranks) report->ranks.push_back(std::move(info));
}

}  // namespace fabcheck::coll
