// Which NCCL job a log belongs to: the communicator IDs (`commId 0x...`, the
// hash of the job's unique ID, printed by every rank's Init START/COMPLETE
// line since NCCL 2.12) it names. Logs of one job share them; logs of two jobs
// never do, so diagnose can keep jobs apart (diagnose/jobs.h).
#pragma once

#include <set>
#include <string>

#include "base/status.h"

namespace fabcheck::logs {

// The commId values in `path` ("0x849599a51402dafc"), read line by line
// within the reader's limits; empty when the log prints none (older NCCL, a
// log cut before init). Errors when the file cannot be opened.
Result<std::set<std::string>> CommIdsOf(const std::string& path);

}  // namespace fabcheck::logs
