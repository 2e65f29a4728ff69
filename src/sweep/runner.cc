#include "sweep/runner.h"

#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <map>

#include "base/strings.h"
#include "sweep/agent_transport.h"
#include "sweep/planner.h"

namespace fabcheck::sweep {
namespace {

double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

std::string HostOf(const std::string& host_port) {
  size_t colon = host_port.rfind(':');
  return colon == std::string::npos ? host_port : host_port.substr(0, colon);
}

model::SweepVerdict ElementVerdict(const Localization& loc, const fabric::FabricIndex& fabric,
                                   const std::vector<model::SweepMember>& members,
                                   size_t tests) {
  model::SweepVerdict v;
  v.elements = loc.findings;
  v.findings = ElementFindings(loc.findings, members);
  // What the persistence rule kept from naming: worth a look, not yet a fault.
  for (const Suspect& s : loc.suspects) {
    model::Finding f;
    f.id = "sweep.element.suspect";
    f.severity = model::Severity::kInfo;
    f.group = "sweep";
    f.object = SuspectName(s, fabric, members);
    f.message = "slow or failing in too few measurements to be named (the persistence rule); re-run with "
                "--strategy adaptive or a larger --max-rounds to settle it";
    if (!s.why.empty()) f.evidence.push_back(s.why);
    v.findings.push_back(std::move(f));
  }
  int unreachable = 0;
  for (const auto& m : members) {
    if (m.reachable) continue;
    ++unreachable;
    model::Finding f;
    f.id = "sweep.node.unreachable";
    f.severity = model::Severity::kFail;
    f.group = "sweep";
    f.object = m.display.empty() ? m.name : m.display;
    f.message = "the agent did not answer; its remaining pairs were skipped";
    if (!m.error.empty()) f.evidence.push_back(m.error);
    f.remedy = "check that fabcheck agent runs on it and its control port is reachable";
    v.findings.push_back(std::move(f));
  }
  for (const auto& f : v.findings) v.severity = std::max(v.severity, f.severity);
  std::map<std::string, int> kinds;
  for (const auto& e : loc.findings) ++kinds[e.kind];
  std::vector<std::string> parts;
  for (const auto& [k, c] : kinds) parts.push_back(fmt::format("{} {}", c, k));
  if (unreachable) parts.push_back(fmt::format("{} unreachable", unreachable));
  v.summary = parts.empty() ? fmt::format("no faulty element in {} tests", tests)
                            : fmt::format("{} ({} tests)", Join(parts, ", "), tests);
  if (!loc.suspects.empty()) v.summary += fmt::format("; {} suspects left unconfirmed", loc.suspects.size());
  return v;
}

}  // namespace

Result<fabric::Fabric> MatchFabric(const fabric::Fabric& f, const std::vector<model::SweepMember>& members, int rails) {
  if (f.rails != 1 && f.rails < rails) {
    return InvalidArgumentError(fmt::format("the fabric lists {} rails, the sweep uses {}: give one leaf per rail",
                                            f.rails, rails));
  }
  fabric::FabricIndex index(f);
  fabric::Fabric out;
  out.rails = rails;
  out.source = f.source;
  std::vector<std::string> missing;
  for (const auto& m : members) {
    int k = -1;
    for (const std::string& key : {m.display, m.name, HostOf(m.control), m.control}) {
      if (k < 0 && !key.empty()) k = index.Find(key);
    }
    for (size_t r = 0; k < 0 && r < m.data_addresses.size(); ++r) k = index.Find(m.data_addresses[r]);
    if (k < 0) {
      missing.push_back(m.display.empty() ? m.name : m.display);
      continue;
    }
    fabric::Member fm = f.members[k];
    fm.name = m.display.empty() ? m.name : m.display;
    // One leaf for every rail in the file: each rail reaches it through its own port.
    if (f.rails == 1 && rails > 1) {
      std::string leaf = fm.leaves[0];
      fm.leaves.clear();
      for (int r = 0; r < rails; ++r) fm.leaves.push_back(fmt::format("{}/r{}", leaf, r));
    }
    fm.leaves.resize(rails);
    out.members.push_back(std::move(fm));
  }
  if (!missing.empty()) {
    if (missing.size() > 5) missing.resize(5), missing.push_back("...");
    return InvalidArgumentError(fmt::format("the fabric ({}) does not place {}: add them to the file (name or "
                                            "address) or leave them out of the sweep", f.source, Join(missing, ", ")));
  }
  for (int r = 0; r < rails && !f.spines.empty(); ++r) {
    out.spines.push_back(f.spines[f.rails == 1 ? 0 : r]);
    if (!f.spine_addresses.empty()) out.spine_addresses.push_back(f.spine_addresses[f.rails == 1 ? 0 : r]);
    if (!f.cores.empty()) out.cores.push_back(f.cores[f.rails == 1 ? 0 : r]);
    if (!f.core_addresses.empty()) out.core_addresses.push_back(f.core_addresses[f.rails == 1 ? 0 : r]);
    if (f.rails == 1 && rails > 1) {
      for (auto& s : out.spines.back()) s = fmt::format("{}/r{}", s, r);
    }
  }
  return out;
}

Result<model::SweepResult> RunSweep(const std::vector<control::HostPort>& endpoints, const SweepOptions& o) {
  const int n = static_cast<int>(endpoints.size());
  if (n < 2) return InvalidArgumentError(fmt::format("a sweep needs at least 2 agents, got {}", n));
  AgentTransportOptions t;
  t.test = o.test;
  t.token = o.token;
  t.tls = o.tls;
  t.connect_timeout = o.connect_timeout;
  t.info_timeout = o.info_timeout;
  t.max_parallel_pairs = o.max_parallel_pairs;
  t.rails = o.rails;
  t.path_hops = o.path_hops;
  t.stop = o.stop;
  AgentTransport transport(endpoints, t);
  auto result = RunSweepOver(transport, o);
  if (result.ok()) {
    result->settings["test_timeout_ms"] = transport.test_timeout().count();
    result->settings["connect_timeout_ms"] = o.connect_timeout.count();
    result->settings["test"] = o.test;
    result->settings["test"].erase("peer");
    result->settings["test"].erase("peer_name");
  }
  return result;
}

Result<model::SweepResult> RunSweepOver(Transport& transport, const SweepOptions& o) {
  if (!o.keep_pairs && !o.fabric) {
    return InvalidArgumentError("a sweep without a fabric is judged from its tests: it must keep them");
  }
  model::SweepResult result;
  result.members = transport.Discover();
  const int n = static_cast<int>(result.members.size());
  int reachable = 0;
  std::vector<std::string> why;
  for (const auto& m : result.members) {
    reachable += m.reachable ? 1 : 0;
    if (!m.reachable) why.push_back(m.error);
  }
  if (reachable < 2) {
    return UnavailableError(fmt::format("only {} of {} agents answer; nothing to sweep: {}", reachable, n,
                                        Join(why, "; ")));
  }
  const int rails = transport.rails();
  result.rails = rails;
  result.pattern = std::string(PatternName(o.pattern));
  result.transport = transport.TransportName();
  std::optional<fabric::Fabric> matched;
  std::optional<fabric::FabricIndex> index;
  std::optional<Evidence> evidence;
  if (o.fabric) {
    ASSIGN_OR_RETURN(matched, MatchFabric(*o.fabric, result.members, rails));
    index.emplace(*matched);
    evidence.emplace(*index, o.localize.slow);
    result.spines = matched->spines;
    result.cores = matched->cores;
    transport.UseFabric(*index);
  }
  PlanOptions plan;
  plan.pattern = o.pattern;
  plan.peers = o.peers;
  plan.seed = o.seed;
  plan.flows = o.flows;
  plan.uplink_load = o.uplink_load;
  plan.max_rounds = o.max_rounds;
  plan.localize = o.localize;
  ASSIGN_OR_RETURN(auto planner, MakePlanner(plan, n, index ? &*index : nullptr));
  result.rounds_planned = planner->planned();
  result.settings = {{"peers", o.peers}, {"seed", o.seed}, {"flows", o.flows}, {"uplink_load", o.uplink_load},
                     {"max_rounds", o.max_rounds}};
  if (o.on_start) o.on_start(result.members);

  Progress progress;
  uint32_t flow_base = static_cast<uint32_t>(o.seed * 7919);
  std::vector<model::SweepPairResult> last_round;
  size_t tests = 0;
  double analysis_cpu = 0;
  for (int round = 1;; ++round) {
    if (o.stop && o.stop->load()) {
      result.interrupted = true;
      break;
    }
    for (int i = 0; i < n; ++i) result.members[i].reachable = transport.Reachable(i);
    auto next = planner->Next(evidence ? &*evidence : nullptr, last_round, result.members);
    if (!next) break;
    for (auto& retest : next->retests) {
      retest.round = round;
      result.retests.push_back(std::move(retest));
    }
    std::vector<TestSpec> specs;
    for (const PlannedPair& p : next->pairs) {
      for (int dir = 0; dir < 2; ++dir) {
        for (int r = 0; r < rails; ++r) {
          specs.push_back({dir == 0 ? p.a : p.b, dir == 0 ? p.b : p.a, r, p.flows, flow_base});
          flow_base += static_cast<uint32_t>(p.flows);
        }
      }
    }
    auto results = transport.RunRound(specs, round);
    last_round.clear();
    for (auto& r : results) {
      if (r) last_round.push_back(std::move(*r));
    }
    tests += last_round.size();
    if (evidence) {
      const double t0 = ThreadCpuSeconds();
      evidence->Add(last_round);
      analysis_cpu += ThreadCpuSeconds() - t0;
    }
    if (o.keep_pairs) result.pairs.insert(result.pairs.end(), last_round.begin(), last_round.end());
    result.rounds_completed = round;
    result.rounds_planned = std::max(planner->planned(), round);
    progress.round = round;
    progress.rounds = result.rounds_planned;
    progress.pairs_done += next->pairs.size();
    progress.elapsed_s = transport.ElapsedSeconds();
    progress.eta_s = progress.elapsed_s / round * std::max(0, progress.rounds - round);
    progress.unreachable = 0;
    for (int i = 0; i < n; ++i) progress.unreachable += transport.Reachable(i) ? 0 : 1;
    if (o.on_progress) o.on_progress(progress);
    if (o.on_round) o.on_round(round);
  }
  if (o.stop && o.stop->load()) result.interrupted = true;
  for (int i = 0; i < n; ++i) {
    result.members[i].reachable = transport.Reachable(i);
    if (auto* agents = dynamic_cast<AgentTransport*>(&transport); agents && !result.members[i].reachable) {
      result.members[i].error = agents->Error(i);
    }
  }
  std::sort(result.pairs.begin(), result.pairs.end(), [](const auto& x, const auto& y) {
    return std::tie(x.round, x.a, x.b, x.rail) < std::tie(y.round, y.a, y.b, y.rail);
  });
  if (o.dense_matrices) result.matrices = model::BuildMatrices(n, rails, result.pairs);
  if (evidence) {
    const double t0 = ThreadCpuSeconds();
    Localization loc = Localize(*evidence, result.members, o.localize);
    analysis_cpu += ThreadCpuSeconds() - t0;
    result.verdict = ElementVerdict(loc, *index, result.members, tests);
  } else {
    result.verdict = Analyze(result.matrices, result.members, result.pairs, o.analysis);
  }
  result.elapsed_s = transport.ElapsedSeconds();  // simulated time for the simulator
  if (o.cost) *o.cost = {analysis_cpu, tests};
  return result;
}

}  // namespace fabcheck::sweep
