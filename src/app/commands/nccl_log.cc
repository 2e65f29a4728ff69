// `fabcheck nccl-log FILE...`: what NCCL really used, read from its own log,
// with the NCCL rules of `fabcheck diagnose` (docs/diagnose.md).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <iostream>

#include "app/command.h"
#include "app/tunables.h"
#include "base/exit_codes.h"
#include "base/json_text.h"
#include "diagnose/engine.h"
#include "logs/nccl_log.h"
#include "report/nccl_log_text.h"

namespace {

struct Options {
  std::vector<std::string> files;
  bool json = false;
};

int Run(const Options& options) {
  using fabcheck::model::Severity;
  auto summary = fabcheck::logs::ParseNcclLogFiles(options.files);
  if (!summary.ok()) {
    std::cerr << "fabcheck nccl-log: " << summary.status().message() << "\n";
    return fabcheck::kExitError;
  }
  summary->findings = fabcheck::diagnose::NcclLogFindings(*summary);
  Severity worst = Severity::kPass;
  for (const auto& f : summary->findings) worst = std::max(worst, f.severity);
  // A log with no NCCL line and nothing else the rules judge (a framework's
  // watchdog line, a launcher's relayed error) holds nothing to judge:
  // passing it would read as "NCCL was fine" for a job that never logged
  // (NCCL_DEBUG unset, wrong file). `diagnose` of the same file says the same.
  if (summary->nccl_lines == 0 && worst < Severity::kWarn) {
    for (const auto& f : summary->findings) std::cerr << "fabcheck nccl-log: " << f.message << "\n";
    std::cerr << "fabcheck nccl-log: nothing to judge: no NCCL INFO/WARN line in " << summary->lines_read
              << " line(s) of " << fmt::format("{}", fmt::join(options.files, ", "))
              << " (run the job with NCCL_DEBUG=INFO, and give its output or NCCL_DEBUG_FILE)\n";
    return fabcheck::kExitError;
  }
  if (options.json) {
    std::cout << fabcheck::ToJsonText(nlohmann::json(*summary), 2) << "\n";
  } else {
    std::cout << fabcheck::report::FormatNcclLogSummary(*summary) << fabcheck::report::FormatNcclFindings(summary->findings);
  }
  if (worst == Severity::kFail) return fabcheck::kExitFailures;
  if (worst == Severity::kWarn) return fabcheck::kExitWarnings;
  return fabcheck::kExitOk;
}

fabcheck::app::RunFn Setup(CLI::App& root) {
  auto* cmd = root.add_subcommand("nccl-log", "Say which transport NCCL used, and why it failed, from its INFO log (L4)");
  auto options = std::make_shared<Options>();
  cmd->add_option("files", options->files,
                  "NCCL logs (NCCL_DEBUG=INFO output; many hosts and ranks may be mixed; \"-\" reads stdin)")
      ->required();
  fabcheck::app::Tunables(cmd, "nccl-log").Flag("--json", options->json,
                                                 "Print the summary as JSON (schema fabcheck.nccl-log/v1)");
  cmd->footer(
      "Reads NCCL 2.5 to 2.28 logs as users paste them (colour codes; mpirun, srun, torchrun, Ray and kubectl\n"
      "prefixes; timestamps; interleaved processes) and reports, per rank pair and channel, P2P, SHM, NET/IB\n"
      "(device, GPUDirect or not), NET/Socket or a plugin's network; the NICs and plugins NCCL used; the\n"
      "bootstrap interface; the GPUDirect decisions; the NCCL version; then the verdicts of diagnose's NCCL\n"
      "rules: completion errors decoded by ibv_wc_status name, socket and verbs failures, plugin problems,\n"
      "watchdog timeouts, \"inter-node traffic used sockets\" (catalog: docs/diagnose.md).\n\n"
      "Get a log: NCCL_DEBUG=INFO NCCL_DEBUG_FILE=/tmp/nccl.%h.%p.log <your job>\n\n"
      "Examples:\n"
      "  fabcheck nccl-log /tmp/nccl.*.log\n"
      "  kubectl logs --prefix job/trainer | fabcheck nccl-log -\n"
      "  fabcheck nccl-log --json job-1234.out | jq '.findings[] | select(.severity==\"fail\")'\n\n"
      "For logs together with counters, perf/sweep/coll/doctor results or a ladder bundle: fabcheck diagnose.\n"
      "Exit: 0 all good, 1 warnings (e.g. GPUDirect off), 2 failures (sockets between nodes, errors), 3 unreadable\n"
      "or nothing to judge (no NCCL line in the input), 64 bad command line.");
  return [options] { return Run(*options); };
}

const bool kRegistered = fabcheck::app::RegisterCommand({"nccl-log", 410, &Setup});

}  // namespace
