#include "agent/coll_service.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <set>
#include <fstream>

#include "base/log.h"
#include "base/strings.h"
#include "base/temp_dir.h"
#include "base/units.h"
#include "coll/busbw.h"
#include "coll/coll.h"
#include "coll/launch.h"
#include "control/api.h"
#include "net/auth.h"

namespace fabcheck::agent {
namespace {

constexpr int kMaxRanksPerNode = 64;
constexpr int kMaxWorld = 1 << 16;
constexpr int kMinRendezvousPort = 1024;

// "0.0.0.0", "::" and "" all mean every address: the ranks need no bind then.
bool EveryAddress(const std::string& host) { return host.empty() || host == "0.0.0.0" || host == "::"; }

Result<int> IntField(const nlohmann::json& j, const char* name, int fallback, int lo, int hi) {
  if (!j.contains(name)) return fallback;
  const auto& v = j[name];
  if (!v.is_number_integer() || v.get<int64_t>() < lo || v.get<int64_t>() > hi) {
    return InvalidArgumentError(fmt::format("/v1/coll: \"{}\" must be an integer from {} to {}", name, lo, hi));
  }
  return v.get<int>();
}

Result<std::string> StringField(const nlohmann::json& j, const char* name, std::string fallback) {
  if (!j.contains(name)) return fallback;
  if (!j[name].is_string()) return InvalidArgumentError(fmt::format("/v1/coll: \"{}\" must be a string", name));
  return j[name].get<std::string>();
}

// The last `n` lines of `text`, joined with " | ".
std::string LastLines(const std::string& text, size_t n) {
  auto lines = Split(text, '\n', /*skip_empty=*/true);
  if (lines.size() > n) lines.erase(lines.begin(), lines.end() - static_cast<std::ptrdiff_t>(n));
  return Join(lines, " | ");
}

// The first `max_bytes` of a file ("" when unreadable): a long NCCL log is
// cut, never refused (its init lines, which say the transports, come first).
std::string ReadHead(const std::string& path, uint64_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  std::string text(max_bytes, '\0');
  in.read(text.data(), static_cast<std::streamsize>(max_bytes));
  text.resize(static_cast<size_t>(std::max<std::streamsize>(in.gcount(), 0)));
  return text;
}

}  // namespace

Result<CollRankRequest> ParseCollRankRequest(const nlohmann::json& j) {
  if (!j.is_object()) return InvalidArgumentError("/v1/coll: the body must be a JSON object");
  CollRankRequest r;
  ASSIGN_OR_RETURN(r.world, IntField(j, "world", 1, 1, kMaxWorld));
  ASSIGN_OR_RETURN(r.first_rank, IntField(j, "first_rank", 0, 0, kMaxWorld - 1));
  ASSIGN_OR_RETURN(r.nprocs, IntField(j, "nprocs", 1, 1, kMaxRanksPerNode));
  if (r.first_rank + r.nprocs > r.world) {
    return InvalidArgumentError(fmt::format("/v1/coll: \"first_rank\" and \"nprocs\": ranks {}..{} do not fit in a "
                                            "world of {}",
                                            r.first_rank, r.first_rank + r.nprocs - 1, r.world));
  }
  ASSIGN_OR_RETURN(r.coordinator, StringField(j, "coordinator", ""));
  auto hp = control::ParseHostPort(r.coordinator, 0);
  if (!hp.ok() || hp->port <= 0) {
    return InvalidArgumentError(fmt::format("/v1/coll: \"coordinator\" must be HOST:PORT, not '{}'", r.coordinator));
  }
  // The agent may run as root: its rank 0 must not take a system port.
  if (hp->port < kMinRendezvousPort) {
    return InvalidArgumentError(fmt::format("/v1/coll: \"coordinator\" port {} is a privileged port; use {} to 65535 "
                                            "(ladder --coll-port)",
                                            hp->port, kMinRendezvousPort));
  }
  ASSIGN_OR_RETURN(r.token, StringField(j, "token", ""));
  if (r.token.size() < net::kMinTokenLength || r.token.size() > net::kMaxTokenLength ||
      r.token.find_first_of(" \t\r\n") != std::string::npos) {
    return InvalidArgumentError(fmt::format("/v1/coll: \"token\" must be {} to {} characters without spaces",
                                            net::kMinTokenLength, net::kMaxTokenLength));
  }
  ASSIGN_OR_RETURN(r.ops, StringField(j, "ops", r.ops));
  if (auto ops = coll::ParseCollOpList(r.ops); !ops.ok()) {
    return InvalidArgumentError("/v1/coll: \"ops\": " + ops.status().message());
  }
  ASSIGN_OR_RETURN(r.sizes, StringField(j, "sizes", r.sizes));
  if (auto sizes = ParseSizeList(r.sizes); !sizes.ok()) {
    return InvalidArgumentError("/v1/coll: \"sizes\": " + sizes.status().message());
  }
  ASSIGN_OR_RETURN(r.iters, IntField(j, "iters", r.iters, 1, 100000));
  ASSIGN_OR_RETURN(r.warmup, IntField(j, "warmup", r.warmup, 0, 100000));
  if (j.contains("timeout_s")) {
    if (!j["timeout_s"].is_number() || j["timeout_s"].get<double>() <= 0 || j["timeout_s"].get<double>() > 86400) {
      return InvalidArgumentError("/v1/coll: \"timeout_s\" must be a number of seconds from 0 to 86400");
    }
    r.timeout_s = j["timeout_s"].get<double>();
  }
  ASSIGN_OR_RETURN(r.gdr_level, StringField(j, "gdr_level", ""));
  static const std::set<std::string> kGdrLevels = {"", "LOC", "PIX", "PXB", "PHB", "SYS"};
  if (!kGdrLevels.count(r.gdr_level)) {
    return InvalidArgumentError("/v1/coll: \"gdr_level\" must be one of NCCL's NCCL_NET_GDR_LEVEL values LOC, PIX, "
                                "PXB, PHB, SYS (or absent)");
  }
  ASSIGN_OR_RETURN(r.ib_hca, StringField(j, "ib_hca", ""));
  constexpr size_t kMaxHcaList = 256;
  const bool hca_ok = r.ib_hca.size() <= kMaxHcaList &&
                      std::all_of(r.ib_hca.begin(), r.ib_hca.end(), [](char ch) {
                        return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-' || ch == ':' ||
                               ch == ',' || ch == '=' || ch == '^';
                      });
  if (!hca_ok) {
    return InvalidArgumentError("/v1/coll: \"ib_hca\" must be an NCCL_IB_HCA list (device names with :port, ',' "
                                "between, a leading '=' or '^'), at most 256 characters");
  }
  return r;
}

nlohmann::json ToJson(const CollRankRequest& r) {
  nlohmann::json j = {{"first_rank", r.first_rank}, {"world", r.world}, {"nprocs", r.nprocs}, {"coordinator", r.coordinator},
          {"token", r.token},           {"ops", r.ops},     {"sizes", r.sizes},   {"iters", r.iters},
          {"warmup", r.warmup},         {"timeout_s", r.timeout_s}};
  if (!r.gdr_level.empty()) j["gdr_level"] = r.gdr_level;
  if (!r.ib_hca.empty()) j["ib_hca"] = r.ib_hca;
  return j;
}

std::vector<std::string> CollRankArgv(const CollRankRequest& r, const CollAgentSide& side) {
  // The rendezvous waits at most the job's time; the ranks' own deadline
  // (the agent's) stops the rest.
  std::vector<std::string> argv = {"fabcheck",
          "coll",
          "--json",
          "--op",
          r.ops,
          "--sizes",
          r.sizes,
          "--iters",
          std::to_string(r.iters),
          "--warmup",
          std::to_string(r.warmup),
          "--coordinator",
          r.coordinator,
          "--world",
          std::to_string(r.world),
          "--rendezvous-timeout",
          fmt::format("{}s", static_cast<int>(std::min(r.timeout_s, 600.0)))};
  if (side.tls && side.tls->enabled()) {
    // The agent's own files: rank 0 serves the board with the agent's
    // certificate, the other ranks verify it (and, with a CA, present theirs).
    for (const auto& [option, path] : {std::pair{"--tls-cert", side.tls->cert}, {"--tls-key", side.tls->key},
                                       {"--tls-ca", side.tls->ca}}) {
      if (path.empty()) continue;
      argv.push_back(option);
      argv.push_back(path);
    }
  }
  return argv;
}

std::vector<std::pair<std::string, std::string>> CollRankEnv(const CollRankRequest& r, const CollAgentSide& side,
                                                             const std::string& logs) {
  std::vector<std::pair<std::string, std::string>> env = {{"FABCHECK_RENDEZVOUS_TOKEN", r.token},
                                                          {"FABCHECK_NCCL_LOG_DIR", logs},
                                                          {"NCCL_DEBUG", "INFO"},
                                                          {"NCCL_DEBUG_FILE", logs + "/nccl.%h.%p.log"},
                                                          {"NCCL_DEBUG_SUBSYS", "INIT,BOOTSTRAP,ENV,NET,GRAPH"}};
  if (!EveryAddress(side.bind)) env.emplace_back("FABCHECK_RENDEZVOUS_BIND", side.bind);
  if (!r.gdr_level.empty()) env.emplace_back("NCCL_NET_GDR_LEVEL", r.gdr_level);
  if (!r.ib_hca.empty()) env.emplace_back("NCCL_IB_HCA", r.ib_hca);
  return env;
}

Result<nlohmann::json> CollService::Run(const nlohmann::json& body) {
  ASSIGN_OR_RETURN(CollRankRequest r, ParseCollRankRequest(body));
  if (busy_.exchange(true)) {
    return FailedPreconditionError("agent busy: it is already running the ranks of a collective job");
  }
  struct Release {
    std::atomic<bool>& flag;
    ~Release() { flag = false; }
  } release{busy_};

  ASSIGN_OR_RETURN(std::unique_ptr<TempDir> dir, TempDir::Create("fabcheck-l4"));
  const std::string logs = dir->path() + "/nccl";
  // Only the folder: the ranks get NCCL's logging variables in their own
  // environment below (setenv in this threaded server would race).
  std::error_code ec;
  std::filesystem::create_directories(logs, ec);
  if (ec) return UnavailableError("cannot create " + logs + " for NCCL's log: " + ec.message() + " (is TMPDIR full?)");
  coll::LaunchSpec spec;
  spec.nprocs = r.nprocs;
  spec.first_rank = r.first_rank;
  spec.world = r.world;
  spec.argv = CollRankArgv(r, side_);
  spec.executable = executable_;
  for (auto& [name, value] : CollRankEnv(r, side_, logs)) spec.env.emplace(name, value);
  spec.timeout_seconds = r.timeout_s;
  spec.stdout_pattern = dir->path() + "/rank-{rank}.out";
  spec.stderr_pattern = dir->path() + "/rank-{rank}.err";
  LOG_INFO("agent", "coll ranks {}..{} of {} (coordinator {})", r.first_rank, r.first_rank + r.nprocs - 1, r.world,
           r.coordinator);
  const auto t0 = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(coll::LaunchOutcome outcome, coll::RunLocalRanks(spec));

  nlohmann::json answer = {{"exit_codes", outcome.exit_codes},
                           {"timed_out", outcome.timed_out},
                           {"elapsed_s", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()},
                           {"nccl_logs", nlohmann::json::object()},
                           {"errors", nlohmann::json::array()},
                           {"stopped", nlohmann::json::array()}};
  for (int local = 0; local < r.nprocs; ++local) {
    const int rank = r.first_rank + local;
    if (outcome.exit_codes[local] == 0) continue;
    std::string said = LastLines(ReadHead(fmt::format("{}/rank-{}.err", dir->path(), rank), kMaxCollLogBytes), 3);
    if (outcome.signalled[local] && !outcome.timed_out && said.empty()) {
      // Stopped because a rank beside it failed: that one says why.
      answer["stopped"].push_back(rank);
      continue;
    }
    answer["errors"].push_back(fmt::format("rank {}: exit {}{}{}", rank, outcome.exit_codes[local],
                                           outcome.timed_out ? " (stopped at the time limit)" : "",
                                           said.empty() ? "" : ": " + said));
  }
  if (r.first_rank == 0) {
    // Rank 0 prints the job's report (every rank's results) as JSON.
    std::string out = ReadHead(dir->path() + "/rank-0.out", kMaxCollLogBytes);
    if (!out.empty()) {
      auto report = nlohmann::json::parse(out, nullptr, false);
      // A rank that could not run prints a fabcheck.error/v1 document (its
      // stderr, kept above, says the same): not a report.
      const bool error_document = report.is_object() && report.value("schema", "") == "fabcheck.error/v1";
      if (!report.is_discarded() && report.is_object() && !error_document) {
        answer["report"] = std::move(report);
      } else if (!error_document) {
        answer["errors"].push_back("rank 0 printed something that is not its JSON report");
      }
    }
  }
  for (const auto& file : coll::NcclLogFiles(logs)) {
    answer["nccl_logs"][std::filesystem::path(file).filename().string()] = ReadHead(file, kMaxCollLogBytes);
  }
  return answer;
}

}  // namespace fabcheck::agent
