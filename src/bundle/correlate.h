// Pairs and counters of one rung, connected: a failing pair carries the
// counter deltas of both ends' ports taken over the same rung, and when one
// end's port counted link errors (symbol errors, receive errors, link
// recoveries) while the pair failed, that port's NIC or cable is named as the
// suspect, with a confidence. The ladder does this when it finishes a pair
// rung; report and diagnose do it again on a bundle that predates it, so the
// same evidence gets the same suspect everywhere.
#pragma once

#include <string_view>

#include "fabcheck/model/ladder.h"

namespace fabcheck::bundle {

// Counters that rise on a bad NIC port, transceiver or cable (the physical
// link), as opposed to congestion (pause frames) or the far end's symptoms
// (retransmission timeouts, out-of-sequence packets).
bool IsLinkErrorCounter(std::string_view counter);

// Fills counters and suspect of every failing pair of `rung` from its
// counter_deltas (replacing what was there); other pairs are cleared of both.
void CorrelatePairCounters(model::RungResult& rung);

// The finding a pair with a suspect makes in its rung (ladder.perf.link-errors,
// fail): the suspect with its confidence, the pair's figure and both ports'
// counters as evidence, and what to do.
model::Finding SuspectFinding(const model::RungResult& rung, const model::PairTest& pair);

}  // namespace fabcheck::bundle
