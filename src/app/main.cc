// fabcheck: verify and troubleshoot the RDMA network path of GPU clusters.
// Parsing and wiring only; see DESIGN.md for the modules that do the work.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "app/command.h"
#include "app/json_errors.h"
#include "app/renamed.h"
#include "base/exit_codes.h"
#include "base/json_text.h"
#include "base/log.h"
#include "base/stdout_guard.h"
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

namespace {
std::vector<std::string>& MutableCommandLine() {
  static std::vector<std::string> argv;
  return argv;
}
}  // namespace

const std::vector<std::string>& CommandLine() { return MutableCommandLine(); }
void SetCommandLine(int argc, char** argv) { MutableCommandLine().assign(argv, argv + argc); }

}  // namespace fabcheck::app

namespace {

// Levenshtein distance, for "did you mean" on a mistyped command.
size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// CLI11 says only "A subcommand is required" for `fabcheck --bogus` and
// `fabcheck bogus`: say what was wrong and what exists instead.
bool ExplainMissingCommand(int argc, char** argv, const std::vector<std::string>& commands) {
  std::string names;
  for (const auto& c : commands) names += (names.empty() ? "" : ", ") + c;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--log-level") {
      ++i;  // its value
      continue;
    }
    if (arg.rfind("--log-level=", 0) == 0) continue;
    if (!arg.empty() && arg[0] == '-') {
      std::cerr << "fabcheck: unknown option '" << arg << "' before the command (fabcheck's own options are "
                << "--log-level, --version and --help; a command's options go after it, e.g. "
                << "'fabcheck inventory --json')\ncommands: " << names << "\n";
      return true;
    }
    std::string best;
    size_t best_distance = 3;  // suggest only close names
    for (const auto& c : commands) {
      size_t d = EditDistance(arg, c);
      if (d < best_distance) best_distance = d, best = c;
    }
    std::cerr << "fabcheck: unknown command '" << arg << "'"
              << (best.empty() ? std::string() : " (did you mean '" + best + "'?)") << "\ncommands: " << names
              << "\nRun 'fabcheck --help' for what each does.\n";
    return true;
  }
  std::cerr << "fabcheck: no command given\ncommands: " << names << "\nRun 'fabcheck --help' for what each does.\n";
  return true;
}

// The command words of a command line ("k8s", "lint") and where its own
// arguments start: CLI11's tree walked over the leading words.
struct CommandWords {
  std::string path;     // "k8s lint"; "" when no command was found
  size_t first_arg = 1;  // index in argv of the first argument after the command words
  CLI::App* app = nullptr;
};

CommandWords FindCommand(CLI::App& root, const std::vector<std::string>& args) {
  CommandWords found;
  CLI::App* current = &root;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (current == &root && arg == "--log-level") {
      ++i;
      continue;
    }
    if (!arg.empty() && arg[0] == '-') {
      if (current == &root) continue;  // a root option, or a mistake ExplainMissingCommand names
      break;
    }
    CLI::App* sub = nullptr;
    try {
      sub = current->get_subcommand(arg);
    } catch (const CLI::OptionNotFound&) {
      break;
    }
    current = sub;
    found.path += (found.path.empty() ? "" : " ") + arg;
    found.first_arg = i + 1;
    found.app = sub;
  }
  return found;
}

// "did you mean" for an option the command does not have.
void SuggestOptions(const CommandWords& command, const std::vector<std::string>& args) {
  if (command.app == nullptr) return;
  std::vector<std::string> names;  // the command's and, through fallthrough, its parents'
  for (const CLI::App* app = command.app; app != nullptr; app = app->get_parent()) {
    for (const CLI::Option* o : app->get_options()) {
      for (const auto& l : o->get_lnames()) names.push_back("--" + l);
    }
  }
  for (size_t i = command.first_arg; i < args.size(); ++i) {
    std::string arg = args[i];
    if (arg == "--") break;
    if (arg.rfind("--", 0) != 0) continue;
    arg = arg.substr(0, arg.find('='));
    if (std::find(names.begin(), names.end(), arg) != names.end()) continue;
    std::string best;
    size_t best_distance = arg.size() > 6 ? 4 : 3;  // suggest only close names
    for (const auto& n : names) {
      size_t d = EditDistance(arg, n);
      if (d < best_distance) best_distance = d, best = n;
    }
    std::cerr << "fabcheck " << command.path << ": unknown option '" << arg << "'"
              << (best.empty() ? std::string(" (fabcheck " + command.path + " --help lists them)")
                               : " (did you mean '" + best + "'?)")
              << "\n";
  }
}

}  // namespace

