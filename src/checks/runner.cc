#include "checks/runner.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
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

bool FromOlderCapture(const model::Finding& f) {
  if (f.severity != model::Severity::kUnknown) return false;
  for (const std::string* text : {&f.message, &f.remedy}) {
    if (text->find("was taken without the doctor's evidence") != std::string::npos ||
        text->find("this capture was taken before") != std::string::npos) {
      return true;
    }
  }
  return false;
}

std::vector<model::Finding> GroupUnknowns(std::vector<model::Finding> findings) {
  std::map<std::string, size_t> count;
  for (const auto& f : findings) {
    if (f.severity == model::Severity::kUnknown) ++count[f.id];
  }
  std::vector<model::Finding> out;
  std::map<std::string, size_t> merged_at;  // check ID -> index in out of its merged unknown
  for (auto& f : findings) {
    if (f.severity != model::Severity::kUnknown || count[f.id] < 2) {
      out.push_back(std::move(f));
      continue;
    }
    auto it = merged_at.find(f.id);
    if (it == merged_at.end()) {
      merged_at[f.id] = out.size();
      model::Finding g = f;
      g.evidence = {f.object + ": " + f.message};
      for (const auto& e : f.evidence) g.evidence.push_back(f.object + ": " + e);
      out.push_back(std::move(g));
      continue;
    }
    model::Finding& g = out[it->second];
    g.object += ", " + f.object;
    if (f.message != g.message) {
      // Different reasons: keep the first as the line, every one in the evidence.
      g.message = g.message.substr(0, g.message.find(" (and others"));
      g.message += " (and others: see the evidence)";
    }
    g.evidence.push_back(f.object + ": " + f.message);
    for (const auto& e : f.evidence) g.evidence.push_back(f.object + ": " + e);
    if (g.remedy.empty()) g.remedy = f.remedy;
  }
  for (auto& [id, index] : merged_at) {
    model::Finding& g = out[index];
    g.object = std::to_string(count[id]) + " objects: " + g.object;
  }
  return out;
}

namespace {

// The older-capture unknowns say once, in the report's capture note, where
// they come from; each keeps only what it could not read.
std::string NoteOlderCapture(std::vector<model::Finding>& findings, const sys::SysRoot& root) {
  std::vector<std::string> ids;
  size_t n = 0;
  for (auto& f : findings) {
    if (!FromOlderCapture(f)) continue;
    ++n;
    if (std::find(ids.begin(), ids.end(), f.id) == ids.end()) ids.push_back(f.id);
    f.subject = "capture";
    size_t colon = f.message.find(": ");
    std::string what = colon == std::string::npos ? std::string() : f.message.substr(0, colon);
    if (what.find("taken") != std::string::npos) what.clear();
    f.message = (what.empty() ? std::string("not recorded") : what) + " (the capture predates this check)";
    f.remedy = "re-take the capture with `fabcheck snapshot` on the node";
  }
  if (n == 0) return "";
  return fmt::format("{} was taken without what {} check(s) read ({}): their {} unknown finding(s) say nothing about "
                     "the node; re-take it with `fabcheck snapshot` for a full check",
                     root.Describe(), ids.size(), fmt::join(ids, ", "), n);
}

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
  ctx.tcp_intended = options.expect_transport == "tcp" || (profile && profile->transport == "tcp");

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
  if (!root.live()) report.capture_note = NoteOlderCapture(report.findings, root);
  report.findings = GroupUnknowns(std::move(report.findings));
  report.summary = model::Summarize(report.findings, RungOrder(), options.strict);
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
