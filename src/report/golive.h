// The go-live report of a ladder bundle: the checklist, the rungs and members
// in brief, and (with a baseline bundle) what changed. Pure: evidence in,
// model::GoLiveReport out; the renderers (markdown.h, html.h) draw it.
#pragma once

#include <string>

#include "fabcheck/model/report.h"
#include "report/evidence.h"

namespace fabcheck::report {

struct ReportOptions {
  std::string fabcheck_version;
  const BundleEvidence* baseline = nullptr;  // --baseline
  double slower_threshold = 0.1;             // a pair slower by more than this fraction is a change
  bool strict = false;                       // --strict: an unknown item or finding exits 1
};

model::GoLiveReport BuildReport(const BundleEvidence& evidence, const ReportOptions& options);

// A failing pair with its suspect, one line for every output (Markdown,
// HTML, the ladder's text): "dgx-02 -> dgx-07 rail 1: 147 Gb/s ...: suspect
// NIC or cable of dgx-07 mlx5_1/1 (high confidence): <why>".
std::string DescribeSuspectPair(const model::PairTest& pair);
// Its counters, both ends: "dgx-07 mlx5_1/1 symbol_error +5212 (96 s), ...".
std::string DescribePairCounters(const model::PairTest& pair);

// What changed from `before` to `after` (baseline.cc).
model::BaselineDiff DiffBundles(const BundleEvidence& before, const BundleEvidence& after, double slower_threshold);

}  // namespace fabcheck::report
