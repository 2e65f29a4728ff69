// Pinning faults to elements of the fabric: from directional tests (and the
// per-flow figures of multi-flow tests) to this node, this NIC, this cable,
// this leaf-spine uplink, this spine, or this NIC's MTU.
//
// The reasoning, per rail, with q = a test's bandwidth over the rail's
// reference (its 90th percentile: robust to up to a tenth of slow tests and
// to contention that pulls the median down):
//   * A NIC is as good as the best test it took part in: a slow NIC (or its
//     cable) is slow with every partner, a healthy one is fast with at least
//     one. So best q < slow names the NIC segment and a single slow pairing
//     never does. Persistence: it is named only after min_slow_tests slow
//     tests, with at least min_good_partners partners that are themselves
//     known good; before that it is a suspect, to re-measure.
//   * Slow on most rails of a member: the node. On one rail: the NIC, or the
//     cable when the port reports a downtrained rate or the test lost packets.
//   * A flow of an inter-leaf test that is slow next to the best flow of its
//     test went through a slow element of its path: its two uplinks or its
//     spine (a busy host or a slow NIC slows every flow of its tests alike).
//     A spine is named when a large share of the flows through it are slow,
//     from several leaves; an uplink when most of its flows are slow in more
//     than one round, greedily, each named uplink explaining its flows (so the
//     far-end uplinks of those flows are not blamed too).
//   * MTU: a NIC whose path MTU is below the rail's median with most partners.
//   * Flaps: a NIC whose tests fail now and then, with several partners, while
//     others succeed.
#pragma once

#include <string>
#include <vector>

#include "fabcheck/model/sweep.h"
#include "fabric/fabric.h"
#include "sweep/evidence.h"

namespace fabcheck::sweep {

struct LocalizeOptions {
  double slow = 0.75;             // q below this is slow (25% below the reference)
  double good = 0.88;             // q at or above this clears a NIC
  double fail_ratio = 0.5;        // below half the reference: severity fail
  int min_slow_tests = 3;         // persistence: slow measurements before naming a NIC
  int min_good_partners = 2;      // ...with this many distinct known-good partners
  double uplink_slow_share = 0.5; // share of an uplink's flows (one direction) that must be slow
  double uplink_suspect_share = 0.2; // below the naming share but at least this: a suspect, retested
  // Real flows are noisy (TCP flows sharing a host's bottleneck are not
  // fair within a second): the naming, suspect and spine shares are at least
  // this multiple of the rail's noise floor, the lower quartile of the slow
  // shares of its directed links (those with at least 4 flows).
  double noise_multiple = 2.0;
  int uplink_min_slow_flows = 3;
  int min_rounds = 2;             // persistence for uplinks and spines: slow in this many rounds
  double spine_slow_share = 0.5;  // share of a spine's flows that must be slow, with and without its worst uplink
  int spine_min_leaves = 3;       // ...from this many leaves
  double mtu_share = 0.75;        // share of a NIC's tests below the rail's path MTU
  int flap_min_failures = 2;
  double test_far_below = 0.5;    // a test between good NICs below this x the rail's reference is slow as a whole
};

// Something that needs more measurements before it can be named or cleared.
struct Suspect {
  // kPath: a test between two leaves slow as a whole (member -> partner),
  // its flows alike: both ends, or every path between their leaves.
  enum class Kind { kNic, kMtu, kFlap, kUplink, kPath };
  Kind kind = Kind::kNic;
  int member = -1;  // kNic, kMtu, kFlap, kPath (the sender)
  int rail = 0;
  int leaf = -1;    // kUplink (a core link: a leaf that sent slow flows through it)
  int spine = -1;   // kUplink
  int core = -1;    // kUplink of a spine-core link (three tiers)
  int direction = -1;  // kUplink: LinkIds::kUp or kDown (-1: both or unknown)
  int partner = -1;    // kPath: the receiver
  std::string why;     // the evidence, for the JSON's retests and the suspect finding
};

inline Suspect MakeSuspect(Suspect::Kind kind, int member, int rail) {
  Suspect s;
  s.kind = kind, s.member = member, s.rail = rail;
  return s;
}

struct Localization {
  std::vector<model::SweepElementFinding> findings;
  std::vector<Suspect> suspects;
  // Per member and rail: 0 not measured yet, 1 known good, 2 named or suspect.
  std::vector<std::vector<uint8_t>> nic_state;
};

// From the running sums of a sweep's tests (evidence.h); the evidence's
// fabric is indexed like `members` (member i of the sweep is member i of the
// fabric), and its slow-flow threshold is options.slow.
Localization Localize(const Evidence& evidence, const std::vector<model::SweepMember>& members,
                      const LocalizeOptions& options = {});
// The same from the tests themselves (folded into an Evidence first).
Localization Localize(const std::vector<model::SweepPairResult>& tests, const fabric::FabricIndex& fabric,
                      const std::vector<model::SweepMember>& members, const LocalizeOptions& options = {});

// "nic n0001/r3", "uplink leaf-r0-01~spine-r0-02": what a suspect is, for people.
std::string SuspectName(const Suspect& suspect, const fabric::FabricIndex& fabric,
                        const std::vector<model::SweepMember>& members);

// The generic findings (rule sweep.element.<kind>) for the verdict.
std::vector<model::Finding> ElementFindings(const std::vector<model::SweepElementFinding>& elements,
                                           const std::vector<model::SweepMember>& members);

// Flows per inter-leaf test so that ECMP puts at least one on each of
// `spines` spines with probability >= p (coupon collector, exact).
int FlowsToCoverSpines(int spines, double p = 0.9);
// Flows so that each of `targets` targets, each reached by a flow with
// probability `each` (targets x each <= 1: a flow may reach none), gets at
// least one with probability >= p. The cores behind one spine of a pod of m
// spines: FlowsToCover(cores, 1 / (m x cores)).
int FlowsToCover(int targets, double each, double p = 0.9);

}  // namespace fabcheck::sweep
