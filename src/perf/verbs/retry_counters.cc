#include "perf/verbs/retry_counters.h"

#include <fmt/format.h>

#include "base/strings.h"
#include "sys/infiniband.h"

namespace fabcheck::perf::verbs {

CounterValues ReadRetryCounters(const sys::SysRoot& root, const std::string& device, int port) {
  CounterValues out;
  const std::string dir = sys::infiniband::HwCountersDir(device, port) + "/";
  for (const char* name : kRetryCounterNames) {
    auto text = root.ReadAttribute(dir + name);
    if (!text.ok()) continue;
    if (auto v = ParseUint(*text)) out[name] = *v;
  }
  return out;
}

std::string DescribeRetryGrowth(const CounterValues& before, const CounterValues& after) {
  std::string out;
  for (const char* name : kRetryCounterNames) {
    auto b = before.find(name);
    auto a = after.find(name);
    if (b == before.end() || a == after.end() || a->second <= b->second) continue;
    if (!out.empty()) out += ", ";
    out += fmt::format("{} +{}", name, a->second - b->second);
  }
  return out;
}

}  // namespace fabcheck::perf::verbs
