// Parsing JSON that comes from outside (bundles, captures, results a peer
// wrote) within a budget of nesting depth and values.
//
// A parsed document takes far more memory than its text: every value is a
// 16-byte node, every object a tree of 80-byte entries, every container an
// allocation of its own, so `[{},{},...]` takes ~25 times its size and a
// 40 MB manifest took 1.6 GB. A file size cap alone does not bound that. The
// budget is checked while the parser runs, so a document over it stops at
// the first value past the limit, before it is built.
//
//   ASSIGN_OR_RETURN(nlohmann::json j, ParseJsonWithin(text, "bundle x.tar.gz: manifest.json", kManifestJson));
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string_view>

#include "base/status.h"

namespace fabcheck {

struct JsonBudget {
  int max_depth = 64;            // fabcheck's own documents nest up to 10 levels
  uint64_t max_values = 250'000;  // every scalar, container and object key counts one
};

// One node's document: an inventory, a doctor report, a counter sample, a
// capture's metadata. A DGX-class inventory holds ~3,400 values.
inline constexpr JsonBudget kNodeDocumentBudget{64, 250'000};
// A cluster's document: a ladder manifest, sweep, perf, coll or kv results.
// KNOWN_AFTER_MEASURE
inline constexpr JsonBudget kClusterDocumentBudget{64, 16'000'000};

// Parses `text`; `what` names the document in errors. InvalidArgument when it
// is not JSON, ResourceExhausted (naming the budget) when it is over it.
Result<nlohmann::json> ParseJsonWithin(std::string_view text, std::string_view what, const JsonBudget& budget);

}  // namespace fabcheck
