// A parsed NCCL log for people: what `fabcheck nccl-log` prints without
// --json (the summary, then the verdicts), and what `fabcheck coll` prints
// about the log of its own run. The parser is logs/nccl_log.h, the verdicts
// come from diagnose/'s NCCL rules; this renders their model values only.
#pragma once

#include <string>
#include <vector>

#include "fabcheck/model/coll.h"
#include "fabcheck/model/finding.h"

namespace fabcheck::report {

// The summary: files, version, hosts and ranks, bootstrap, NICs, environment,
// GPUDirect decisions, connections, events and odd lines (long lists cut,
// everything in --json).
std::string FormatNcclLogSummary(const model::NcclLogSummary& summary);

// "verdicts:" and the findings, each through FormatFindingLines.
std::string FormatNcclFindings(const std::vector<model::Finding>& findings);

// One finding as nccl-log and coll list it: "  [severity] id: message", each
// evidence line, and the fix unless it passed.
std::string FormatFindingLines(const model::Finding& finding);

}  // namespace fabcheck::report
