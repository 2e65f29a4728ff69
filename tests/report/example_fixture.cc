#include "example_fixture.h"

#include <cstdlib>
#include <iostream>

namespace fabcheck::report::testing {
namespace {

BundleEvidence Make(bool baseline) {
  example::ClusterSpec spec;
  spec.baseline = baseline;
  auto e = example::MakeCluster(spec);
  if (!e.ok()) {
    std::cerr << "cannot build the example cluster: " << e.status().message() << "\n";
    std::abort();
  }
  return std::move(*e);
}

}  // namespace

const BundleEvidence& Current() {
  static const BundleEvidence kCurrent = Make(false);
  return kCurrent;
}

const BundleEvidence& Baseline() {
  static const BundleEvidence kBaseline = Make(true);
  return kBaseline;
}

}  // namespace fabcheck::report::testing
