// `fabcheck snapshot`: capture what the readers read on this node into a
// tarball that `--sysroot` accepts anywhere. Parsing and wiring only.
#include <nlohmann/json.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <iostream>

#include "app/command.h"
#include "app/tunables.h"
#include "base/exit_codes.h"
#include "base/json_text.h"
#include "base/log.h"
#include "fabcheck/version.h"
#include "inventory/snapshot.h"
#include "sys/sysroot.h"

namespace {

struct Options {
  std::string output;
  std::string sysroot;
  bool json = false;
};

int Run(Options options) {
  using namespace fabcheck;
  if (options.output == "-") options.output = "/dev/stdout";  // the usual spelling of "to stdout"
  auto root = options.sysroot.empty() ? Result<sys::SysRoot>(sys::SysRoot::Live()) : sys::SysRoot::Open(options.sysroot);
  if (!root.ok()) {
    LOG_ERROR("snapshot", "{}", root.status().message());
    return kExitError;
  }
  auto result = inventory::TakeSnapshot(*root, options.output, kVersion);
  if (!result.ok()) {
    LOG_ERROR("snapshot", "{}", result.status().message());
    return kExitError;
  }
  const auto& inv = result->inventory;
  // Streamed to stdout (-o /dev/stdout, a pipe): the summary must not mix
  // into the capture's bytes.
  struct stat out_st {}, stdout_st {};
  bool capture_on_stdout = ::stat(options.output.c_str(), &out_st) == 0 && ::fstat(STDOUT_FILENO, &stdout_st) == 0 &&
                           out_st.st_dev == stdout_st.st_dev && out_st.st_ino == stdout_st.st_ino;
  std::ostream& out = capture_on_stdout ? std::cerr : std::cout;
  if (options.json) {
    auto info = nlohmann::json::parse(result->info_json);
    info["output"] = options.output;
    info["counts"] = {{"rdma_devices", inv.rdma_devices.size()}, {"netdevs", inv.netdevs.size()},
                      {"gpus", inv.gpus.size()},                 {"nics", inv.nics.size()},
                      {"nvswitches", inv.nvswitches.size()},     {"warnings", inv.warnings.size()}};
    out << ToJsonText(info, 2) << "\n";
  } else {
    out << "wrote " << options.output << ": " << root->Describe() << ", host "
              << (inv.host.hostname.empty() ? "?" : inv.host.hostname) << "; " << inv.rdma_devices.size()
              << " RDMA device(s), " << inv.netdevs.size() << " netdev(s), " << inv.gpus.size() << " GPU(s), "
              << inv.nics.size() << " NIC(s), " << inv.warnings.size() << " unreadable file(s)\n"
              << "read it anywhere with: fabcheck inventory --sysroot " << options.output << "\n";
  }
  return kExitOk;
}

fabcheck::app::RunFn Setup(CLI::App& root) {
  auto* cmd = root.add_subcommand("snapshot", "Capture this node's sysfs/procfs evidence into a .tar.gz for offline use");
  auto options = std::make_shared<Options>();
  fabcheck::app::Tunables t(cmd, "snapshot");
  t.Path("-o,--output", options->output,
         "The capture to write (FILE.tar.gz); - (stdout), a FIFO or /dev/stdout is streamed into (the summary\n"
         "then goes to stderr)",
         /*dash_is_stdio=*/true)
      ->required();
  t.Path("--sysroot", options->sysroot,
         "Capture from this directory or capture instead of the running node (to trim or re-pack)");
  t.Flag("--json", options->json, "Print the capture's info (host, kernel, time, version, counts) as JSON");
  cmd->footer(
      "Records exactly the files the readers read (class/infiniband, class/net, the PCI devices\n"
      "and their bridges, devices/system/node, /proc/sys/kernel), what doctor's checks read (PCI\n"
      "config space of the NICs, GPUs and bridges between them, /proc/interrupts and every\n"
      "/proc/irq/N/smp_affinity_list, cpufreq governors and cpuidle states, hugepages, THP mode,\n"
      "numa_balancing, /proc/self/status, limits and cgroup), the SR-IOV files the exporter reads\n"
      "(sriov_totalvfs, sriov_numvfs, each virtfn and its VF's driver, netdev and RDMA device), the\n"
      "IP addresses, the libibverbs and\n"
      "NVML answers, and /fabcheck/capture.json (host, kernel, UTC time, fabcheck version).\n"
      "Never reads resource, rom or vpd files. Config space beyond 64 bytes needs root.\n"
      "\n"
      "Examples:\n"
      "  fabcheck snapshot -o $(hostname).tar.gz\n"
      "  fabcheck inventory --sysroot node07.tar.gz --matrix    # on any machine");
  return [options] { return Run(*options); };
}

const bool kRegistered = fabcheck::app::RegisterCommand({"snapshot", 11, &Setup});

}  // namespace
