#include "coll/job.h"

#include <fmt/format.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "base/exit_codes.h"
#include "base/log.h"
#include "coll/coll.h"
#include "coll/launch.h"
#include "coll/tcp_rendezvous.h"
#include "net/auth.h"
#include "net/rank.h"

namespace fabcheck::coll {
namespace {

// Set by --nprocs for its ranks.
constexpr const char* kRendezvousEnv = "FABCHECK_RENDEZVOUS";
constexpr const char* kRendezvousTokenEnv = "FABCHECK_RENDEZVOUS_TOKEN";
constexpr const char* kLogDirEnv = "FABCHECK_NCCL_LOG_DIR";

std::string EnvOr(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::string(v) : fallback;
}

std::string TempDir() {
  std::string pattern = EnvOr("TMPDIR", "/tmp") + "/fabcheck-coll-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) return "";
  return pattern;
}

std::string HostName() {
  char hostname[256] = {};
  ::gethostname(hostname, sizeof(hostname) - 1);
  return hostname;
}

// Who this process is: rank 0 of 1 when no launcher started it.
Result<net::LaunchRank> DetectRank(int world) {
  ASSIGN_OR_RETURN(auto rank, net::DetectLaunchRank(net::ProcessEnv(), world));
  if (rank) return *rank;
  net::LaunchRank single;
  single.local_rank = 0;
  return single;
}

Result<std::optional<std::string>> Token(const JobOptions& o) {
  // The launcher's token wins over a FABCHECK_TOKEN_FILE meant for sweep/agent.
  std::string local = EnvOr(kRendezvousTokenEnv, "");
  if (!local.empty()) return std::optional<std::string>(local);
  if (o.token_file.empty()) return std::optional<std::string>();
  auto t = net::ReadTokenFile(o.token_file);
  if (!t.ok()) return InvalidArgumentError(t.status().message());
  return std::optional<std::string>(*t);
}

Result<JobOutcome> RunRank(const JobOptions& o, const net::LaunchRank& me, std::string log_dir) {
  std::string spec = o.rendezvous;
  if (spec.empty() && !o.coordinator.empty()) spec = "tcp:" + o.coordinator;
  if (spec.empty()) spec = EnvOr(kRendezvousEnv, "");
  if (spec.empty()) {
    return InvalidArgumentError(fmt::format(
        "this is rank {} of {} ({}): give every rank --coordinator HOST:PORT (rank 0's host; it listens there) "
        "or --rendezvous file:/shared/path",
        me.rank, me.size, me.source));
  }
  ASSIGN_OR_RETURN(std::optional<std::string> token, Token(o));
  RankExchangeConfig config;
  config.rank = me.rank;
  config.world_size = me.size;
  config.timeout_seconds = o.rendezvous_timeout_s;
  config.token = token;
  if (o.tls.enabled()) config.tls = o.tls;
  config.bind = o.rendezvous_bind;
  auto exchange = MakeRankExchange(spec, config);
  if (!exchange.ok()) return exchange.status().WithContext("rank " + std::to_string(me.rank));
  const std::string host = HostName();
  RankSetup setup;
  setup.single_process = false;
  setup.env = me;
  setup.rendezvous = exchange->get();
  setup.host = host;
  if (log_dir.empty()) log_dir = "/tmp/fabcheck-coll-logs";
  auto report = RunColl(o.coll, setup, log_dir);
  RankOutcome outcome = OutcomeOf(report, me.rank, host);
  if (me.rank != 0 || !report.ok()) {
    // Rank 0 collects every rank's outcome; a failure also tells the ranks
    // still waiting at the rendezvous to stop.
    Status sent = (*exchange)->Report(outcome);
    if (!sent.ok()) LOG_WARN("coll", "{}", sent.message());
    if (!report.ok()) return report.status().WithContext("rank " + std::to_string(me.rank));
    JobOutcome out;
    out.exit_code = ExitCodeOf(*report);
    return out;
  }
  auto outcomes = (*exchange)->Gather(outcome);
  if (!outcomes.ok()) return outcomes.status().WithContext("rank 0 collecting the ranks' results");
  MergeRankOutcomes(*outcomes, &*report);
  JobOutcome out;
  out.exit_code = ExitCodeOf(*report);
  out.report = std::move(*report);
  return out;
}

Result<JobOutcome> Launch(const JobOptions& o, std::string log_dir) {
  std::string dir = TempDir();
  if (dir.empty()) return UnavailableError("cannot create a temporary directory for the ranks (set TMPDIR)");
  if (log_dir.empty()) log_dir = dir + "/logs";
  RETURN_IF_ERROR(SetupNcclLogging(log_dir));
  LaunchSpec launch;
  launch.nprocs = o.nprocs;
  launch.timeout_seconds = o.launch_timeout_s;
  launch.argv = RankArgv(o.argv);
  // This process serves the rendezvous on loopback; the ranks join it.
  ASSIGN_OR_RETURN(std::string local_token, net::RandomToken());
  ASSIGN_OR_RETURN(auto server, RendezvousServer::Start("127.0.0.1", 0, o.nprocs, local_token));
  launch.env = {{kRendezvousEnv, fmt::format("join:127.0.0.1:{}", server->port())},
                {kRendezvousTokenEnv, local_token},
                {kLogDirEnv, log_dir}};
  auto code = LaunchLocalRanks(launch);
  for (const auto& problem : server->Problems()) LOG_WARN("coll", "rendezvous: {}", problem);
  if (!code.ok()) return code.status();
  JobOutcome out;
  out.exit_code = *code;
  return out;
}

}  // namespace

int ExitCodeOf(const model::CollReport& report) {
  using model::Severity;
  Severity worst = Severity::kPass;
  for (const auto& f : report.findings) worst = std::max(worst, f.severity);
  if (worst == Severity::kFail) return kExitFailures;
  if (worst == Severity::kWarn) return kExitWarnings;
  return kExitOk;
}

std::vector<std::string> RankArgv(const std::vector<std::string>& argv) {
  static const std::vector<std::string> kLauncherOnly = {"--nprocs",     "--gpus",  "--coordinator",
                                                         "--rendezvous", "--world", "--token-file",
                                                         "--tls-cert",   "--tls-key", "--tls-ca"};
  std::vector<std::string> out;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& arg = argv[i];
    bool dropped = false;
    for (const auto& name : kLauncherOnly) {
      if (arg == name) {
        ++i;  // and its value
        dropped = true;
      } else if (arg.rfind(name + "=", 0) == 0) {
        dropped = true;
      }
    }
    if (!dropped) out.push_back(arg);
  }
  return out;
}

Result<JobOutcome> RunJob(const JobOptions& o) {
  if (o.rendezvous_timeout_s <= 0) return InvalidArgumentError("--rendezvous-timeout: give a duration like 300s");
  ASSIGN_OR_RETURN(net::LaunchRank me, DetectRank(o.world));
  const std::string log_dir = o.log_dir.empty() ? EnvOr(kLogDirEnv, "") : o.log_dir;
  if (me.size > 1) return RunRank(o, me, log_dir);
  if (o.tls.enabled()) {
    return InvalidArgumentError("--tls-* secures the rendezvous of ranks on several nodes (--coordinator); one "
                                "process, or --nprocs on loopback, has none");
  }
  if (o.nprocs > 1) return Launch(o, log_dir);
  std::string dir = log_dir;
  if (dir.empty()) {
    dir = TempDir();
    if (dir.empty()) return UnavailableError("cannot create a temporary directory for NCCL's log (set TMPDIR)");
  }
  RankSetup setup;
  ASSIGN_OR_RETURN(model::CollReport report, RunColl(o.coll, setup, dir));
  JobOutcome out;
  out.exit_code = ExitCodeOf(report);
  out.report = std::move(report);
  return out;
}

}  // namespace fabcheck::coll
