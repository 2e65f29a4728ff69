// `fabcheck doctor`: every local check of rungs L1-L2, RoCE QoS, GPUDirect
// prerequisites, host tuning, container limits and NCCL settings on one node.
#include <nlohmann/json.hpp>

#include <iostream>

#include "app/command.h"
#include "app/tunables.h"
#include "base/exit_codes.h"
#include "base/json_text.h"
#include "checks/registry.h"
#include "checks/runner.h"
#include "fabcheck/version.h"
#include "inventory/snapshot.h"
#include "report/doctor_text.h"

namespace {

struct DoctorFlags {
  fabcheck::checks::DoctorOptions options;
  bool json = false;
  bool verbose = false;
  bool catalog = false;
  bool no_process_env = false;
};

int Run(const DoctorFlags& flags) {
  using namespace fabcheck;
  if (flags.catalog) {
    std::cout << checks::CatalogMarkdown();
    return kExitOk;
  }
  checks::DoctorOptions options = flags.options;
  options.use_process_env = !flags.no_process_env;
  auto report = checks::RunDoctor(options, kVersion);
  if (!report.ok()) {
    std::cerr << "fabcheck doctor: " << report.status().message() << "\n";
    return report.status().code() == StatusCode::kInvalidArgument && !flags.options.only.empty() &&
                   report.status().message().rfind("--only", 0) == 0
               ? kExitUsage
               : kExitError;
  }
  if (flags.json) {
    std::cout << ToJsonText(nlohmann::json(*report), 2) << "\n";
  } else {
    std::cout << report::RenderDoctorText(*report, flags.verbose);
  }
  return report->summary.exit_code;
}

fabcheck::app::RunFn Setup(CLI::App& root) {
  auto* cmd = root.add_subcommand(
      "doctor",
      "Check one node for everything that silently breaks RDMA: ports, PCIe, GPU-NIC topology, MTU, GIDs,\n"
      "RoCE QoS (PFC/ECN/trust), GPUDirect prerequisites, host tuning (IRQ affinity, CPU governor, HugePages,\n"
      "PCIe device control, CPU pinning), container limits and NCCL settings");
  auto flags = std::make_shared<DoctorFlags>();
  fabcheck::app::Tunables t(cmd, "doctor");
  t.Path("--sysroot", flags->options.sysroot,
         "Check a captured node instead of this one: a directory holding sys/ (and proc/), or a\n"
         "capture from `fabcheck snapshot -o FILE.tar.gz`");
  t.Path("--profile", flags->options.profile,
         "Expected hardware of the machine type (YAML, see profiles/): GPU and NIC counts, link layer,\n"
         "rate, PCIe generation/width and device control, MTU, PFC priority, HugePages/THP/NUMA\n"
         "balancing (docs/profiles.md). Without it expectations come from the node");
  t.List("--only", flags->options.only,
         "Run only these check groups (L1, L2, RoCE, GDR, host, container, NCCL) and/or check IDs, comma\n"
         "separated",
         "group or check ID")
      ->delimiter(',');
  t.List("--env-file", flags->options.env_files,
         "Check a job's NCCL settings before launch: a file of KEY=VALUE lines (repeatable; they\n"
         "override the process environment)",
         "path");
  t.Text("--expect-transport", flags->options.expect_transport,
         "What this node's traffic between nodes is meant to use: rdma (the default on GPU nodes and\n"
         "where the profile describes NICs) or tcp (a node without RDMA is then as meant: info, not a\n"
         "failure; also `transport: tcp` in the profile)",
         "rdma|tcp")
      ->check(CLI::IsMember({"rdma", "tcp"}));
  t.Flag("--no-process-env", flags->no_process_env,
         "Ignore this process's NCCL_* variables (check only --env-file and /etc/nccl.conf)");
  t.Flag("--strict", flags->options.strict,
         "A go-live gate: any unknown (a check that could not read what it needs) exits 1, as a warning\n"
         "does. Without it an unknown is reported, never a pass, and does not change the exit status");
  t.Flag("--json", flags->json, "Print the report as JSON (schema fabcheck.doctor/v1)");
  t.Flag("-v,--verbose", flags->verbose, "Show evidence for passing checks too");
  t.Flag("--catalog", flags->catalog, "Print the catalog of checks (Markdown, as docs/checks.md) and exit");
  cmd->footer(
      "Exit status: 0 every check passed (info and unknown do not count), 1 warnings only (or any unknown\n"
      "with --strict), 2 at least one failure, 3 could not run (bad sysroot, profile or env file), 64 bad\n"
      "command line. A check that cannot read what it needs reports 'unknown' with the reason: never a pass,\n"
      "never a failure (docs/verdicts.md).\n"
      "A GPU node without an ACTIVE RDMA port fails rdma.none (L1) unless --expect-transport tcp says TCP is meant.\n"
      "Findings are grouped by check group (L1, L2, RoCE, GDR, host, container, NCCL); fix the lowest failing\n"
      "group first.\n\n"
      "Examples:\n"
      "  fabcheck doctor                                    # check this node\n"
      "  fabcheck doctor --profile /usr/share/fabcheck/profiles/dgx-h100-ib.yaml   # profiles/ in the source tree\n"
      "  fabcheck doctor --only L1,nccl.ib-hca              # one group and one check\n"
      "  fabcheck doctor --env-file job.env --only NCCL     # a job's NCCL settings before launch\n"
      "  fabcheck doctor --sysroot node07.tar.gz --json     # a capture taken on another node\n"
      "  fabcheck doctor --catalog > docs/checks.md         # the catalog of check IDs");
  return [flags] { return Run(*flags); };
}

const bool kRegistered = fabcheck::app::RegisterCommand({"doctor", 20, &Setup});

// Snapshots carry what the checks read (config space, /proc/self/*, dcbnl
// answers, /etc/nccl.conf, /proc/interrupts and /proc/irq, cpufreq and
// cpuidle, hugepages, THP, numa_balancing), so `doctor --sysroot capture`
// sees the same.
const bool kSnapshotRegistered =
    fabcheck::inventory::RegisterSnapshotReader("doctor", [](const fabcheck::sys::SysRoot& root) {
      fabcheck::checks::ReadEvidence(root);
    });

}  // namespace