int main(int argc, char** argv) {
  using namespace fabcheck;
  app::SetCommandLine(argc, argv);
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
  bool parse_only = false;
  root.add_flag("--parse-only", parse_only,
                "Check the command line (options, types, ranges) and exit 0 without running it");
  root.footer("Run 'fabcheck COMMAND --help' for the options of a command.");

  auto specs = app::RegisteredCommands();
  std::sort(specs.begin(), specs.end(), [](const auto& a, const auto& b) { return a.order < b.order; });
  std::map<const CLI::App*, app::RunFn> runners;
  for (const auto& spec : specs) {
    app::RunFn run = spec.setup(root);
    if (CLI::App* sub = root.get_subcommand_ptr(spec.name).get()) runners[sub] = std::move(run);
  }

  // --json promises a JSON document on stdout even when the command cannot run.
  const bool wants_json = app::WantsJson(app::CommandLine());
  auto usage_error = [&](const std::vector<std::string>& errors) {
    if (wants_json) std::cout << ToJsonText(app::ErrorDocument(app::CommandPath(root), kExitUsage, errors), 2) << "\n";
    return kExitUsage;
  };
  // Old spellings of renamed options still work for one release (tunables.h).
  std::vector<std::string> args(argv, argv + argc);
  const CommandWords command = FindCommand(root, args);
  if (!command.path.empty()) {
    std::vector<std::string> rest(args.begin() + static_cast<std::ptrdiff_t>(command.first_arg), args.end());
    std::string notes;
    rest = app::RewriteRenamedOptions(command.path, rest, &notes);
    std::cerr << notes;
    args.resize(command.first_arg);
    args.insert(args.end(), rest.begin(), rest.end());
  }
  std::vector<char*> parse_argv;
  for (auto& a : args) parse_argv.push_back(a.data());
  try {
    root.parse(static_cast<int>(parse_argv.size()), parse_argv.data());
  } catch (const CLI::CallForHelp& e) {
    return root.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return root.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return root.exit(e);
  } catch (const CLI::ParseError& e) {
    if (root.get_subcommands().empty()) {
      std::vector<std::string> names;
      for (const auto& spec : specs) names.push_back(spec.name);
      ExplainMissingCommand(argc, argv, names);
      return usage_error({"fabcheck: no such command (run 'fabcheck --help')"});
    }
    root.exit(e);
    SuggestOptions(command, args);
    return usage_error({std::string("fabcheck ") + app::CommandPath(root) + ": " + e.what()});
  }
  if (parse_only) return kExitOk;
  if (!log_level.empty()) {
    auto level = log::ParseLevel(log_level);
    if (!level.ok()) {
      std::cerr << "fabcheck: " << level.status().message() << "\n";
      return usage_error({"fabcheck: " + level.status().message()});
    }
    log::SetLevel(*level);
  }
  GuardStdout();  // no control sequence from foreign text reaches the terminal
  for (const CLI::App* sub : root.get_subcommands()) {
    auto it = runners.find(sub);
    if (it == runners.end()) continue;
    int code = kExitError;
    {
      app::OutputWatch watch;
      try {
        code = it->second();
      } catch (const std::exception& e) {
        // Library code returns Status; reaching here is a bug, reported plainly.
        std::cerr << "fabcheck: internal error in '" << sub->get_name() << "': " << e.what()
                  << " (please report it with the command line)\n";
      }
      // A command that could not run, or refused its command line, printed
      // only to stderr: under --json stdout still gets a document.
      if (wants_json && (code == kExitError || code == kExitUsage) && !watch.WroteStdout()) {
        auto errors = watch.ErrorLines();
        if (errors.empty()) errors.push_back("fabcheck " + app::CommandPath(root) + ": " + app::ExitMeaning(code));
        std::cout << ToJsonText(app::ErrorDocument(app::CommandPath(root), code, errors), 2) << "\n";
      }
    }
    return code;
  }
  std::cerr << "fabcheck: no command given (run 'fabcheck --help')\n";
  return kExitUsage;
}
