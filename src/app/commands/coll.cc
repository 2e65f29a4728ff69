// `fabcheck coll`: NCCL collectives measured as nccl-tests does, plus what
// NCCL really used (its own log, read back) and how far the figures are from
// what the topology allows.
#include <nlohmann/json.hpp>
#include <stdlib.h>

#include <cstdlib>
#include <iostream>

#include "app/command.h"
#include "base/exit_codes.h"
#include "base/json_text.h"
#include "base/log.h"
#include "base/units.h"
#include "base/units.h"
#include "coll/coll.h"
#include "coll/launch.h"
#include "coll/tcp_rendezvous.h"
#include "control/server.h"
#include "diagnose/engine.h"
#include "sweep/discovery.h"

namespace {

// The NCCL log's verdicts come from the diagnose rules (shared with nccl-log).
void AddNcclFindings(fabcheck::model::CollReport* report) {
  if (!report->nccl_log) return;
  report->nccl_log->findings = fabcheck::diagnose::NcclLogFindings(*report->nccl_log);
  for (const auto& f : report->nccl_log->findings) report->findings.push_back(f);
}


struct Options {
  std::string op = "all_reduce";
  std::string sizes = "8:1G";
  std::string dtype = "float";
  std::string redop = "sum";
  int root = 0;
  int iters = 20;
  int warmup = 5;
  bool check = false;
  bool json = false;
  std::string gpus;
  int nprocs = 0;
  std::string rendezvous;
  std::string coordinator;
  int world = 0;
  std::string token_file;
  std::string rendezvous_timeout = "300s";
  std::string log_dir;
  double timeout = 1800;
};

int Worst(const fabcheck::model::CollReport& report) {
  using fabcheck::model::Severity;
  Severity worst = Severity::kPass;
  for (const auto& f : report.findings) worst = std::max(worst, f.severity);
  if (worst == Severity::kFail) return fabcheck::kExitFailures;
  if (worst == Severity::kWarn) return fabcheck::kExitWarnings;
  return fabcheck::kExitOk;
}

int Fail(const fabcheck::Status& status) {
  std::cerr << "fabcheck coll: " << status.message() << "\n";
  return status.code() == fabcheck::StatusCode::kInvalidArgument ? fabcheck::kExitUsage : fabcheck::kExitError;
}

// A fresh random token for the local ranks of --nprocs (so another user's
// process on this node cannot join or read the NCCL id).
std::string RandomToken() {
  unsigned char bytes[16] = {};
  if (FILE* f = std::fopen("/dev/urandom", "rb")) {
    if (std::fread(bytes, 1, sizeof(bytes), f) != sizeof(bytes)) bytes[0] ^= 1;
    std::fclose(f);
  }
  std::string out;
  for (unsigned char b : bytes) out += fmt::format("{:02x}", b);
  return out;
}

// Who this process is: fabcheck's own launcher and torchrun first (coll's),
// then mpirun/PMI/PMIx/Slurm/Indexed Job exactly as `sweep` reads them.
fabcheck::Result<fabcheck::coll::RankEnv> DetectRank(int world) {
  using namespace fabcheck;
  ASSIGN_OR_RETURN(coll::RankEnv env, coll::RankFromEnvironment());
  if (!env.source.empty()) return env;
  ASSIGN_OR_RETURN(auto spmd, sweep::DetectSpmd(sweep::ProcessEnv(), world, /*min_size=*/1));
  if (!spmd) return env;
  env.rank = spmd->rank;
  env.world_size = spmd->size;
  env.local_rank = coll::LocalRankFromEnvironment().value_or(-1);
  env.source = spmd->source;
  return env;
}

std::string TempDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/fabcheck-coll-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) return "";
  return pattern;
}

