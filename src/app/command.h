// How a subcommand plugs into the fabcheck binary.
//
// Each file in app/commands/ registers itself at static-initialisation time:
//
//   namespace {
//   fabcheck::app::RunFn Setup(CLI::App& root) {
//     auto* cmd = root.add_subcommand("inventory", "Show RDMA devices, GPUs, PCIe and NUMA");
//     auto options = std::make_shared<InventoryOptions>();
//     cmd->add_option("--sysroot", options->sysroot, "...");
//     return [options] { return RunInventory(*options); };   // returns an exit code
//   }
//   const bool kRegistered = fabcheck::app::RegisterCommand({"inventory", 10, &Setup});
//   }  // namespace
//
// Commands parse and wire only: the work is done by the library modules.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace fabcheck::app {

// Runs the selected command; returns its exit code (base/exit_codes.h).
using RunFn = std::function<int()>;
// Adds the subcommand to `root` and returns what to run if it is chosen.
using SetupFn = RunFn (*)(CLI::App& root);

struct CommandSpec {
  const char* name;
  int order;  // position in --help: the ladder order, bottom-up
  SetupFn setup;
};

bool RegisterCommand(const CommandSpec& spec);
const std::vector<CommandSpec>& RegisteredCommands();

// The command line fabcheck was started with (argv[0] first), for a command
// that starts copies of itself (coll --nprocs).
const std::vector<std::string>& CommandLine();
void SetCommandLine(int argc, char** argv);

}  // namespace fabcheck::app
