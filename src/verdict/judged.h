// What the other commands judged of the evidence diagnose is given, as
// diagnoses under the same IDs and members: a ladder bundle's findings as
// `fabcheck report` computes them (rungs, members' doctor reports, the
// go-live checklist). diagnose::Diagnose adds them to its own, so diagnose
// never names fewer failures than the report of the same bundle.
#pragma once

#include <string>
#include <vector>

#include "fabcheck/model/diagnose.h"

namespace fabcheck::verdict {

// Empty when `bundle_path` is "" or cannot be read (the loader records why).
std::vector<model::Diagnosis> JudgedInBundle(const std::string& bundle_path);

}  // namespace fabcheck::verdict
