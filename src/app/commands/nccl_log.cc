// `fabcheck nccl-log FILE...`: what NCCL really used, read from its own log.
#include <nlohmann/json.hpp>

#include <iostream>

#include "app/command.h"
#include "base/exit_codes.h"
#include "base/json_text.h"
#include "coll/nccl_log.h"

namespace {

struct Options {
  std::vector<std::string> files;
  bool json = false;
};

int Run(const Options& options) {
  using fabcheck::model::Severity;
  auto summary = fabcheck::coll::ParseNcclLogFiles(options.files);
  if (!summary.ok()) {
    std::cerr << "fabcheck nccl-log: " << summary.status().message() << "\n";
    return fabcheck::kExitError;
  }
  if (options.json) {
    std::cout << fabcheck::ToJsonText(nlohmann::json(*summary), 2) << "\n";
  } else {
    std::cout << fabcheck::coll::FormatNcclLogSummary(*summary);
  }
  Severity worst = Severity::kPass;
  for (const auto& f : summary->findings) worst = std::max(worst, f.severity);
  if (worst == Severity::kFail) return fabcheck::kExitFailures;
  if (worst == Severity::kWarn) return fabcheck::kExitWarnings;
  return fabcheck::kExitOk;
}

fabcheck::app::RunFn Setup(CLI::App& root) {
  auto* cmd = root.add_subcommand("nccl-log", "Say which transport NCCL used, from its INFO log (L4)");
  auto options = std::make_shared<Options>();
  cmd->add_option("files", options->files, "NCCL logs (NCCL_DEBUG=INFO output; many hosts and ranks may be mixed)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_flag("--json", options->json, "Print the summary as JSON (schema fabcheck.nccl-log/v1)");
  cmd->footer(
      "Reads NCCL 2.18 to 2.28 INFO logs and reports, per rank pair and channel, P2P/IPC, P2P/CUMEM, SHM,\n"
      "NET/IB (device, GPUDirect RDMA or not) or NET/Socket; the NICs NCCL opened; the bootstrap interface;\n"
      "the GPUDirect decisions with their PCIe distance; the NCCL version; then plain verdicts such as\n"
      "\"inter-node traffic used sockets\".\n\n"
      "Get a log: NCCL_DEBUG=INFO NCCL_DEBUG_FILE=/tmp/nccl.%h.%p.log <your job>\n\n"
      "Examples:\n"
      "  fabcheck nccl-log /tmp/nccl.*.log\n"
      "  fabcheck nccl-log --json job-1234.out | jq '.findings[] | select(.severity==\"fail\")'\n\n"
      "Exit: 0 all good, 1 warnings (e.g. GPUDirect off), 2 failures (sockets between nodes), 3 unreadable.");
  return [options] { return Run(*options); };
}

const bool kRegistered = fabcheck::app::RegisterCommand({"nccl-log", 410, &Setup});

}  // namespace
