// The sweep for people: verdict, culprits, and the matrices as text heatmaps
// (one glyph per cell, relative to the cluster median) plus the figures when
// the cluster is small enough to read them.
#pragma once

#include <string>

#include "fabcheck/model/sweep.h"

namespace fabcheck::report {

struct SweepTextOptions {
  int numeric_up_to = 16;  // print the numbers when n <= this
  int heatmap_up_to = 128; // beyond it, the heatmap would not fit a screen: culprits only
};

std::string RenderSweepText(const model::SweepResult& result, const SweepTextOptions& options = {});

// "sweep: round 3 of 7, elapsed 12.1 s, ETA 16.0 s, 1 unreachable"
std::string SweepProgressLine(int round, int rounds, double elapsed_s, double eta_s, int unreachable);

}  // namespace fabcheck::report
