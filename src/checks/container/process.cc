#include "checks/container/process.h"
#include "sys/procfs.h"

namespace fabcheck::checks {

ProcessFacts ReadProcessFacts(const sys::SysRoot& root) {
  ProcessFacts f;
  if (auto limits = root.ReadFile(sys::procfs::kSelfLimits); limits.ok()) {
    f.memlock = ParseMemlockLimit(*limits);
    if (!f.memlock.ok()) f.memlock = f.memlock.status().WithContext(std::string(sys::procfs::kSelfLimits));
  } else {
    f.memlock = limits.status();
  }
  if (auto status = root.ReadFile(sys::procfs::kSelfStatus); status.ok()) {
    f.cap_eff = ParseCapEff(*status);
    if (!f.cap_eff.ok()) f.cap_eff = f.cap_eff.status().WithContext(std::string(sys::procfs::kSelfStatus));
  } else {
    f.cap_eff = status.status();
  }
  // Container runtimes leave marks; any one is enough.
  for (const char* marker : {"/.dockerenv", "/run/.containerenv"}) {
    if (root.Exists(marker)) {
      f.in_container = true;
      f.container_evidence = std::string(marker) + " exists";
      return f;
    }
  }
  if (auto cgroup = root.ReadFile(sys::procfs::kSelfCgroup); cgroup.ok()) {
    for (const char* word : {"kubepods", "docker", "containerd", "crio", "libpod", "lxc"}) {
      if (cgroup->find(word) != std::string::npos) {
        f.in_container = true;
        f.container_evidence = std::string(sys::procfs::kSelfCgroup) + " mentions " + word;
        break;
      }
    }
  }
  return f;
}

}  // namespace fabcheck::checks
