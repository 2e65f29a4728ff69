// Shared between the two halves of the localiser (localize.cc: NICs, nodes,
// MTU, flaps; localize_links.cc: uplinks and spines). Not for other modules.
#pragma once

#include <string>
#include <vector>

#include "sweep/localize.h"

namespace fabcheck::sweep::internal {

// What the NIC pass learnt, per member x rail (index member * rails + rail).
struct NicView {
  int rails = 1;
  std::vector<double> reference;  // per rail: the reference bandwidth of one test
  std::vector<float> best_q;      // NaN when never measured
  std::vector<uint8_t> bad;       // named slow, MTU hole or flapping: its flows say nothing about links
  bool good(int member, int rail) const {
    const float q = best_q[static_cast<size_t>(member) * rails + rail];
    return q == q && !bad[static_cast<size_t>(member) * rails + rail] && q >= good_threshold;
  }
  double good_threshold = 0.88;
};

std::string NicName(const std::vector<model::SweepMember>& members, int member, int rail);
std::string MemberName(const std::vector<model::SweepMember>& members, int member);

// Uplinks and spines from the slow flows of inter-leaf tests; without per-flow
// paths, leaf-to-leaf paths from the tests between NICs known good.
void LocalizeLinks(const Evidence& evidence, const NicView& nics, const LocalizeOptions& o, Localization* out);

}  // namespace fabcheck::sweep::internal
