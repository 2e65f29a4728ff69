// Test helpers: the inventory nodes of tests/fixtures/inventory_nodes.h,
// written at test time, and golden comparison.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "fabcheck/model/inventory.h"

namespace fabcheck::inventory::testing {

// The directory holding the generated fixture `name` (dgx-h100, roce,
// broken), built once per test process in a temporary directory.
std::string FixtureDir(const std::string& name);
// A scratch directory removed at exit.
std::string ScratchDir();

// The inventory JSON without the fields that name where it was read from.
nlohmann::json Comparable(const model::Inventory& inv);

// Compares `actual` with tests/data/golden/<name>.json; with
// FABCHECK_UPDATE_GOLDENS=1 in the environment, rewrites the golden instead.
// Returns "" when equal, else a description of the first differences.
std::string CheckGolden(const std::string& name, const nlohmann::json& actual);

// Runs a shell command; returns its exit status and fills *output with stdout+stderr.
int RunCommand(const std::string& command, std::string* output);

}  // namespace fabcheck::inventory::testing
