// `fabcheck version`: the version, as text or JSON, for reports and bug reports.
#include <nlohmann/json.hpp>

#include <iostream>

#include "app/command.h"
#include "base/exit_codes.h"
#include "base/json_text.h"
#include "fabcheck/version.h"

namespace {

fabcheck::app::RunFn Setup(CLI::App& root) {
  auto* cmd = root.add_subcommand("version", "Print the fabcheck version");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "Print JSON (schema fabcheck.version/v1) instead of text");
  return [json] {
    if (*json) {
      nlohmann::json doc = {{"schema", "fabcheck.version/v1"}, {"fabcheck_version", fabcheck::kVersion}};
      std::cout << fabcheck::ToJsonText(doc, 2) << "\n";
    } else {
      std::cout << "fabcheck " << fabcheck::kVersion << "\n";
    }
    return fabcheck::kExitOk;
  };
}

const bool kRegistered = fabcheck::app::RegisterCommand({"version", 1000, &Setup});

}  // namespace
