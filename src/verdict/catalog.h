// The one judgement catalog. Every module that judges keeps its rules where
// they are (checks/, diagnose/rules/, ladder/, report/checklist/, k8s/rules/)
// and hands them here as model::CatalogEntry; `fabcheck explain`,
// `fabcheck explain --list --json` and docs/catalog.md read only this.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "fabcheck/model/catalog.h"

namespace fabcheck::verdict {

// Every entry, by source in ladder order (doctor, ladder, diagnose, report, k8s). IDs are unique.
const std::vector<model::CatalogEntry>& Catalog();
const model::CatalogEntry* FindEntry(std::string_view id);
// Entries whose ID starts with `prefix` (for "did you mean" and explain of a family).
std::vector<const model::CatalogEntry*> EntriesWithPrefix(std::string_view prefix);

// One entry for people (`fabcheck explain ID`).
std::string ExplainText(const model::CatalogEntry& entry);
// {"schema": "fabcheck.catalog/v1", "entries": [...]}.
nlohmann::json CatalogJson();
// docs/catalog.md.
std::string CatalogMarkdown();

}  // namespace fabcheck::verdict
