// Locating the problem: from the matrices to the slow node, the slow link and
// the MTU hole, with robust statistics instead of fixed baselines.
//
// Per node, a "score" summarises it across its peers: the upper quartile of
// the bandwidth it sends (row) and receives (column), so a node is named only
// when it is slow with at least three quarters of its peers (one bad cable
// does not make a bad node). Node scores are compared with their median and
// scaled MAD across the cluster. A link is judged against what its two ends
// achieve elsewhere: expected(a->b) = min(send score of a, receive score of
// b); a link is named when it falls well below that while neither end is a
// named node. Latency is mirrored (high is bad, lower quartile). The path MTU
// is discrete: a node whose path MTU with most peers is below the cluster
// median is an MTU hole; a single pair below what both ends reach elsewhere
// is a link MTU hole. A finding needs BOTH a relative drop (min_drop) and a
// robust z beyond z_threshold, so neither tiny spread nor wide noise alone
// names anybody.
#pragma once

#include <vector>

#include "fabcheck/model/sweep.h"

namespace fabcheck::sweep {

struct AnalysisOptions {
  double bw_min_drop = 0.25;   // name a bandwidth culprit only when >= 25% below its reference
  double lat_min_rise = 1.0;   // name a latency culprit only when >= 2x its reference
  double z_threshold = 3.0;    // and beyond this many scaled MADs
  double fail_ratio = 0.5;     // below half the reference is a failure, above a warning
  double node_quantile = 0.75; // upper quartile of a node's peers (bandwidth, MTU)
};

// Judges every rail of `matrices`. `members` gives names and reachability;
// `pairs` (may be empty, e.g. for synthetic input) gives failed tests and the
// interface MTUs the senders believed in.
model::SweepVerdict Analyze(const std::vector<model::SweepMatrices>& matrices,
                            const std::vector<model::SweepMember>& members,
                            const std::vector<model::SweepPairResult>& pairs,
                            const AnalysisOptions& options = {});

// The robust centre of a large set: median and scaled MAD of at most ~1M
// evenly strided samples (exact below that), so a 4,096-node cluster's 16M
// cells take milliseconds.
struct Robust {
  double median = 0;
  double scaled_mad = 0;
  size_t count = 0;
};
Robust RobustOf(const std::vector<double>& values);

}  // namespace fabcheck::sweep
