// Human-readable inventory: compact tables for an 80-column terminal.
// Text out only; the command decides where it goes.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "fabcheck/model/inventory.h"

namespace fabcheck::report {

struct InventoryTextOptions {
  bool matrix = false;  // add the GPU x NIC distance matrix and the rails
  // How warnings name files ("/sys/..." by default); the command passes the
  // sysroot's DisplayPath so a capture's name appears.
  std::function<std::string(const std::string& path)> display_path;
};

std::string RenderInventory(const model::Inventory& inv, const InventoryTextOptions& options);
// Only the matrix, the rails and the legend.
std::string RenderMatrix(const model::Inventory& inv);
// "Gen5 x16", "Gen4 x8", "?" parts when unknown.
std::string FormatLink(const std::optional<double>& gts, const std::optional<int>& width);

}  // namespace fabcheck::report
