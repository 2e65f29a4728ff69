// Running the doctor: read the node once (inventory, profile, NCCL settings),
// run the selected checks in ladder order, and summarise.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "checks/check.h"
#include "fabcheck/model/doctor.h"

namespace fabcheck::checks {

struct DoctorOptions {
  std::string sysroot;                 // "" = the live node; a directory or capture otherwise
  const sys::SysRoot* root = nullptr;  // an opened sysroot instead of `sysroot` (an agent's, opened once)
  const model::Inventory* inventory = nullptr;  // already read from that root (the agent read it for its answer)
  std::string profile;                 // "" = none (expectations from the node)
  std::vector<std::string> only;       // rungs and check IDs; empty = all
  std::vector<std::string> env_files;  // --env-file
  bool use_process_env = true;
  // "tcp": TCP is what this node is meant to use (no RDMA is then info, not a
  // failure); "" or "rdma": RDMA is expected on GPU nodes and profiled NICs.
  std::string expect_transport;
  bool strict = false;                 // --strict: an unknown exits 1 (docs/verdicts.md)
  bool query_libraries = true;         // inventory may ask libibverbs/NVML on a live node
};

// Runs `checks` on a prepared context. A check that reports nothing gets a
// pass finding, so every check that ran is visible.
std::vector<model::Finding> RunChecks(const Context& ctx, const std::vector<const Check*>& checks);

// One line per check for its unknowns: several unknown findings of one check
// (one per device, typically) become one, naming every object, with each
// object's reason in the evidence. Other findings are left as they are.
std::vector<model::Finding> GroupUnknowns(std::vector<model::Finding> findings);

// Whether an unknown comes from a capture taken before the check recorded
// what it reads (the checks say "was taken without the doctor's evidence" or
// "this capture was taken before").
bool FromOlderCapture(const model::Finding& finding);

// The whole command: errors only for bad input (unreadable sysroot, invalid
// profile or env file, unknown --only name); everything about the node
// itself is a finding.
Result<model::DoctorReport> RunDoctor(const DoctorOptions& options, const std::string& fabcheck_version);

// Runs every check on `root` for the side effect of reading what they read:
// `fabcheck snapshot` calls it on a recording root so captures carry the
// checks' evidence (config space, /proc/self/*, dcbnl answers, /etc/nccl.conf).
void ReadEvidence(const sys::SysRoot& root);

}  // namespace fabcheck::checks
