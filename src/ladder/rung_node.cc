// Rungs L1L2.node (inventory + doctor on every member, one parallel round)
// and L1L2.cluster (settings that must agree across members).
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "base/base64.h"
#include "base/log.h"
#include "base/strings.h"
#include "fabcheck/model/doctor.h"
#include "ladder/consistency.h"
#include "ladder/internal.h"
#include "ladder/rungs.h"

namespace fabcheck::ladder::internal {
namespace {

// "8 x NVIDIA H100, 8 x MT4129": members with the same hardware share a type.
std::string NodeType(const model::Inventory& inv) {
  std::map<std::string, int> gpus, nics;
  for (const auto& g : inv.gpus) ++gpus[g.name.empty() ? "GPU " + g.pci.device_id : g.name];
  for (const auto& d : inv.rdma_devices) ++nics[d.hca_type.empty() ? "RDMA device" : d.hca_type];
  std::vector<std::string> parts;
  for (const auto& [n, c] : gpus) parts.push_back(fmt::format("{} x {}", c, n));
  for (const auto& [n, c] : nics) parts.push_back(fmt::format("{} x {}", c, n));
  return parts.empty() ? "no GPU, no RDMA device" : Join(parts, ", ");
}

nlohmann::json NodeRequest(const LadderOptions& o, bool snapshot) {
  nlohmann::json request = {{"profile_yaml", o.profile_yaml}, {"profile_name", o.profile_name}, {"snapshot", snapshot}};
  // --transport tcp is the explicit TCP intent: members without RDMA are then as meant.
  if (o.transport == "tcp") request["expect_transport"] = "tcp";
  return request;
}

// Takes what /v1/node answered into the member; saves the evidence files.
// Returns the doctor report when there was one.
std::optional<model::DoctorReport> Absorb(Run& run, Member& m, const nlohmann::json& answer, bool save,
                                          std::vector<std::string>* problems) {
  std::optional<model::DoctorReport> doctor;
  const std::string dir = bundle::MemberDir(m.m.id);
  try {
    if (answer.contains("inventory") && answer["inventory"].is_object()) {
      m.inventory = answer["inventory"].get<model::Inventory>();
      m.m.node_type = NodeType(*m.inventory);
      if (save && run.WriteJson(dir + "/inventory.json", answer["inventory"])) m.m.inventory_file = dir + "/inventory.json";
    } else {
      problems->push_back("no inventory in the answer");
    }
  } catch (const nlohmann::json::exception& e) {
    problems->push_back(fmt::format("the inventory is malformed: {}", e.what()));
  }
  try {
    if (answer.contains("doctor") && answer["doctor"].is_object()) {
      doctor = answer["doctor"].get<model::DoctorReport>();
      if (save && run.WriteJson(dir + "/doctor.json", answer["doctor"])) m.m.doctor_file = dir + "/doctor.json";
    }
  } catch (const nlohmann::json::exception& e) {
    problems->push_back(fmt::format("the doctor report is malformed: {}", e.what()));
  }
  if (answer.contains("facts") && answer["facts"].is_object()) m.facts = answer["facts"];
  if (save && answer.contains("snapshot_b64") && answer["snapshot_b64"].is_string() &&
      !answer["snapshot_b64"].get_ref<const std::string&>().empty()) {
    auto bytes = Base64Decode(answer["snapshot_b64"].get_ref<const std::string&>());
    if (!bytes) {
      problems->push_back("the snapshot is not valid base64");
    } else if (run.Write(dir + "/snapshot.tar.gz", *bytes)) {
      m.m.snapshot_file = dir + "/snapshot.tar.gz";
    }
  }
  if (answer.contains("errors") && answer["errors"].is_array()) {
    for (const auto& e : answer["errors"]) {
      if (e.is_string()) LOG_INFO("ladder", "member {}: {}", m.m.id, e.get<std::string>());
    }
  }
  return doctor;
}

}  // namespace

void FetchNodeFacts(Run& run, const std::vector<std::string>& ids, const std::string& rung) {
  ParallelFor(ids.size(), static_cast<size_t>(run.options.fan_out), [&](size_t i) {
    Member* m = run.Find(ids[i]);
    if (!m || !m->alive || m->inventory) return;
    auto answer = run.Client(*m).Node(NodeRequest(run.options, false), run.options.node_timeout);
    if (!answer.ok()) {
      run.CheckAlive(*m, answer.status(), rung);
      return;
    }
    std::vector<std::string> problems;
    (void)Absorb(run, *m, *answer, /*save=*/true, &problems);
  });
}

void RunNodeRung(Run& run, const std::vector<std::string>& ids, model::RungResult& r) {
  r.parameters = {{"profile", run.options.profile_name}, {"snapshots", run.options.snapshots},
                  {"timeout_ms", run.options.node_timeout.count()}};
  const auto start = Clock::now();
  std::atomic<size_t> done{0};
  std::vector<std::vector<model::Finding>> findings(ids.size());
  std::vector<model::RungVerdict> verdicts(ids.size(), model::RungVerdict::kNotRun);
  ParallelFor(ids.size(), static_cast<size_t>(run.options.fan_out), [&](size_t i) {
    Member* m = run.Find(ids[i]);
    auto finish = [&] { run.Progress(r.id, static_cast<int>(ids.size()), ++done, ids.size(), start); };
    if (!m || !m->alive) return finish();
    auto fail = [&](std::string message, std::vector<std::string> evidence, std::string remedy) {
      model::Finding f;
      f.id = "ladder.node.not-checked";
      f.severity = model::Severity::kFail;
      f.group = r.id;
      f.object = m->m.id;
      f.member = m->m.id;
      f.message = std::move(message);
      f.evidence = std::move(evidence);
      f.remedy = std::move(remedy);
      findings[i].push_back(std::move(f));
      verdicts[i] = model::RungVerdict::kFail;
    };
    auto answer = run.Client(*m).Node(NodeRequest(run.options, run.options.snapshots), run.options.node_timeout);
    if (!answer.ok()) {
      if (!run.CheckAlive(*m, answer.status(), r.id)) {
        fail("the node could not be checked", {answer.status().message()},
             answer.status().code() == StatusCode::kUnimplemented
                 ? "upgrade `fabcheck agent` on this node to the coordinator's version"
                 : (answer.status().code() == StatusCode::kInvalidArgument
                        ? "fix the --profile file (the agent refused it)"
                        : "look at the agent's log on this node"));
      }
      return finish();
    }
    std::vector<std::string> problems;
    auto doctor = Absorb(run, *m, *answer, /*save=*/true, &problems);
    if (!doctor) {
      std::vector<std::string> evidence = problems;
      if (answer->contains("errors")) {
        for (const auto& e : (*answer)["errors"]) {
          if (e.is_string()) evidence.push_back(e.get<std::string>());
        }
      }
      // "Not checked" is never a pass.
      fail("doctor did not run on this node, so L1/L2 is unknown", evidence, "look at the agent's log on this node");
      return finish();
    }
    for (const auto& f : doctor->findings) {
      if (f.severity != model::Severity::kFail && f.severity != model::Severity::kWarn) continue;
      model::Finding g = f;
      g.object = m->m.id + " " + f.object;
      g.member = m->m.id;
      findings[i].push_back(std::move(g));
    }
    // The member's verdict is its findings' (docs/verdicts.md), not a count a report carries.
    const int code = model::ExitCodeOf(doctor->findings, /*strict=*/false);
    verdicts[i] = code == 2 ? model::RungVerdict::kFail : code == 1 ? model::RungVerdict::kWarn : model::RungVerdict::kPass;
    finish();
  });
  int failed = 0, warned = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    for (auto& f : findings[i]) r.findings.push_back(std::move(f));
    if (verdicts[i] == model::RungVerdict::kFail) ++failed;
    if (verdicts[i] == model::RungVerdict::kWarn) ++warned;
    if (verdicts[i] == model::RungVerdict::kPass || verdicts[i] == model::RungVerdict::kWarn) {
      r.members_passed.push_back(ids[i]);
    }
  }
  size_t checked = r.members_passed.size() + static_cast<size_t>(failed);
  if (checked == 0) {
    r.verdict = model::RungVerdict::kFail;
    r.reason = "no member answered";
    return;
  }
  if (failed > 0) {
    std::vector<std::string> who;
    for (size_t i = 0; i < ids.size(); ++i) {
      if (verdicts[i] == model::RungVerdict::kFail) who.push_back(ids[i]);
    }
    r.verdict = model::RungVerdict::kFail;
    r.reason = fmt::format("{} of {} member(s) fail doctor: {}", failed, checked, Join(who, ", "));
  } else {
    r.verdict = warned ? model::RungVerdict::kWarn : model::RungVerdict::kPass;
    r.reason = fmt::format("{} member(s) checked{}", checked, warned ? fmt::format(", {} with warnings", warned) : "");
  }
}

