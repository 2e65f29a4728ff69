// The ladder's own judgements (pairs, cluster consistency, members, L4 ranks)
// as entries of the one catalog (source "ladder"). The L1L2.node rung carries
// the doctor's findings under the doctor's IDs.
#pragma once

#include <vector>

#include "fabcheck/model/catalog.h"

namespace fabcheck::ladder {

std::vector<model::CatalogEntry> CatalogEntries();

}  // namespace fabcheck::ladder
