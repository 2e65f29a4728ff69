// `fabcheck coll`: NCCL collectives measured as nccl-tests does, plus what
// NCCL really used (its own log, read back) and how far the figures are from
// what the topology allows.
#include <nlohmann/json.hpp>
#include <stdlib.h>

#include <cstdlib>
#include <iostream>

#include "app/command.h"
#include "app/tunables.h"
#include "base/exit_codes.h"
#include "base/json_text.h"
#include "base/log.h"
#include "base/units.h"
#include "coll/coll.h"
#include "coll/job.h"
#include "diagnose/engine.h"
#include "report/coll_text.h"

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
  fabcheck::net::TlsFiles tls;
  std::string rendezvous_bind;
  std::string rendezvous_timeout = "300s";
  std::string log_dir;
  double timeout = 1800;
};

int Fail(const fabcheck::Status& status) {
  std::cerr << "fabcheck coll: " << status.message() << "\n";
  return status.code() == fabcheck::StatusCode::kInvalidArgument ? fabcheck::kExitUsage : fabcheck::kExitError;
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
  coll::JobOptions job;
  job.coll = options;
  job.nprocs = o.nprocs;
  job.rendezvous = o.rendezvous;
  job.coordinator = o.coordinator;
  job.world = o.world;
  job.token_file = o.token_file;
  job.tls = o.tls;
  job.rendezvous_bind = o.rendezvous_bind;
  job.rendezvous_timeout_s = *rdv_timeout;
  job.log_dir = o.log_dir;
  job.launch_timeout_s = o.timeout;
  job.argv = app::CommandLine();
  auto outcome = coll::RunJob(job);
  if (!outcome.ok()) return Fail(outcome.status());
  if (!outcome->report) return outcome->exit_code;
  model::CollReport& report = *outcome->report;
  AddNcclFindings(&report);
  std::cout << (o.json ? ToJsonText(nlohmann::json(report), 2) + "\n" : report::FormatCollReport(report));
  return coll::ExitCodeOf(report);
}

fabcheck::app::RunFn Setup(CLI::App& root) {
  auto* cmd = root.add_subcommand("coll", "Run NCCL collectives, busbw as nccl-tests, and say what NCCL used (L4)");
  auto o = std::make_shared<Options>();
  fabcheck::app::Tunables t(cmd, "coll");
  t.Text("--op", o->op,
         "Collectives: all, or a comma list of all_reduce, all_gather, reduce_scatter, alltoall, broadcast, "
         "reduce, sendrecv",
         "collective list");
  t.Text("--sizes", o->sizes, "Sizes: MIN:MAX (powers of two, x2 steps) or a list, e.g. 8:8G, 1M,64M", "size list");
  t.Text("--dtype", o->dtype, "Data type (nccl-tests names: float, half, bfloat16, double, int32, int8...)", "dtype");
  t.Text("--redop", o->redop, "Reduction: sum, prod, max, min, avg", "sum|prod|max|min|avg");
  t.Integer("--root", o->root, "Root rank of broadcast and reduce", 0, 1 << 20);
  t.Integer("--iters", o->iters, "Timed iterations per size", 1, 1'000'000'000);
  t.Integer("--warmup", o->warmup, "Warm-up iterations per size", 0, 1'000'000'000);
  t.Flag("--check", o->check, "Verify every result on the host (#wrong); sum/max/min, not fp8");
  t.Flag("--json", o->json, "Print JSON (schema fabcheck.coll/v1) instead of the table");
  t.Text("--gpus", o->gpus, "One process: the CUDA devices to drive, e.g. 0-3 (default: all)", "device list");
  t.Integer("--nprocs", o->nprocs, "One process per GPU: start this many local ranks (rank i uses GPU i)", 0, 4096);
  t.Text("--coordinator", o->coordinator,
         "When started as ranks: rank 0's HOST[:PORT] (default port 18523); rank 0 listens there and hands "
         "every rank the NCCL id",
         "host[:port]");
  t.Integer("--world", o->world, "Number of ranks when the launcher gives only the rank (Indexed Job, PMIx)", 0,
            1 << 20);
  t.Text("--rendezvous", o->rendezvous,
         "Instead of --coordinator: tcp:HOST:PORT (the same), or file:/shared/path that every rank sees",
         "tcp:HOST:PORT|file:PATH");
  t.Path("--token-file", o->token_file, "The ranks' shared token for the rendezvous (first line)",
         /*dash_is_stdio=*/false, "FABCHECK_TOKEN_FILE");
  t.Tls(o->tls, fabcheck::app::Tunables::TlsRole::kRanks);
  t.Text("--rendezvous-bind", o->rendezvous_bind,
         "Rank 0: serve the rendezvous on this local address only (default: every address; an agent's ranks get "
         "the agent's --listen address)",
         "address", "FABCHECK_RENDEZVOUS_BIND");
  t.Text("--rendezvous-timeout", o->rendezvous_timeout,
         "How long a rank waits for the others to arrive, and rank 0 for their results", "duration");
  t.Path("--nccl-log-dir", o->log_dir, "Where NCCL's INFO log goes (default: a new directory under /tmp)");
  t.Seconds("--timeout", o->timeout, "Seconds before launched ranks are stopped");
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
