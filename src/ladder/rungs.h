// The ladder's rungs (IDs in fabcheck/model/ladder.h), which of them a run
// asks for, and the stop rule that decides who climbs to the next one.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "fabcheck/model/ladder.h"

namespace fabcheck::ladder {

inline constexpr std::string_view kRungNode = "L1L2.node";
inline constexpr std::string_view kRungCluster = "L1L2.cluster";
inline constexpr std::string_view kRungPath = "L2.path";
inline constexpr std::string_view kRungPerf = "L3";
inline constexpr std::string_view kRungColl = "L4";

// Every rung, bottom-up.
const std::vector<std::string>& AllRungs();
std::string RungTitle(std::string_view id);

// --rungs: "all", a level ("L3"), a range of levels ("L1-L3"), rung IDs
// ("L1L2.node,L3"), or a mix, comma separated. Levels map to the rungs that
// cover them: L1 and L2 -> L1L2.node, L1L2.cluster (and L2 -> L2.path),
// L3 -> L3, L4 -> L4. Returns the rungs in ladder order; InvalidArgument
// naming the bad part (and listing what is valid).
Result<std::vector<std::string>> ParseRungSelection(std::string_view text);

// The stop rule, after a rung finished with `result`:
//   - the members that climb on are result.members_passed;
//   - without keep_going, any failure stops the ladder (DESIGN: stop at the
//     first failing rung, with the evidence);
//   - with keep_going, the ladder goes on with the healthy subset and stops
//     only when no member passed.
// A rung that was not run (no GPU, nothing to test) never stops the ladder
// and passes its members on unchanged: it proves nothing either way.
struct StopDecision {
  bool stop = false;
  std::vector<std::string> next_members;  // who runs the next rung
  std::vector<std::string> dropped;       // who left here (failed this rung)
};
StopDecision DecideStop(const model::RungResult& result, const std::vector<std::string>& members, bool keep_going);

// The go / no-go verdict over the rungs as run. `selected`: the rungs asked
// for; a selected rung that did not run (or ran only over TCP) keeps the
// verdict at no-go, with the reason in the summary. Unselected rungs are
// listed in not_run but do not block go.
model::LadderVerdict ComputeVerdict(const std::vector<model::RungResult>& rungs,
                                    const std::vector<std::string>& selected, bool interrupted);

}  // namespace fabcheck::ladder
