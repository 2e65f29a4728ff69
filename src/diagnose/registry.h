// Every diagnose rule, in catalog order, and the catalog (docs/diagnose.md).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "diagnose/rule.h"
#include "fabcheck/model/catalog.h"

namespace fabcheck::diagnose {

const std::vector<const Rule*>& AllRules();
const Rule* FindRule(std::string_view id);

// The rules as entries of the one catalog (source "diagnose").
std::vector<model::CatalogEntry> CatalogEntries();

// docs/diagnose.md, generated from the rules themselves (`fabcheck diagnose --catalog`).
std::string CatalogMarkdown();

}  // namespace fabcheck::diagnose
