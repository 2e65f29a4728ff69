// The ladder's verdict for people (stdout): go / no-go, the rungs, and each
// failure with its member, evidence and fix.
#pragma once

#include <string>

#include "fabcheck/model/ladder.h"

namespace fabcheck::report {

// `bundle` names where the evidence went ("" when none was written).
std::string RenderLadderVerdict(const model::LadderManifest& manifest, const std::string& bundle);

// One progress line: "[2/4 L1L2.cluster] 6 members, 3/6 done, 4.1 s elapsed, ETA 3 s".
std::string LadderProgressLine(const std::string& rung, int rung_number, int rungs, int members, size_t done,
                               size_t total, double elapsed_s, double eta_s);

}  // namespace fabcheck::report
