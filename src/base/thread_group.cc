#include "base/thread_group.h"

#include <fmt/format.h>

namespace fabcheck::base {

Budget& ProcessThreads() {
  static Budget budget("threads of this process", kMaxProcessThreads, nullptr, "threads");
  return budget;
}

Status ThreadRefused(std::string_view what, size_t running, std::string_view why) {
  return ResourceExhaustedError(fmt::format(
      "cannot start another thread for {} ({} already running for it): {} (the node or pod limits threads: "
      "pids.max / ulimit -u; ask for fewer streams, targets or in-flight requests, or raise the limit)",
      what, running, why));
}

}  // namespace fabcheck::base
