// Facts about the process doctor runs as (the job's stand-in): its memlock
// limit, its effective capabilities, and whether it runs in a container.
// Read from /proc/self/* through the SysRoot, so a capture carries the
// limits of the process (or pod) that took it.
#pragma once

#include <string>

#include "checks/check.h"
#include "checks/proc.h"

namespace fabcheck::checks {

struct ProcessFacts {
  Result<Rlimit> memlock = UnavailableError("not read");
  Result<uint64_t> cap_eff = UnavailableError("not read");
  bool in_container = false;
  std::string container_evidence;  // what says so (the cgroup file "mentions kubepods")
  bool HasIpcLock() const { return cap_eff.ok() && (*cap_eff >> kCapIpcLock) & 1; }
};

ProcessFacts ReadProcessFacts(const sys::SysRoot& root);

}  // namespace fabcheck::checks
