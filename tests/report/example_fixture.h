// The example cluster's evidence for the report tests, built once per test binary.
#pragma once

#include "example_cluster.h"

namespace fabcheck::report::testing {

// The current run (faults planted) and the healthy baseline run a week before.
const BundleEvidence& Current();
const BundleEvidence& Baseline();

}  // namespace fabcheck::report::testing
