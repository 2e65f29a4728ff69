// Rung L4: collectives across the members. It needs a GPU on every member;
// where one has none the rung is "not run" with the members named, never a
// pass.
#include <fmt/format.h>

#include "base/strings.h"
#include "ladder/internal.h"

namespace fabcheck::ladder::internal {

void RunCollRung(Run& run, const std::vector<std::string>& ids, model::RungResult& r) {
  FetchNodeFacts(run, ids, r.id);
  r.parameters = {{"ops", {"all_reduce", "all_gather", "alltoall"}}, {"max_bytes", uint64_t{1} << 30}};
  std::vector<std::string> without_gpu, unknown;
  for (const auto& id : ids) {
    const Member* m = run.Find(id);
    if (!m || !m->alive) continue;
    if (!m->inventory) unknown.push_back(id);
    else if (m->inventory->gpus.empty()) without_gpu.push_back(id);
  }
  r.verdict = model::RungVerdict::kNotRun;
  if (!unknown.empty()) {
    r.reason = fmt::format("the GPUs of {} are unknown (no inventory)", Join(unknown, ", "));
    return;
  }
  if (!without_gpu.empty()) {
    r.reason = without_gpu.size() == ids.size()
                   ? "no GPU on any member"
                   : fmt::format("no GPU on {} of {} members: {}", without_gpu.size(), ids.size(), Join(without_gpu, ", "));
    return;
  }
  r.reason = "the agents do not run collective ranks yet: run `fabcheck coll` across the members under srun, mpirun "
             "or an Indexed Job (docs/coll.md)";
}

}  // namespace fabcheck::ladder::internal