int Run(const Options& o) {
  using namespace fabcheck;
  coll::CollOptions options;
  {
    auto ops = coll::ParseCollOpList(o.op);
    if (!ops.ok()) return Fail(ops.status());
    options.ops = *ops;
    auto sizes = ParseSizeList(o.sizes);
    if (!sizes.ok()) return Fail(sizes.status().WithContext("--sizes"));
    options.sizes = *sizes;
    auto dtype = coll::ParseNcclType(o.dtype);
    if (!dtype.ok()) return Fail(dtype.status());
    options.dtype = *dtype;
    auto redop = coll::ParseNcclRedOp(o.redop);
    if (!redop.ok()) return Fail(redop.status());
    options.redop = *redop;
    if (!o.gpus.empty()) {
      auto gpus = ParseCpuList(o.gpus);
      if (!gpus.ok()) return Fail(gpus.status().WithContext("--gpus"));
      options.devices = *gpus;
    }
  }
  options.root = o.root;
  options.iters = o.iters;
  options.warmup = o.warmup;
  options.check = o.check;

  auto rdv_timeout = ParseDurationSeconds(o.rendezvous_timeout);
  if (!rdv_timeout.ok() || *rdv_timeout <= 0) {
    return Fail(InvalidArgumentError("--rendezvous-timeout: give a duration like 300s or 5m"));
  }
  if (o.world < 0) return Fail(InvalidArgumentError("--world must be positive"));
  auto env = DetectRank(o.world);
  if (!env.ok()) return Fail(env.status());
  std::optional<std::string> token;
  if (const char* t = std::getenv("FABCHECK_RENDEZVOUS_TOKEN"); t != nullptr && *t != '\0') {
    // Set by --nprocs for its ranks: it wins over a FABCHECK_TOKEN_FILE meant for sweep/agent.
    token = t;
  } else if (!o.token_file.empty()) {
    auto t = control::ReadTokenFile(o.token_file);
    if (!t.ok()) return Fail(InvalidArgumentError(t.status().message()));
    token = *t;
  }
  char hostname[256] = {};
  ::gethostname(hostname, sizeof(hostname) - 1);
  coll::RankSetup setup;
  std::string log_dir = o.log_dir;
  if (const char* d = std::getenv("FABCHECK_NCCL_LOG_DIR"); log_dir.empty() && d != nullptr) log_dir = d;

  if (env->world_size > 1) {
    // Started as one rank of many (by --nprocs, Slurm, mpirun, PMI, an
    // Indexed Job or torchrun).
    std::string spec = o.rendezvous;
    if (spec.empty() && !o.coordinator.empty()) spec = "tcp:" + o.coordinator;
    if (const char* r = std::getenv("FABCHECK_RENDEZVOUS"); spec.empty() && r != nullptr) spec = r;
    if (spec.empty()) {
      return Fail(InvalidArgumentError(fmt::format(
          "this is rank {} of {} ({}): give every rank --coordinator HOST:PORT (rank 0's host; it listens there) "
          "or --rendezvous file:/shared/path",
          env->rank, env->world_size, env->source)));
    }
    coll::RendezvousConfig config;
    config.rank = env->rank;
    config.world_size = env->world_size;
    config.timeout_seconds = *rdv_timeout;
    config.token = token;
    auto rendezvous = coll::MakeRendezvous(spec, config);
    if (!rendezvous.ok()) return Fail(rendezvous.status().WithContext("rank " + std::to_string(env->rank)));
    setup.single_process = false;
    setup.env = *env;
    setup.rendezvous = rendezvous->get();
    setup.host = hostname;
    if (log_dir.empty()) log_dir = "/tmp/fabcheck-coll-logs";
    auto report = coll::RunColl(options, setup, log_dir);
    coll::RankOutcome outcome = coll::OutcomeOf(report, env->rank, hostname);
    if (env->rank != 0 || !report.ok()) {
      // Rank 0 collects every rank's outcome; a failure also tells the
      // ranks still waiting at the rendezvous to stop.
      Status sent = (*rendezvous)->Report(outcome);
      if (!sent.ok()) LOG_WARN("coll", "{}", sent.message());
      if (!report.ok()) return Fail(report.status().WithContext("rank " + std::to_string(env->rank)));
      return Worst(*report);
    }
    auto outcomes = (*rendezvous)->Gather(outcome);
    if (!outcomes.ok()) return Fail(outcomes.status().WithContext("rank 0 collecting the ranks' results"));
    coll::MergeRankOutcomes(*outcomes, &*report);
    AddNcclFindings(&*report);
    std::cout << (o.json ? ToJsonText(nlohmann::json(*report), 2) + "\n" : coll::FormatCollReport(*report));
    return Worst(*report);
  }

  if (o.nprocs > 1) {
    std::string dir = TempDir();
    if (dir.empty()) return Fail(UnavailableError("cannot create a temporary directory for the ranks (set TMPDIR)"));
    if (log_dir.empty()) log_dir = dir + "/logs";
    Status logging = coll::SetupNcclLogging(log_dir);
    if (!logging.ok()) return Fail(logging);
    coll::LaunchSpec launch;
    launch.nprocs = o.nprocs;
    launch.timeout_seconds = o.timeout;
    launch.argv = {"fabcheck", "coll", "--op", o.op, "--sizes", o.sizes, "--dtype", o.dtype, "--redop", o.redop,
                   "--root", std::to_string(o.root), "--iters", std::to_string(o.iters), "--warmup",
                   std::to_string(o.warmup)};
    if (o.check) launch.argv.push_back("--check");
    if (o.json) launch.argv.push_back("--json");
    launch.argv.insert(launch.argv.end(), {"--rendezvous-timeout", o.rendezvous_timeout});
    // This process serves the rendezvous on loopback; the ranks join it.
    std::string local_token = RandomToken();
    auto server = coll::RendezvousServer::Start("127.0.0.1", 0, o.nprocs, local_token);
    if (!server.ok()) return Fail(server.status());
    launch.env = {{"FABCHECK_RENDEZVOUS", fmt::format("join:127.0.0.1:{}", (*server)->port())},
                  {"FABCHECK_RENDEZVOUS_TOKEN", local_token},
                  {"FABCHECK_NCCL_LOG_DIR", log_dir}};
    auto code = coll::LaunchLocalRanks(launch);
    for (const auto& problem : (*server)->Problems()) LOG_WARN("coll", "rendezvous: {}", problem);
    if (!code.ok()) return Fail(code.status());
    return *code;
  }

  if (log_dir.empty()) {
    std::string dir = TempDir();
    if (dir.empty()) return Fail(UnavailableError("cannot create a temporary directory for NCCL's log (set TMPDIR)"));
    log_dir = dir;
  }
  auto report = coll::RunColl(options, setup, log_dir);
  if (!report.ok()) return Fail(report.status());
  AddNcclFindings(&*report);
  std::cout << (o.json ? ToJsonText(nlohmann::json(*report), 2) + "\n" : coll::FormatCollReport(*report));
  return Worst(*report);
}

