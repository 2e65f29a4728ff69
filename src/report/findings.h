// The findings of a ladder bundle, the one list the report's verdict and
// exit status come from and that `fabcheck diagnose BUNDLE` names too
// (docs/verdicts.md): every rung's failing, warning and unknown findings with
// their member, each member's doctor failures and warnings, and the
// checklist's failing and unknown items, one finding per item and member.
#pragma once

#include <vector>

#include "fabcheck/model/finding.h"
#include "fabcheck/model/report.h"
#include "report/evidence.h"

namespace fabcheck::report {

std::vector<model::Finding> BundleFindings(const BundleEvidence& e, const std::vector<model::ChecklistItem>& checklist);

// The findings of the checklist alone: a failing item gives one `fail`
// finding per member it names (one without a member when it names none), an
// unknown item one `unknown` finding; pass and manual items give none.
std::vector<model::Finding> ChecklistFindings(const std::vector<model::ChecklistItem>& checklist);

}  // namespace fabcheck::report