void RunClusterRung(Run& run, const std::vector<std::string>& ids, model::RungResult& r) {
  FetchNodeFacts(run, ids, r.id);
  std::vector<MemberSettings> settings;
  std::vector<std::string> unknown;
  for (const auto& id : ids) {
    Member* m = run.Find(id);
    if (!m || !m->alive) continue;
    if (!m->inventory) {
      unknown.push_back(id);
      continue;
    }
    settings.push_back(ExtractSettings(id, *m->inventory, m->facts,
                                       m->info ? m->info->rails : std::vector<control::RailInfo>{}));
  }
  r.parameters = {{"settings", nlohmann::json::array()}};
  for (const auto& s : Settings()) r.parameters["settings"].push_back(s.name);
  r.consistency = CompareSettings(settings);
  r.findings = ConsistencyFindings(r.consistency);
  for (const auto& id : unknown) {
    model::Finding f;
    f.id = "ladder.cluster.unknown";
    f.severity = model::Severity::kFail;
    f.group = r.id;
    f.object = id;
    f.member = id;
    f.message = "the member's settings could not be read, so it cannot be compared";
    f.remedy = "look at the agent's log on this node";
    r.findings.push_back(std::move(f));
  }
  std::set<std::string> failed(unknown.begin(), unknown.end());
  bool warn = false, any = false;
  std::vector<std::string> bad_settings;
  for (const auto& c : r.consistency) {
    if (c.verdict == model::RungVerdict::kNotRun) continue;
    any = true;
    if (c.verdict == model::RungVerdict::kFail) {
      failed.insert(c.outliers.begin(), c.outliers.end());
      bad_settings.push_back(c.setting);
    }
    if (c.verdict == model::RungVerdict::kWarn) warn = true;
  }
  for (const auto& s : settings) {
    if (!failed.count(s.member)) r.members_passed.push_back(s.member);
  }
  if (!any && unknown.empty()) {
    r.verdict = model::RungVerdict::kNotRun;
    r.reason = "no setting is known on any member";
    r.members_passed.clear();
    return;
  }
  if (settings.size() < 2) {
    // One member agrees with itself: nothing was compared.
    r.verdict = failed.empty() ? model::RungVerdict::kNotRun : model::RungVerdict::kFail;
    r.reason = failed.empty() ? "one member: nothing to compare" : "the member's settings could not be read";
    if (failed.empty()) r.members_passed.clear();
    return;
  }
  if (!failed.empty()) {
    r.verdict = model::RungVerdict::kFail;
    r.reason = fmt::format("{} disagree: {}", bad_settings.empty() ? "settings unknown" : Join(bad_settings, ", "),
                           Join(std::vector<std::string>(failed.begin(), failed.end()), ", "));
  } else {
    std::vector<std::string> compared;
    for (const auto& c : r.consistency) {
      if (c.verdict != model::RungVerdict::kNotRun) compared.push_back(c.setting);
    }
    r.verdict = warn ? model::RungVerdict::kWarn : model::RungVerdict::kPass;
    r.reason = fmt::format("{} member(s) agree on {}{}", settings.size(), Join(compared, ", "),
                           warn ? " (versions differ: see the warnings)" : "");
  }
}

}  // namespace fabcheck::ladder::internal
