// CPU placement shared by the transports: the CPUs of a NUMA node this
// process may use, pinning the calling thread to them, and the binding a
// --numa policy resolves to for a device whose node may be unknown.
#pragma once

#include <sched.h>

#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "perf/transport.h"
#include "sys/sysroot.h"

namespace fabcheck::perf {

// CPUs of `node` allowed to this thread; empty when unknown.
std::vector<int> CpusOfNode(const sys::SysRoot& root, int node);
// Pins the calling thread to `cpus` (no-op when empty).
void PinThread(const std::vector<int>& cpus);

// What a --numa policy resolves to.
struct NumaBinding {
  std::optional<int> node;   // bound node; nullopt = not bound
  std::vector<int> cpus;     // its allowed CPUs (empty when not bound)
  std::string note;          // why not bound, when auto could not bind
};
// auto: the device's node when known (`device_node`), else unbound with a note
// naming `device`; N: node N, FailedPrecondition when it has no usable CPU;
// off: unbound.
Result<NumaBinding> ResolveNuma(const sys::SysRoot& root, const NumaSpec& spec, std::optional<int> device_node,
                                const std::string& device);

// Restores the calling thread's CPU affinity when it goes out of scope, so a
// server thread that served one client bound to node 1 does not carry that
// binding to the next client.
class ScopedAffinity {
 public:
  ScopedAffinity();
  ~ScopedAffinity();
  ScopedAffinity(const ScopedAffinity&) = delete;
  ScopedAffinity& operator=(const ScopedAffinity&) = delete;

 private:
  cpu_set_t saved_;
  bool valid_ = false;
};

}  // namespace fabcheck::perf
