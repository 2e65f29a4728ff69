// Running the rules: all of them over an Evidence (diagnose), or the NCCL
// ones over one parsed log (nccl-log, coll).
#pragma once

#include <string>
#include <vector>

#include "diagnose/evidence.h"
#include "fabcheck/model/coll.h"
#include "fabcheck/model/diagnose.h"

namespace fabcheck::diagnose {

// Every rule over the evidence, plus the failures and warnings judged
// elsewhere that the evidence carries (doctor reports) and `judged` (what the
// caller judged: a bundle's ladder findings and checklist items), one per ID
// and member; worst first (severity, then confidence). `strict`: an unknown
// exits 1.
model::DiagnoseReport Diagnose(const Evidence& evidence, std::vector<model::Diagnosis> judged = {},
                               bool strict = false);

// The NCCL rules over one parsed log, as Findings (what nccl-log and coll
// report). The summary's own findings (unreadable files) come first.
std::vector<model::Finding> NcclLogFindings(const model::NcclLogSummary& summary);

// Text for people: one block per diagnosis.
std::string FormatDiagnoseReport(const model::DiagnoseReport& report, bool verbose);

}  // namespace fabcheck::diagnose
