// The report's plots as inline SVG, from the bundle's model values. Each
// returns "" when the bundle has nothing to draw (the page then says why).
// Large clusters are aggregated so the page stays small: heatmaps per leaf
// beyond 128 members (or 4,096 measured pairs per rail), bandwidth curves as
// a min-max band with the failing pairs drawn on top.
#pragma once

#include <string>
#include <vector>

#include "fabcheck/model/report.h"
#include "report/evidence.h"

namespace fabcheck::report::plots {

inline constexpr size_t kHeatmapMembers = 128;
inline constexpr size_t kHeatmapCells = 4096;

// Rungs bottom-up as coloured boxes with their verdict and member counts.
std::string RungStrip(const model::GoLiveReport& report);
// Members x rungs status grid (members that passed everything folded beyond 128).
std::string MemberGrid(const model::GoLiveReport& report);
// L3 bandwidth against message size, with the expected envelope.
std::string BandwidthVsSize(const BundleEvidence& e);
// L4 busbw against message size per collective, with its expectation.
std::string BusBwVsSize(const BundleEvidence& e);
// L3 latency p50 and p99 per pair, sorted by p99.
std::string LatencyPercentiles(const BundleEvidence& e);
// One heatmap per rail of bandwidth / expected (rows send to columns).
std::vector<std::string> PairHeatmaps(const BundleEvidence& e);
// GPU x NIC distance matrix for each distinct node type (first member with an inventory).
std::vector<std::string> DistanceMatrices(const BundleEvidence& e, const std::vector<std::string>& node_types);
// Counter deltas per member (largest first, error counters in red).
std::string CounterDeltas(const BundleEvidence& e);

}  // namespace fabcheck::report::plots
