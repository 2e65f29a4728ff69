#include "checks/runner.h"

#include <fmt/format.h>

#include <set>

#include "base/log.h"
#include "checks/registry.h"
#include "inventory/inventory.h"
#include "sys/irq.h"

namespace fabcheck::checks {

std::vector<model::Finding> RunChecks(const Context& ctx, const std::vector<const Check*>& checks) {
  std::vector<model::Finding> findings;
  for (const Check* check : checks) {
    Reporter reporter(*check, &findings);
    check->run(ctx, reporter);
    if (reporter.count() == 0) reporter.Pass("node", "no problem found");
  }
  return findings;
}

namespace {

std::vector<std::string> RungOrder() {
  std::vector<std::string> out;
  for (Rung r : kAllRungs) out.push_back(std::string(RungName(r)));
  return out;
}

}  // namespace

Result<model::DoctorReport> RunDoctor(const DoctorOptions& options, const std::string& fabcheck_version) {
  ASSIGN_OR_RETURN(std::vector<const Check*> checks, SelectChecks(options.only));
  sys::SysRoot root = options.root ? *options.root : sys::SysRoot::Live();
  if (!options.root && !options.sysroot.empty()) {
    ASSIGN_OR_RETURN(root, sys::SysRoot::Open(options.sysroot));
  }
  std::optional<Profile> profile;
  if (!options.profile.empty()) {
    ASSIGN_OR_RETURN(Profile p, LoadProfile(options.profile));
    profile = std::move(p);
  }
  EnvSources sources;
  sources.use_process_env = options.use_process_env;
  sources.env_files = options.env_files;
  ASSIGN_OR_RETURN(NcclEnv env, LoadNcclEnv(root, sources));

  inventory::ReadOptions read_options;
  read_options.query_libraries = options.query_libraries;
  model::Inventory inv = options.inventory ? *options.inventory : inventory::ReadInventory(root, read_options);
  // A folder that cannot be listed hides everything in it: checking the rest
  // would report "nothing to check" or a pass for what was never seen.
  for (const auto& w : inv.warnings) {
    bool denied = w.message.find("EACCES") != std::string::npos || w.message.find("EPERM") != std::string::npos;
    if (denied && w.message.rfind("cannot list", 0) == 0) {
      return PermissionDeniedError("cannot check " + root.Describe() + ": " + root.DisplayPath(w.path) + " " +
                                   w.message + " (run as root, or as the owner of the tree)");
    }
  }

  Context ctx;
  ctx.root = &root;
  ctx.inventory = &inv;
  ctx.profile = profile ? &*profile : nullptr;
  ctx.env = &env;
  ctx.evidence_complete = EvidenceComplete(root);
  ctx.host_evidence_complete = HostEvidenceComplete(root);

  model::DoctorReport report;
  report.fabcheck_version = fabcheck_version;
  report.hostname = inv.host.hostname;
  report.kernel = inv.host.kernel;
  report.sysroot = root.Describe();
  report.profile = options.profile;
  std::set<std::string> seen;
  for (const auto& [name, value] : env.vars()) {
    std::string where = value.source.substr(0, value.source.find(" line "));
    if (seen.insert(where).second) report.env_sources.push_back(where);
  }
  for (const auto& w : inv.warnings) report.inventory_warnings.push_back(w.path + ": " + w.message);
  for (const Check* c : checks) report.checks.push_back(c->id);
  report.findings = RunChecks(ctx, checks);
  report.summary = model::Summarize(report.findings, RungOrder());
  return report;
}

void ReadEvidence(const sys::SysRoot& root) {
  root.RecordMeta(kEvidenceMeta, "{\"reader\": \"doctor\"}\n");
  root.RecordMeta(kHostEvidenceMeta, "{\"reader\": \"doctor\", \"host\": true}\n");
  EnvSources sources;
  auto env = LoadNcclEnv(root, sources);
  inventory::ReadOptions read_options;
  read_options.query_libraries = false;  // the snapshot's inventory pass already asked them
  model::Inventory inv = inventory::ReadInventory(root, read_options);
  Context ctx;
  ctx.root = &root;
  ctx.inventory = &inv;
  NcclEnv empty;
  ctx.env = env.ok() ? &*env : &empty;
  ctx.evidence_complete = true;
  ctx.host_evidence_complete = true;
  (void)RunChecks(ctx, AllChecks());
  // irq.affinity reads the affinity of the NICs' vectors only; the capture
  // keeps every vector's, so one named in a way the matcher does not know (a
  // new driver) can still be looked at offline.
  if (auto interrupts = sys::ReadInterrupts(root); interrupts.ok()) {
    for (const auto& v : interrupts->vectors) (void)sys::ReadIrqAffinity(root, v.irq);
  }
}

}  // namespace fabcheck::checks
