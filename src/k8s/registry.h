// The rule catalog. Rules live one per file in rules/; each file defines one
// function returning its Rule, listed here by hand (static registration
// would be dropped by the linker from a static library).
#pragma once

#include <string_view>
#include <vector>

#include "fabcheck/model/catalog.h"
#include "k8s/rule.h"

namespace fabcheck::k8s {

const std::vector<Rule>& AllRules();
const Rule* FindRule(std::string_view id);
// The rules as entries of the one catalog (source "k8s", group = scope).
std::vector<model::CatalogEntry> CatalogEntries();

}  // namespace fabcheck::k8s
