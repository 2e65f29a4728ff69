// Reading a bundle for the report: the one place in report/ that opens files.
// Everything it reads goes through bundle::Bundle (which never follows a
// manifest entry out of the bundle); a member's inventory or doctor report
// that is missing or unreadable becomes a note, and the items that need it
// turn "unknown" rather than pass.
#pragma once

#include <string>

#include "base/status.h"
#include "report/evidence.h"

namespace fabcheck::report {

// A bundle directory or .tar.gz written by `fabcheck ladder`.
Result<BundleEvidence> LoadBundle(const std::string& path);

// Adds the KV results of `path` (fabcheck kv run --json: fabcheck.kv/v1, or
// fabcheck.kv-fan/v1 with one result per transfer) to e.kv. An error names
// the file and what is wrong with it.
Status LoadKvResults(const std::string& path, BundleEvidence& e);

}  // namespace fabcheck::report
