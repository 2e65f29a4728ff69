// The go-live report as one self-contained HTML file: inline CSS and SVG, no
// script, no font, image or stylesheet from anywhere (it opens offline and
// from a ticket attachment), and a print stylesheet so it reads on paper.
#pragma once

#include <string>

#include "fabcheck/model/report.h"
#include "report/evidence.h"

namespace fabcheck::report {

std::string RenderHtml(const model::GoLiveReport& report, const BundleEvidence& evidence);

}  // namespace fabcheck::report
