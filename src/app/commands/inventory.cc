// `fabcheck inventory`: what is on this node (or in a capture), bottom rung
// of the ladder. Parsing and wiring only; the readers are in src/inventory.
#include <nlohmann/json.hpp>

#include <iostream>

#include "app/command.h"
#include "app/tunables.h"
#include "base/exit_codes.h"
#include "base/json_text.h"
#include "base/log.h"
#include "inventory/inventory.h"
#include "report/inventory_text.h"
#include "sys/sysroot.h"

namespace {

struct Options {
  std::string sysroot;
  bool json = false;
  bool matrix = false;
};

int Run(const Options& options) {
  using namespace fabcheck;
  auto root = options.sysroot.empty() ? Result<sys::SysRoot>(sys::SysRoot::Live()) : sys::SysRoot::Open(options.sysroot);
  if (!root.ok()) {
    LOG_ERROR("inventory", "{}", root.status().message());
    return kExitError;
  }
  model::Inventory inv = inventory::ReadInventory(*root);
  if (options.json) {
    std::cout << ToJsonText(nlohmann::json(inv), 2) << "\n";
  } else {
    report::InventoryTextOptions render;
    render.matrix = options.matrix;
    const sys::SysRoot& r = *root;
    render.display_path = [&r](const std::string& path) { return r.DisplayPath(path); };
    std::cout << report::RenderInventory(inv, render);
  }
  // Unreadable files mean an incomplete picture: say so to scripts too.
  return inv.warnings.empty() ? kExitOk : kExitWarnings;
}

fabcheck::app::RunFn Setup(CLI::App& root) {
  auto* cmd = root.add_subcommand("inventory", "Show RDMA devices and ports, netdevs, GPUs, NICs, PCIe paths and NUMA");
  auto options = std::make_shared<Options>();
  fabcheck::app::Tunables t(cmd, "inventory");
  t.Path("--sysroot", options->sysroot,
         "Read this directory (a copy of a node's /sys and /proc) or capture (.tar.gz from "
         "`fabcheck snapshot`) instead of the running node");
  t.Flag("--json", options->json, "Print the inventory as JSON (schema fabcheck.inventory/v1)");
  t.Flag("--matrix", options->matrix,
         "Add the GPU x NIC distance matrix (PIX/PXB/PHB/NODE/SYS, as nvidia-smi topo -m) and the "
         "recommended GPU -> NIC pairing (rails)");
  cmd->footer(
      "Examples:\n"
      "  fabcheck inventory                          # this node\n"
      "  fabcheck inventory --matrix                 # plus GPU x NIC distances and rails\n"
      "  fabcheck inventory --json > node07.json     # for diagnose/report elsewhere\n"
      "  fabcheck snapshot -o node07.tar.gz          # capture on the node, then anywhere:\n"
      "  fabcheck inventory --sysroot node07.tar.gz --matrix\n"
      "\n"
      "Unknown values show as ? (null in JSON) with the file that could not be read.\n"
      "Exit codes: 0 all read, 1 some files unreadable, 3 the sysroot cannot be opened.\n"
      "Field meanings and sources: docs/inventory.md.");
  return [options] { return Run(*options); };
}

const bool kRegistered = fabcheck::app::RegisterCommand({"inventory", 10, &Setup});

}  // namespace