fabcheck::app::RunFn Setup(CLI::App& root) {
  auto* cmd = root.add_subcommand("coll", "Run NCCL collectives, busbw as nccl-tests, and say what NCCL used (L4)");
  auto o = std::make_shared<Options>();
  cmd->add_option("--op", o->op,
                  "Collectives: all, or a comma list of all_reduce, all_gather, reduce_scatter, alltoall, broadcast, "
                  "reduce, sendrecv")
      ->capture_default_str();
  cmd->add_option("--sizes", o->sizes, "Sizes: MIN:MAX (powers of two, x2 steps) or a list, e.g. 8:8G, 1M,64M")
      ->capture_default_str();
  cmd->add_option("--dtype", o->dtype, "Data type (nccl-tests names: float, half, bfloat16, double, int32, int8...)")
      ->capture_default_str();
  cmd->add_option("--redop", o->redop, "Reduction: sum, prod, max, min, avg")->capture_default_str();
  cmd->add_option("--root", o->root, "Root rank of broadcast and reduce")->capture_default_str();
  cmd->add_option("--iters", o->iters, "Timed iterations per size")->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--warmup", o->warmup, "Warm-up iterations per size")->capture_default_str()->check(CLI::NonNegativeNumber);
  cmd->add_flag("--check", o->check, "Verify every result on the host (#wrong); sum/max/min, not fp8");
  cmd->add_flag("--json", o->json, "Print JSON (schema fabcheck.coll/v1) instead of the table");
  cmd->add_option("--gpus", o->gpus, "One process: the CUDA devices to drive, e.g. 0-3 (default: all)");
  cmd->add_option("--nprocs", o->nprocs, "One process per GPU: start this many local ranks (rank i uses GPU i)");
  cmd->add_option("--coordinator", o->coordinator,
                  "When started as ranks: rank 0's HOST[:PORT] (default port 18523); rank 0 listens there and hands "
                  "every rank the NCCL id");
  cmd->add_option("--world", o->world, "Number of ranks when the launcher gives only the rank (Indexed Job, PMIx)");
  cmd->add_option("--rendezvous", o->rendezvous,
                  "Instead of --coordinator: tcp:HOST:PORT (the same), or file:/shared/path that every rank sees");
  cmd->add_option("--token-file", o->token_file, "The ranks' shared token for the rendezvous (first line)")
      ->envname("FABCHECK_TOKEN_FILE");
  cmd->add_option("--rendezvous-timeout", o->rendezvous_timeout,
                  "How long a rank waits for the others to arrive, and rank 0 for their results")
      ->capture_default_str();
  cmd->add_option("--nccl-log-dir", o->log_dir, "Where NCCL's INFO log goes (default: a new directory under /tmp)");
  cmd->add_option("--timeout", o->timeout, "Seconds before launched ranks are stopped")->capture_default_str();
  cmd->footer(
      "Figures are nccl-tests' own: algbw = bytes/time, busbw = algbw x 2(n-1)/n (all_reduce), (n-1)/n\n"
      "(all_gather, reduce_scatter, alltoall) or 1; per-rank sizes rounded as nccl-tests does; time averaged\n"
      "over iterations and ranks; out-of-place and in-place; Avg bus bandwidth over both.\n"
      "NCCL runs with NCCL_DEBUG=INFO into --nccl-log-dir (unless you set NCCL_DEBUG*), and the log is read\n"
      "back to report P2P/SHM/NET/IB/NET/Socket per connection, GPUDirect RDMA and NCCL's topology estimate.\n"
      "Ranks (one process per GPU) come from --nprocs, or from the launcher as for `sweep`: mpirun, PMI/PMIx,\n"
      "srun, a Kubernetes Indexed Job (with --world), torchrun. Rank 0 creates the NCCL id and serves it at\n"
      "--coordinator; every rank joins there (no MPI library), learns its local rank from the host names,\n"
      "and hands its result back, so rank 0's report lists every rank. A rank that never arrives is named\n"
      "after --rendezvous-timeout.\n\n"
      "Examples:\n"
      "  fabcheck coll                                   # all_reduce on every local GPU, one process\n"
      "  fabcheck coll --op all --sizes 8:8G --check     # every collective, verified\n"
      "  fabcheck coll --op all_gather --nprocs 8        # one process per GPU\n"
      "  srun -N2 --ntasks-per-node=8 fabcheck coll --coordinator $(hostname):18523 --op all\n"
      "  mpirun -np 16 --map-by ppr:8:node fabcheck coll --coordinator node01 --token-file ~/.fabcheck-token\n"
      "  # Kubernetes Indexed Job of 16 pods with one GPU each (pod 0 behind a headless Service):\n"
      "  fabcheck coll --world 16 --coordinator fabcheck-coll-0.fabcheck-coll:18523 --op all_reduce\n"
      "  srun -N2 --ntasks-per-node=8 fabcheck coll --rendezvous file:/shared/nccl-id.$SLURM_JOB_ID\n"
      "  fabcheck coll --json | jq '.results[].avg_busbw_gbps'\n\n"
      "Exit: 0 pass, 1 warnings (busbw low, GPUDirect off), 2 failures (#wrong > 0, sockets between nodes),\n"
      "3 could not run (no CUDA/NCCL/GPU), 64 bad flags.");
  return [o] { return Run(*o); };
}

const bool kRegistered = fabcheck::app::RegisterCommand({"coll", 400, &Setup});

}  // namespace
