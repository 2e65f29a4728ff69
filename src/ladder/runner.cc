#include "ladder/runner.h"
#include "base/utc_time.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <map>
#include <set>

#include "base/json_text.h"
#include "base/log.h"
#include "base/strings.h"
#include "ladder/internal.h"
#include "ladder/rungs.h"

namespace fabcheck::ladder {
namespace internal {

double NowUnix() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string Member::DataAddress(int rail) const {
  if (info && rail >= 0 && static_cast<size_t>(rail) < info->rails.size() && !info->rails[rail].address.empty()) {
    return info->rails[rail].address;
  }
  return endpoint.host;
}

control::AgentClient Run::Client(const Member& m) const {
  return control::AgentClient(m.endpoint, {options.token, options.connect_timeout, options.info_timeout, options.tls});
}

Member* Run::Find(const std::string& id) const {
  for (const auto& m : members) {
    if (m->m.id == id) return m.get();
  }
  return nullptr;
}

bool Run::Write(const std::string& path, std::string_view content) {
  if (!writer) return false;
  Status s = writer->WriteFile(path, content);
  if (!s.ok()) {
    std::lock_guard lock(mu);
    warnings.push_back(s.message());
    LOG_WARN("ladder", "{}", s.message());
  }
  return s.ok();
}

bool Run::WriteJson(const std::string& path, const nlohmann::json& value) {
  return Write(path, ToJsonText(value, 2) + "\n");
}

bool Run::CheckAlive(Member& m, const Status& failure, const std::string& rung) {
  if (failure.code() != StatusCode::kUnavailable && failure.code() != StatusCode::kDeadlineExceeded) return false;
  if (Client(m).Health().ok()) return false;
  std::lock_guard lock(m.mu);
  if (m.alive.exchange(false)) {
    m.m.reachable = false;
    m.m.error = failure.message();
    m.m.dropped_at = rung;
    m.m.dropped_reason = "stopped answering during " + rung + ": " + failure.message();
    LOG_WARN("ladder", "member {} stopped answering during {}: {}", m.m.id, rung, failure.message());
  }
  return true;
}

void Run::Progress(const std::string& rung, int n, size_t done, size_t total, Clock::time_point rung_start) {
  if (!options.on_progress) return;
  ladder::Progress p;
  p.rung = rung;
  p.rung_number = rung_number;
  p.rungs = rungs_to_run;
  p.members = n;
  p.done = done;
  p.total = total;
  auto now = Clock::now();
  p.elapsed_s = std::chrono::duration<double>(now - start).count();
  double in_rung = std::chrono::duration<double>(now - rung_start).count();
  p.eta_s = done > 0 && total >= done ? in_rung / static_cast<double>(done) * static_cast<double>(total - done) : -1;
  std::lock_guard lock(mu);
  options.on_progress(p);
}

}  // namespace internal

namespace {

using internal::Member;

std::string Hostname() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "";
  return buf;
}

// Counters of every member of a rung, at once, by member ID (members that do
// not answer are left out), and the files they were saved in.
struct Samples {
  std::map<std::string, model::CounterSample> by_member;
  std::vector<std::string> files;
};
Samples SampleAll(internal::Run& run, const std::vector<std::string>& ids, const std::string& rung,
                  const std::string& phase) {
  Samples out;
  std::mutex mu;
  internal::ParallelFor(ids.size(), static_cast<size_t>(run.options.fan_out), [&](size_t i) {
    Member* m = run.Find(ids[i]);
    if (!m || !m->alive) return;
    auto j = run.Client(*m).Counters(run.options.info_timeout);
    if (!j.ok()) {
      if (j.status().code() != StatusCode::kUnimplemented) run.CheckAlive(*m, j.status(), rung);
      return;
    }
    model::CounterSample s;
    try {
      s = j->get<model::CounterSample>();
    } catch (const nlohmann::json::exception& e) {
      LOG_WARN("ladder", "member {}: counters are malformed: {}", m->m.id, e.what());
      return;
    }
    s.member = m->m.id;
    s.rung = rung;
    s.phase = phase;
    const std::string file = bundle::CounterFile(m->m.id, rung, phase);
    bool saved = run.WriteJson(file, s);
    std::lock_guard lock(mu);
    if (saved) out.files.push_back(file);
    out.by_member[m->m.id] = std::move(s);
  });
  return out;
}

std::vector<model::CounterDelta> Deltas(const std::map<std::string, model::CounterSample>& before,
                                        const std::map<std::string, model::CounterSample>& after) {
  std::vector<model::CounterDelta> out;
  for (const auto& [member, b] : before) {
    auto a = after.find(member);
    if (a == after.end()) continue;
    for (const auto& [object, counters] : b.values) {
      auto ao = a->second.values.find(object);
      if (ao == a->second.values.end()) continue;
      for (const auto& [name, v0] : counters) {
        auto av = ao->second.find(name);
        if (av == ao->second.end() || av->second == v0) continue;
        model::CounterDelta d;
        d.member = member;
        d.object = object;
        d.counter = name;
        d.before = v0;
        d.after = av->second;
        d.delta = static_cast<int64_t>(av->second - v0);
        d.interval_s = a->second.time_unix - b.time_unix;
        out.push_back(std::move(d));
      }
    }
  }
  return out;
}

std::vector<std::string> AliveIds(const std::vector<std::unique_ptr<Member>>& members,
                                  const std::vector<std::string>& ids) {
  std::vector<std::string> out;
  for (const auto& id : ids) {
    for (const auto& m : members) {
      if (m->m.id == id && m->alive) out.push_back(id);
    }
  }
  return out;
}

// The place --topology gives a member: by its hostname, then its control
// address, then any data address (a fabric file may name members either way).
const MemberPlace* PlaceOf(const std::map<std::string, MemberPlace>& places, const Member& m) {
  if (places.empty()) return nullptr;
  std::vector<std::string> keys = {m.m.name, m.endpoint.host};
  keys.insert(keys.end(), m.m.data_addresses.begin(), m.m.data_addresses.end());
  for (const auto& key : keys) {
    auto it = places.find(key);
    if (it != places.end()) return &it->second;
  }
  return nullptr;
}

}  // namespace

