// `fabcheck diagnose PATH...`: name the cause from evidence (rules in src/diagnose/).
#include <nlohmann/json.hpp>

#include <iostream>

#include "app/command.h"
#include "app/tunables.h"
#include "base/exit_codes.h"
#include "base/json_text.h"
#include "base/strings.h"
#include "diagnose/engine.h"
#include "diagnose/inputs.h"
#include "diagnose/registry.h"
#include "verdict/judged.h"

namespace {

struct Options {
  std::vector<std::string> paths;
  bool json = false;
  bool verbose = false;
  bool catalog = false;
  bool strict = false;
  std::string line_rate;
};

int Run(const Options& o) {
  using namespace fabcheck;
  if (o.catalog) {
    std::cout << diagnose::CatalogMarkdown();
    return kExitOk;
  }
  if (o.paths.empty()) {
    std::cerr << "fabcheck diagnose: give at least one PATH (fabcheck diagnose --help shows what it reads)\n";
    return kExitUsage;
  }
  diagnose::LoadOptions load;
  if (!o.line_rate.empty()) {
    std::string text = o.line_rate;
    if (!text.empty() && (text.back() == 'G' || text.back() == 'g')) text.pop_back();
    auto rate = ParseDouble(text);
    if (!rate || *rate <= 0 || *rate > 100000) {
      std::cerr << "fabcheck diagnose: --line-rate " << o.line_rate
                << " is not a rate in Gb/s (e.g. 400 or 400G)\n";
      return kExitUsage;
    }
    load.line_gbps = *rate;
  }
  auto evidence = diagnose::LoadEvidence(o.paths, load);
  if (!evidence.ok()) {
    std::cerr << "fabcheck diagnose: " << evidence.status().message() << "\n";
    return kExitUsage;
  }
  auto report = diagnose::Diagnose(*evidence, verdict::JudgedInBundle(evidence->bundle), o.strict);
  if (o.json) {
    std::cout << ToJsonText(nlohmann::json(report), 2) << "\n";
  } else {
    // The text ends with why there was nothing to judge (exit 3).
    std::cout << diagnose::FormatDiagnoseReport(report, o.verbose);
  }
  return report.exit_code;
}

fabcheck::app::RunFn Setup(CLI::App& root) {
  auto* cmd = root.add_subcommand(
      "diagnose", "Name the cause from evidence: NCCL and framework logs, RDMA counters over time, perf/sweep/coll\n"
                  "results, doctor reports and ladder bundles");
  auto o = std::make_shared<Options>();
  cmd->add_option("paths", o->paths,
                  "Files or directories, in any mix: NCCL / PyTorch / launcher logs (\"-\" = a log on stdin), the exporter's\n"
                  "/metrics text saved at several times, counter sample JSON, perf / kv / sweep / coll / doctor JSON,\n"
                  "a ladder bundle (a directory with manifest.json, or its .tar.gz, packed with or without its folder)");
  fabcheck::app::Tunables t(cmd, "diagnose");
  t.Flag("--json", o->json, "Print the diagnoses as JSON (schema fabcheck.diagnose/v1)");
  t.Flag("-v,--verbose", o->verbose, "Show every evidence line and the rules that passed");
  t.Text("--line-rate", o->line_rate,
         "The ports' rate in Gb/s (400 or 400G) when no input says it; perf symptoms compare against it", "Gb/s");
  t.Flag("--strict", o->strict, "A gate: any unknown diagnosis exits 1, as a warning does");
  t.Flag("--catalog", o->catalog, "Print the rule catalog (Markdown, as docs/diagnose.md) and exit");
  cmd->footer(
      "Each diagnosis has a stable rule ID (docs/diagnose.md), a confidence, its evidence (file:line, or a\n"
      "counter and its change over time), the likely causes ranked, the fix, and what to run next with the\n"
      "members filled in. Logs are read as users paste them: colour codes, mpirun / srun / torchrun / Ray /\n"
      "kubectl --prefix prefixes, timestamps, several processes interleaved.\n\n"
      "Logs of several jobs given together (their NCCL commId differs) are judged job by job: each job\n"
      "gets its own verdict and no cause is drawn from one job's lines for another's.\n\n"
      "Counters: save `fabcheck exporter`'s output (port 9877) a few times, every 30-60 s:\n"
      "  curl -s node:9877/metrics > m-$(date +%s).txt\n"
      "A counter must rise in two consecutive intervals before a rule alarms; resets are handled.\n\n"
      "Examples:\n"
      "  fabcheck diagnose job-1234.out                        # a failed job's output (NCCL_DEBUG=INFO)\n"
      "  fabcheck diagnose /tmp/nccl.*.log metrics-*.txt       # logs and counters together\n"
      "  fabcheck diagnose ladder-bundle/                      # everything a ladder run saved\n"
      "  fabcheck diagnose --line-rate 400 perf-a-b.json       # a perf result against a 400G port\n"
      "  fabcheck diagnose --json job.out | jq '.findings[] | select(.severity==\"fail\")'\n\n"
      "A doctor report's failures and warnings, and a ladder bundle's (its rungs', members' and go-live\n"
      "checklist's, as `fabcheck report` judges them), come out under their own IDs and members.\n\n"
      "Exit: 0 nothing wrong, 1 warnings (or an unknown with --strict), 2 failures, 3 nothing to judge (no input could be\n"
      "read, or none held evidence: an empty log), 64 bad command line.");
  return [o] { return Run(*o); };
}

const bool kRegistered = fabcheck::app::RegisterCommand({"diagnose", 700, &Setup});

}  // namespace
