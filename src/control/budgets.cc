#include "control/budgets.h"

#include <fmt/format.h>

#include "base/thread_group.h"

namespace fabcheck::control {

size_t MaxAnswerBytes(std::string_view path) {
  constexpr size_t kMiB = 1 << 20;
  if (path == "/v1/node") return 128 * kMiB;
  if (path == "/v1/inventory" || path == "/v1/kv") return 16 * kMiB;
  if (path == "/v1/counters" || path == "/v1/coll") return 8 * kMiB;
  return 1 * kMiB;
}

base::Budget& AgentClientMemory() {
  static base::Budget budget("the agent's test buffers (all requests)", kAgentClientMemoryTotal, nullptr, "bytes");
  return budget;
}

RequestBudgets::RequestBudgets(const char* route)
    : memory(fmt::format("the test buffers of one {} request", route), kAgentClientMemoryPerRequest,
             &AgentClientMemory(), "bytes"),
      threads(fmt::format("the threads of one {} request", route), kAgentThreadsPerRequest, &base::ProcessThreads(),
              "threads") {}

}  // namespace fabcheck::control
