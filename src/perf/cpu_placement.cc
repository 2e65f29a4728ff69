#include "perf/cpu_placement.h"

#include <pthread.h>

#include <fmt/format.h>

#include "base/units.h"
#include "sys/numa.h"

namespace fabcheck::perf {

std::vector<int> CpusOfNode(const sys::SysRoot& root, int node) {
  auto cpus = sys::numa::ReadNodeCpus(root, node);
  if (!cpus.ok()) return {};
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (::pthread_getaffinity_np(::pthread_self(), sizeof allowed, &allowed) != 0) return *cpus;
  std::vector<int> out;
  for (int c : *cpus) {
    if (c >= 0 && c < CPU_SETSIZE && CPU_ISSET(c, &allowed)) out.push_back(c);
  }
  return out;
}

void PinThread(const std::vector<int>& cpus) {
  if (cpus.empty()) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus) {
    if (c >= 0 && c < CPU_SETSIZE) CPU_SET(c, &set);
  }
  (void)::pthread_setaffinity_np(::pthread_self(), sizeof set, &set);
}

Result<NumaBinding> ResolveNuma(const sys::SysRoot& root, const NumaSpec& spec, std::optional<int> device_node,
                                const std::string& device) {
  NumaBinding b;
  switch (spec.mode) {
    case NumaSpec::Mode::kOff:
      break;
    case NumaSpec::Mode::kAuto:
      if (device_node) {
        b.cpus = CpusOfNode(root, *device_node);
        if (!b.cpus.empty()) {
          b.node = device_node;
        } else {
          b.note = fmt::format("numa auto: NUMA node {} of {} has no CPU this process may use; not bound",
                               *device_node, device);
        }
      } else {
        b.note = fmt::format("numa auto: the NUMA node of {} is unknown (virtual or loopback device); not bound",
                             device);
      }
      break;
    case NumaSpec::Mode::kNode:
      b.cpus = CpusOfNode(root, spec.node);
      if (b.cpus.empty()) {
        return FailedPreconditionError(fmt::format(
            "--numa {}: NUMA node {} has no CPU this process may use (see lscpu; use --numa auto or off)", spec.node,
            spec.node));
      }
      b.node = spec.node;
      break;
  }
  return b;
}

ScopedAffinity::ScopedAffinity() {
  CPU_ZERO(&saved_);
  valid_ = ::pthread_getaffinity_np(::pthread_self(), sizeof saved_, &saved_) == 0;
}

ScopedAffinity::~ScopedAffinity() {
  if (valid_) (void)::pthread_setaffinity_np(::pthread_self(), sizeof saved_, &saved_);
}

}  // namespace fabcheck::perf
