// fabcheck: verify and troubleshoot the RDMA network path of GPU clusters.
// Parsing and wiring only; see DESIGN.md for the modules that do the work.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <iostream>
#include <map>

#include "app/command.h"
#include "base/exit_codes.h"
#include "base/log.h"
#include "fabcheck/version.h"

namespace fabcheck::app {

std::vector<CommandSpec>& MutableRegistry() {
  static std::vector<CommandSpec> registry;
  return registry;
}

bool RegisterCommand(const CommandSpec& spec) {
  MutableRegistry().push_back(spec);
  return true;
}

const std::vector<CommandSpec>& RegisteredCommands() { return MutableRegistry(); }

}  // namespace fabcheck::app

int main(int argc, char** argv) {
  using namespace fabcheck;
  CLI::App root(
      "fabcheck verifies and troubleshoots the RDMA network path of GPU clusters\n"
      "(InfiniBand or RoCE, bare metal or Kubernetes), from the NIC up to NCCL.\n"
      "Exit codes: 0 pass, 1 warnings, 2 failures, 3 could not run, 64 usage error.",
      "fabcheck");
  root.set_version_flag("--version", std::string("fabcheck ") + kVersion);
  root.require_subcommand(1);
  root.fallthrough();
  std::string log_level;
  root.add_option("--log-level", log_level, "Diagnostics on stderr: error, warn (default), info, debug, trace")
      ->envname("FABCHECK_LOG_LEVEL");
  root.footer("Run 'fabcheck COMMAND --help' for the options of a command.");

  auto specs = app::RegisteredCommands();
  std::sort(specs.begin(), specs.end(), [](const auto& a, const auto& b) { return a.order < b.order; });
  std::map<const CLI::App*, app::RunFn> runners;
  for (const auto& spec : specs) {
    app::RunFn run = spec.setup(root);
    if (CLI::App* sub = root.get_subcommand_ptr(spec.name).get()) runners[sub] = std::move(run);
  }

  try {
    root.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return root.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return root.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return root.exit(e);
  } catch (const CLI::ParseError& e) {
    root.exit(e);
    return kExitUsage;
  }
  if (!log_level.empty()) {
    auto level = log::ParseLevel(log_level);
    if (!level.ok()) {
      std::cerr << "fabcheck: " << level.status().message() << "\n";
      return kExitUsage;
    }
    log::SetLevel(*level);
  }
  for (const CLI::App* sub : root.get_subcommands()) {
    auto it = runners.find(sub);
    if (it == runners.end()) continue;
    try {
      return it->second();
    } catch (const std::exception& e) {
      // Library code returns Status; reaching here is a bug, reported plainly.
      std::cerr << "fabcheck: internal error in '" << sub->get_name() << "': " << e.what()
                << " (please report it with the command line)\n";
      return kExitError;
    }
  }
  std::cerr << "fabcheck: no command given (run 'fabcheck --help')\n";
  return kExitUsage;
}
