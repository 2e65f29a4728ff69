// `fabcheck explain ID`: what a finding ID means, why it matters and how to
// fix it, from the one judgement catalog (verdict/catalog.h).
#include <nlohmann/json.hpp>

#include <iostream>

#include "app/command.h"
#include "app/tunables.h"
#include "base/exit_codes.h"
#include "base/json_text.h"
#include "verdict/catalog.h"

namespace {

struct ExplainFlags {
  std::vector<std::string> ids;
  bool list = false;
  bool json = false;
  bool markdown = false;
};

int Run(const ExplainFlags& flags) {
  using namespace fabcheck;
  if (flags.markdown) {
    std::cout << verdict::CatalogMarkdown();
    return kExitOk;
  }
  if (flags.list || flags.ids.empty()) {
    if (flags.json) {
      std::cout << ToJsonText(verdict::CatalogJson(), 2) << "\n";
    } else {
      for (const auto& e : verdict::Catalog()) std::cout << e.id << "  (" << e.source << ", " << e.group << ")  " << e.title << "\n";
    }
    return kExitOk;
  }
  nlohmann::json found = nlohmann::json::array();
  int rc = kExitOk;
  for (const auto& id : flags.ids) {
    const model::CatalogEntry* e = verdict::FindEntry(id);
    if (!e) {
      auto similar = verdict::EntriesWithPrefix(id.substr(0, id.find('.') == std::string::npos ? id.size() : id.find('.') + 1));
      std::string hint;
      for (size_t i = 0; i < similar.size() && i < 8; ++i) hint += (i ? ", " : "") + similar[i]->id;
      std::cerr << "fabcheck explain: no finding ID '" << id << "' in the catalog"
                << (hint.empty() ? std::string(" (fabcheck explain --list shows every ID)")
                                 : " (IDs of that family: " + hint + ")")
                << "\n";
      rc = kExitUsage;
      continue;
    }
    if (flags.json) {
      found.push_back(nlohmann::json(*e));
    } else {
      std::cout << verdict::ExplainText(*e) << (flags.ids.size() > 1 ? "\n" : "");
    }
  }
  if (flags.json) {
    std::cout << ToJsonText(nlohmann::json{{"schema", std::string(model::kCatalogSchema)}, {"entries", found}}, 2) << "\n";
  }
  return rc;
}

fabcheck::app::RunFn Setup(CLI::App& root) {
  auto* cmd = root.add_subcommand(
      "explain",
      "What a finding ID means, why it matters and how to fix it: every ID of doctor, ladder, diagnose,\n"
      "report and k8s lint, from one catalog (docs/catalog.md)");
  auto flags = std::make_shared<ExplainFlags>();
  cmd->add_option("ids", flags->ids, "Finding IDs (port.down, ladder.perf.fail, golive.nccl-path, ...)");
  fabcheck::app::Tunables t(cmd, "explain");
  t.Flag("--list", flags->list, "List every ID (the default without IDs)");
  t.Flag("--json", flags->json, "Print the entries as JSON (schema fabcheck.catalog/v1)");
  t.Flag("--markdown", flags->markdown, "Print the whole catalog as Markdown (docs/catalog.md)");
  cmd->footer(
      "Exit status: 0 every ID was found, 64 an ID is not in the catalog (or a bad command line).\n\n"
      "Examples:\n"
      "  fabcheck explain rdma.none\n"
      "  fabcheck explain --list --json\n"
      "  fabcheck explain --markdown > docs/catalog.md");
  return [flags] { return Run(*flags); };
}

const bool kRegistered = fabcheck::app::RegisterCommand({"explain", 990, &Setup});

}  // namespace