Result<model::LadderManifest> RunLadder(const std::vector<control::HostPort>& agents, const LadderOptions& o,
                                        bundle::Writer* writer) {
  if (agents.empty()) return InvalidArgumentError("the ladder needs at least one agent");
  if (o.rungs.empty()) return InvalidArgumentError("no rung selected (--rungs)");
  model::LadderManifest manifest;
  manifest.fabcheck_version = o.fabcheck_version;
  manifest.start_unix = internal::NowUnix();
  manifest.created_at = UtcIso8601(static_cast<std::time_t>(manifest.start_unix));
  manifest.coordinator = Hostname();
  manifest.parameters = o.parameters.is_null() ? nlohmann::json::object() : o.parameters;

  std::vector<std::unique_ptr<Member>> members;
  for (const auto& e : agents) {
    members.push_back(std::make_unique<Member>());
    members.back()->endpoint = e;
    members.back()->m.control = e.ToString();
  }
  internal::Run run(o, writer, members);

  // Who is there, all at once.
  internal::ParallelFor(members.size(), static_cast<size_t>(o.fan_out), [&](size_t i) {
    Member& m = *members[i];
    auto info = run.Client(m).Info();
    if (info.ok()) {
      m.info = *info;
      m.alive = true;
    } else {
      m.m.error = info.status().message();
    }
  });
  // IDs: the hostname, or name@address when two members report the same one.
  std::map<std::string, int> names;
  for (auto& m : members) {
    m->m.name = m->info && !m->info->name.empty() ? m->info->name : m->endpoint.host;
    ++names[m->m.name];
  }
  std::set<std::string> used;
  for (auto& m : members) {
    std::string id = names[m->m.name] > 1 ? m->m.name + "@" + m->endpoint.ToString() : m->m.name;
    while (!used.insert(id).second) id += "'";
    m->m.id = id;
    if (m->info) {
      for (const auto& r : m->info->rails) m->m.data_addresses.push_back(r.address);
    }
    if (m->m.data_addresses.empty()) m->m.data_addresses.push_back(m->endpoint.host);
    if (const MemberPlace* place = PlaceOf(o.places, *m)) {
      m->m.rack = place->rack;
      m->m.leaf = place->leaf;
      m->m.rail_leaves = place->rail_leaves;
    }
    if (!m->alive) {
      m->m.reachable = false;
      m->m.dropped_at = o.rungs.front();
      m->m.dropped_reason = "did not answer at the start: " + m->m.error;
      LOG_WARN("ladder", "member {} does not answer: {}", m->m.id, m->m.error);
    }
  }
  std::vector<std::string> climbing;
  for (const auto& m : members) {
    if (m->alive) climbing.push_back(m->m.id);
  }
  if (climbing.empty()) {
    std::vector<std::string> why;
    for (const auto& m : members) why.push_back(m->m.error);
    return UnavailableError(fmt::format("none of the {} agents answers: {}", members.size(), Join(why, "; ")));
  }

  std::set<std::string> selected(o.rungs.begin(), o.rungs.end());
  run.rungs_to_run = static_cast<int>(o.rungs.size());
  std::string stopped_by;
  auto save_manifest = [&] {
    manifest.members.clear();
    for (const auto& m : members) {
      std::lock_guard lock(m->mu);
      manifest.members.push_back(m->m);
    }
    if (writer) (void)writer->Checkpoint(manifest);
  };

  for (const auto& id : AllRungs()) {
    model::RungResult r;
    r.id = id;
    r.title = RungTitle(id);
    if (!selected.count(id)) {
      r.reason = "not asked for (--rungs)";
      manifest.rungs.push_back(std::move(r));
      continue;
    }
    if (run.Stopped()) {
      manifest.interrupted = true;
      r.reason = "interrupted (Ctrl-C) before this rung";
      manifest.rungs.push_back(std::move(r));
      continue;
    }
    if (!stopped_by.empty()) {
      r.reason = stopped_by;
      manifest.rungs.push_back(std::move(r));
      continue;
    }
    ++run.rung_number;
    climbing = AliveIds(members, climbing);
    if (climbing.empty()) {
      r.reason = "no member left to run it";
      stopped_by = r.reason;
      manifest.rungs.push_back(std::move(r));
      continue;
    }
    if (o.on_rung_start) o.on_rung_start(id, climbing);
    r.start_unix = internal::NowUnix();
    r.members = climbing;
    run.Progress(id, static_cast<int>(climbing.size()), 0, 0, internal::Clock::now());
    auto before = SampleAll(run, climbing, id, "before");
    if (id == kRungNode) internal::RunNodeRung(run, climbing, r);
    else if (id == kRungCluster) internal::RunClusterRung(run, climbing, r);
    else if (id == kRungPath) internal::RunPathRung(run, climbing, r);
    else if (id == kRungPerf) internal::RunPerfRung(run, climbing, r);
    else if (id == kRungColl) internal::RunCollRung(run, climbing, r);
    auto alive = AliveIds(members, climbing);
    auto after = SampleAll(run, alive, id, "after");
    r.counter_deltas = Deltas(before.by_member, after.by_member);
    if (id == kRungPerf) internal::CorrelatePairRung(run, r);
    // Baseline groups after the rung's verdict (they run on who passed it),
    // outside its counter window: the deltas stay the rung's own.
    if (id == kRungPerf) internal::RunPerfBaselines(run, r);
    if (id == kRungColl) internal::RunCollBaselines(run, r);
    std::sort(before.files.begin(), before.files.end());
    std::sort(after.files.begin(), after.files.end());
    r.evidence_files.insert(r.evidence_files.end(), before.files.begin(), before.files.end());
    r.evidence_files.insert(r.evidence_files.end(), after.files.begin(), after.files.end());
    r.end_unix = internal::NowUnix();

    // Members that died during the rung leave here, whatever the rung said.
    std::vector<std::string> passed;
    for (const auto& p : r.members_passed) {
      if (std::find(alive.begin(), alive.end(), p) != alive.end()) passed.push_back(p);
    }
    r.members_passed = passed;
    for (const auto& m : climbing) {
      if (std::find(alive.begin(), alive.end(), m) == alive.end()) {
        Member* dead = run.Find(m);
        model::Finding f;
        f.id = "ladder.member.unreachable";
        f.severity = model::Severity::kFail;
        f.group = id;
        f.object = m;
        f.member = m;
        f.message = "stopped answering during " + id + "; the ladder went on without it";
        f.evidence = {dead ? dead->m.error : "no answer"};
        f.remedy = "check that the node is up and `fabcheck agent` runs there (journalctl -u fabcheck-agent, kubectl "
                   "logs); rerun the ladder once it is back";
        r.findings.push_back(std::move(f));
      }
    }
    if (run.Stopped() && r.verdict != model::RungVerdict::kNotRun) {
      manifest.interrupted = true;
      r.reason = "interrupted (Ctrl-C) during the rung; " + r.reason;
    }
    StopDecision d = DecideStop(r, alive, o.keep_going);
    for (const auto& gone : d.dropped) {
      Member* m = run.Find(gone);
      if (!m) continue;
      std::lock_guard lock(m->mu);
      m->m.dropped_at = id;
      m->m.dropped_reason = "failed " + id;
      for (const auto& f : r.findings) {
        if (f.severity == model::Severity::kFail && StartsWith(f.object, gone)) {
          m->m.dropped_reason = "failed " + id + ": " + f.message;
          break;
        }
      }
    }
    if (d.stop) {
      stopped_by = d.next_members.empty() && r.verdict != model::RungVerdict::kFail
                       ? "no member passed " + id
                       : "stopped: " + id + " failed" + (o.keep_going ? " on every member" : " (--keep-going goes on "
                                                                                                   "with the members that passed)");
    }
    climbing = d.next_members;
    manifest.rungs.push_back(std::move(r));
    save_manifest();
  }

  manifest.end_unix = internal::NowUnix();
  save_manifest();
  std::vector<std::string> dead;
  for (const auto& m : members) {
    if (!m->m.reachable) dead.push_back(m->m.id);
  }
  manifest.verdict = ComputeVerdict(manifest.rungs, o.rungs, manifest.interrupted);
  if (!dead.empty()) {
    const std::string note = fmt::format("member(s) not reachable: {}", Join(dead, ", "));
    if (manifest.verdict.go) {
      manifest.verdict.go = false;
      manifest.verdict.exit_code = 2;
      manifest.verdict.summary = "NO-GO: " + note;
    } else {
      manifest.verdict.summary += "; " + note;
    }
  }
  for (const auto& w : run.warnings) LOG_WARN("ladder", "evidence not saved: {}", w);
  if (writer) {
    Status s = writer->Finish(manifest);
    if (!s.ok()) return s.WithContext("cannot finish the bundle " + writer->out());
  }
  return manifest;
}

}  // namespace fabcheck::ladder
