// Running the rules: all of them over an Evidence (diagnose), or the NCCL
// ones over one parsed log (nccl-log, coll).
#pragma once

#include <string>
#include <vector>

#include "diagnose/evidence.h"
#include "fabcheck/model/coll.h"
#include "fabcheck/model/diagnose.h"

namespace fabcheck::diagnose {

// Every rule over the evidence; worst first (severity, then confidence).
model::DiagnoseReport Diagnose(const Evidence& evidence);

// The NCCL rules over one parsed log, as Findings (what nccl-log and coll
// report). The summary's own findings (unreadable files) come first.
std::vector<model::Finding> NcclLogFindings(const model::NcclLogSummary& summary);

// Text for people: one block per diagnosis.
std::string FormatDiagnoseReport(const model::DiagnoseReport& report, bool verbose);

}  // namespace fabcheck::diagnose
