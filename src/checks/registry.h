// Every check, in ladder order. Adding a check: write checks/<rung>/<id>.cc
// defining `extern const Check kName`, then list it in registry.cc (an
// explicit list: static-library linking would drop self-registering files).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "checks/check.h"
#include "fabcheck/model/catalog.h"

namespace fabcheck::checks {

const std::vector<const Check*>& AllChecks();
const Check* FindCheck(std::string_view id);

// --only: rung names (L1, L2, RoCE, GDR, host, container, NCCL; any case) and check
// IDs, comma separated, in any mix. Empty selects everything. An unknown name
// is an InvalidArgument error listing the valid ones.
Result<std::vector<const Check*>> SelectChecks(const std::vector<std::string>& only);

// The checks as entries of the one catalog (source "doctor").
std::vector<model::CatalogEntry> CatalogEntries();

// docs/checks.md: the catalog, generated from the checks themselves.
std::string CatalogMarkdown();

}  // namespace fabcheck::checks
