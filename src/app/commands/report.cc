// `fabcheck report BUNDLE`: the go-live checklist of a ladder evidence bundle,
// as one self-contained HTML file, Markdown or JSON. Offline: it reads the
// bundle only, nothing of the machine it runs on.
#include <nlohmann/json.hpp>

#include <chrono>
#include <iostream>

#include "app/command.h"
#include "app/tunables.h"
#include "base/exit_codes.h"
#include "base/json_text.h"
#include "fabcheck/version.h"
#include "report/golive.h"
#include "report/html.h"
#include "report/load.h"
#include "report/markdown.h"
#include "report/output.h"

namespace {

struct Options {
  std::string bundle;
  std::string format;
  std::string output = "-";
  std::string baseline;
  std::vector<std::string> kv;
  double slower_percent = 10;
  bool strict = false;
  bool json = false;
};

int Run(const Options& o) {
  using namespace fabcheck;
  if (o.json && !o.format.empty() && o.format != "json") {
    std::cerr << "fabcheck report: --json and --format " << o.format << " ask for two formats: give one\n";
    return kExitUsage;
  }
  Result<report::Format> format = o.json ? Result<report::Format>(report::Format::kJson)
                                  : !o.format.empty() ? report::ParseFormat(o.format)
                                  : o.output != "-" ? report::FormatFromPath(o.output)
                                                    : Result<report::Format>(report::Format::kMarkdown);
  if (!format.ok()) {
    if (o.format.empty()) {
      std::cerr << "fabcheck report: cannot tell the format from -o " << o.output
                << ": name it .html, .md or .json, or give --format html|md|json\n";
    } else {
      std::cerr << "fabcheck report: " << format.status().message() << "\n";
    }
    return kExitUsage;
  }
  auto evidence = report::LoadBundle(o.bundle);
  if (!evidence.ok()) {
    std::cerr << "fabcheck report: " << evidence.status().message() << "\n";
    return kExitError;
  }
  for (const std::string& path : o.kv) {
    if (Status s = report::LoadKvResults(path, *evidence); !s.ok()) {
      std::cerr << "fabcheck report: --kv " << s.message() << "\n";
      return kExitError;
    }
  }
  Result<report::BundleEvidence> baseline = InternalError("unused");
  report::ReportOptions options;
  options.fabcheck_version = kVersion;
  options.slower_threshold = o.slower_percent / 100.0;
  options.strict = o.strict;
  if (!o.baseline.empty()) {
    baseline = report::LoadBundle(o.baseline);
    if (!baseline.ok()) {
      std::cerr << "fabcheck report: --baseline: " << baseline.status().message() << "\n";
      return kExitError;
    }
    options.baseline = &*baseline;
  }
  model::GoLiveReport r = report::BuildReport(*evidence, options);
  std::string text;
  switch (*format) {
    case report::Format::kHtml: text = report::RenderHtml(r, *evidence); break;
    case report::Format::kMarkdown: text = report::RenderMarkdown(r); break;
    case report::Format::kJson: text = ToJsonText(nlohmann::json(r), 2) + "\n"; break;
  }
  if (Status s = report::WriteOutput(o.output, text); !s.ok()) {
    std::cerr << "fabcheck report: " << s.message() << "\n";
    return kExitError;
  }
  if (o.output != "-") {
    std::cerr << "fabcheck report: wrote " << o.output << " (" << (text.size() + 1023) / 1024 << " KiB): "
              << (r.go ? "GO" : "NO-GO") << "; checklist " << r.counts.pass << " pass, " << r.counts.fail << " fail, "
              << r.counts.unknown << " unknown, " << r.counts.manual << " manual";
    if (r.baseline) std::cerr << "; " << r.baseline->changes.size() << " changes since the baseline";
    std::cerr << "\n";
  }
  return r.exit_code;
}

fabcheck::app::RunFn Setup(CLI::App& root) {
  auto* cmd = root.add_subcommand(
      "report", "Turn a ladder evidence bundle into the go-live checklist: HTML with plots, Markdown or JSON");
  auto o = std::make_shared<Options>();
  cmd->add_option("bundle", o->bundle, "Evidence bundle of `fabcheck ladder --out`: a directory or a .tar.gz")
      ->required();
  fabcheck::app::Tunables t(cmd, "report");
  t.Text("--format", o->format,
         "html (one self-contained file with inline SVG plots), md (Markdown for tickets and wikis) or\n"
         "json (schema fabcheck.report/v1). Default: from the -o file name, md on stdout",
         "html|md|json");
  t.Flag("--json", o->json, "The same as --format json");
  t.Path("-o,--output", o->output, "Write here instead of stdout (replaced atomically); - is stdout",
         /*dash_is_stdio=*/true);
  t.Path("--baseline", o->baseline,
         "An earlier bundle of the same cluster: report what changed (pairs that got slower, new PCIe\n"
         "downgrades, MTU changes, counters that started rising, members added or gone)");
  t.List("--kv", o->kv,
         "A `fabcheck kv run --json` result (or a --agents one) to report as rung L5, judged against its own\n"
         "L3 figure; a shortfall names the rung to look at (repeat for several)",
         "file");
  t.Flag("--strict", o->strict,
         "A go-live gate: an item or finding that is unknown (the bundle lacks its evidence) exits 1.\n"
         "Without it unknown items are shown, never passed, and do not change the exit status");
  t.Number("--slower-percent", o->slower_percent,
           "With --baseline: a pair counts as slower when it lost more than this share of its bandwidth", 0.1, 99.0);
  cmd->footer(
      "Offline: reads the bundle only, nothing of this machine, so it runs anywhere the bundle is copied.\n"
      "The checklist is the ten go-live items of the RDMA networking guide; each is pass, fail, unknown\n"
      "(the bundle lacks the evidence: it says what would decide it) or manual (not observable from a\n"
      "host: it says what to record).\n\n"
      "Exit status (from the bundle's findings, docs/verdicts.md): 0 go and nothing failed or warned, 1 a\n"
      "warning (or, with --strict, an unknown item), 2 the ladder said no-go or an item fails, 3 the bundle\n"
      "could not be read, 64 bad command line. `fabcheck diagnose BUNDLE` names the same failures.\n\n"
      "Examples:\n"
      "  fabcheck report run1.tar.gz -o report.html             # the go-live report to hand over\n"
      "  fabcheck report run1/ --format md > ticket.md           # for a ticket or a wiki page\n"
      "  fabcheck report run2.tar.gz --baseline run1.tar.gz -o diff.html   # what changed since run1\n"
      "  fabcheck report run1/ --kv kv-70b.json -o report.html   # with the L5 KV-cache transfer as a rung\n"
      "  fabcheck report run1.tar.gz --format json | jq '.checklist[] | select(.status==\"fail\")'");
  return [o] { return Run(*o); };
}

const bool kRegistered = fabcheck::app::RegisterCommand({"report", 620, &Setup});

}  // namespace
