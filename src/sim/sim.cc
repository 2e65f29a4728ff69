#include "sim/sim.h"

#include <fmt/format.h>
#include <sys/resource.h>
#include <time.h>

#include <map>
#include <set>

#include "sim/faults.h"
#include "sweep/localize.h"

namespace fabcheck::sim {
namespace {

double ProcessCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// With one rail a node has one NIC: no pairwise test tells "n0022" from
// "n0022/r0", so a finding on either names the other's fault too.
std::string Canonical(const std::string& element, int rails) {
  if (rails == 1 && element.size() > 3 && element.compare(element.size() - 3, 3, "/r0") == 0) {
    return element.substr(0, element.size() - 3);
  }
  return element;
}

nlohmann::json Score(std::vector<Fault> faults, std::vector<model::SweepElementFinding> findings, int rails) {
  for (Fault& f : faults) {
    if (f.kind == FaultKind::kNicSlow) f.element = Canonical(f.element, rails);
  }
  for (auto& f : findings) {
    if (f.kind == "node" || f.kind == "nic") {
      f.element = Canonical(f.element, rails);
      if (rails == 1) f.kind = "node";
    }
  }
  if (rails == 1) {
    for (Fault& f : faults) {
      if (f.kind == FaultKind::kNicSlow) f.kind = FaultKind::kNodeSlow;
    }
  }
  std::map<std::string, Expected> planted;  // element -> expected
  std::set<std::string> decoys;
  for (const Fault& f : faults) {
    Expected e = ExpectedFinding(f);
    if (e.kind.empty()) {
      decoys.insert(f.element);
    } else {
      planted[e.element] = e;
    }
  }
  std::set<std::string> named, named_kind;
  nlohmann::json false_positives = nlohmann::json::array();
  int true_findings = 0;
  for (const auto& f : findings) {
    auto it = planted.find(f.element);
    if (it == planted.end()) {
      false_positives.push_back({{"kind", f.kind}, {"element", f.element}, {"confidence", f.confidence},
                                 {"decoy", decoys.count(f.element) > 0}, {"why", f.why}});
      continue;
    }
    ++true_findings;
    named.insert(f.element);
    // A one-way fault is named with its kind only in its direction.
    if (f.kind == it->second.kind && (it->second.direction.empty() || f.direction == it->second.direction)) {
      named_kind.insert(f.element);
    }
  }
  nlohmann::json missed = nlohmann::json::array();
  for (const Fault& f : faults) {
    Expected e = ExpectedFinding(f);
    if (!e.kind.empty() && !named.count(e.element)) missed.push_back(ToJson({f})[0]);
  }
  const double n = static_cast<double>(planted.size());
  return {{"planted", planted.size()},
          {"decoys", decoys.size()},
          {"findings", findings.size()},
          {"true_findings", true_findings},
          {"precision", findings.empty() ? 1.0 : true_findings / static_cast<double>(findings.size())},
          {"recall", n > 0 ? static_cast<double>(named_kind.size()) / n : 1.0},
          {"top1", n > 0 ? static_cast<double>(named.size()) / n : 1.0},
          {"missed", missed},
          {"false_positives", false_positives}};
}

}  // namespace

Result<nlohmann::json> RunSim(const SimOptions& o) {
  ASSIGN_OR_RETURN(Clos clos, Clos::Make(o.clos));
  std::vector<Fault> faults;
  if (!o.faults_json.empty()) {
    ASSIGN_OR_RETURN(faults, ParseFaults(o.faults_json, clos));
  }
  if (o.realistic_mix || o.harsh_mix) {
    auto mix = o.harsh_mix ? HarshMix(clos, o.seed) : RealisticMix(clos, o.seed);
    faults.insert(faults.end(), mix.begin(), mix.end());
  }
  const double cpu_start = ProcessCpuSeconds();
  fabric::Fabric fabric = clos.ToFabric();
  SimTransportOptions to = o.transport;
  to.seed = o.seed;
  SimTransport transport(clos, Apply(clos, faults), to);
  sweep::SweepOptions so;
  so.pattern = o.strategy;
  so.seed = o.seed;
  so.rails = true;
  so.fabric = &fabric;
  // Enough flows to cover the spines of a pod and the cores (the planner's
  // default assumes every leaf sees every spine of the rail).
  so.flows = o.flows == 0 && clos.three_tier() ? sweep::FlowsToCoverSpines(std::max(o.clos.spines, o.clos.cores))
                                               : o.flows;
  so.uplink_load = o.uplink_load;
  so.max_rounds = o.max_rounds;
  so.dense_matrices = false;
  so.keep_pairs = false;  // judged from running sums: memory grows with members x rails, not tests
  sweep::SweepCost cost;
  so.cost = &cost;
  so.on_progress = o.on_progress;
  ASSIGN_OR_RETURN(model::SweepResult result, sweep::RunSweepOver(transport, so));
  const double run_cpu = ProcessCpuSeconds() - cpu_start;
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);

  nlohmann::json j;
  j["schema"] = kSimSchema;
  j["fabric"] = {{"nodes", o.clos.nodes}, {"rails", o.clos.rails}, {"nodes_per_leaf", o.clos.nodes_per_leaf},
                 {"leaves", clos.leaves()}, {"spines", o.clos.spines}, {"oversubscription", o.clos.oversubscription},
                 {"nic_gbps", o.clos.nic_gbps}, {"uplink_gbps", clos.uplink_gbps()}, {"mtu", o.clos.mtu}};
  if (clos.three_tier()) {
    j["fabric"]["pods"] = o.clos.pods;
    j["fabric"]["cores"] = o.clos.cores;
    j["fabric"]["core_link_gbps"] = clos.core_link_gbps();
  }
  j["strategy"] = sweep::PatternName(o.strategy);
  j["seed"] = o.seed;
  j["noise"] = {{"cv", o.transport.noise_cv}, {"tail_probability", o.transport.tail_probability}};
  j["rounds"] = result.rounds_completed;
  j["tests"] = cost.tests;
  j["round_seconds"] = o.transport.round_seconds;
  j["simulated_wall_s"] = result.elapsed_s;
  j["analysis_cpu_s"] = cost.analysis_cpu_s;
  j["run_cpu_s"] = run_cpu;
  j["max_rss_mib"] = static_cast<double>(usage.ru_maxrss) / 1024.0;
  j["findings"] = nlohmann::json::array();
  for (const auto& f : result.verdict.elements) {
    j["findings"].push_back({{"kind", f.kind}, {"element", f.element}, {"confidence", f.confidence},
                             {"severity", model::SeverityName(f.severity)}, {"ratio", f.ratio}, {"why", f.why}});
    if (!f.direction.empty()) j["findings"].back()["direction"] = f.direction;
  }
  j["unconfirmed_suspects"] = nlohmann::json::array();
  for (const auto& f : result.verdict.findings) {
    if (f.id == "sweep.element.suspect") j["unconfirmed_suspects"].push_back(f.object);
  }
  j["planted"] = ToJson(faults);
  if (!faults.empty()) j["score"] = Score(faults, result.verdict.elements, o.clos.rails);
  return j;
}

std::string RenderSimText(const nlohmann::json& r) {
  const auto& f = r["fabric"];
  const std::string tiers = f.contains("pods") ? fmt::format("{} pods of {} spines, {} cores per rail",
                                                              f["pods"].get<int>(), f["spines"].get<int>(),
                                                              f["cores"].get<int>())
                                              : fmt::format("{} spines per rail", f["spines"].get<int>());
  std::string out = fmt::format("fabcheck sim: {} members x {} rails, {} per leaf ({} leaves), {}; strategy {}\n",
                                f["nodes"].get<int>(), f["rails"].get<int>(), f["nodes_per_leaf"].get<int>(),
                                f["leaves"].get<int>(), tiers, r["strategy"].get<std::string>());
  out += fmt::format("{} rounds, {} tests, simulated wall time {:.0f} s at {:.0f} s per round; analysis {:.3f} s CPU\n",
                     r["rounds"].get<int>(), r["tests"].get<size_t>(), r["simulated_wall_s"].get<double>(),
                     r["round_seconds"].get<double>(), r["analysis_cpu_s"].get<double>());
  out += fmt::format("\nfindings ({}):\n", r["findings"].size());
  for (const auto& x : r["findings"]) {
    out += fmt::format("  {:6} {:34} {:4.0f}%  {}\n", x["kind"].get<std::string>(), x["element"].get<std::string>(),
                       x["confidence"].get<double>() * 100, x["why"].get<std::string>());
  }
  if (r.contains("score")) {
    const auto& s = r["score"];
    out += fmt::format("\nplanted {} faults and {} decoys: precision {:.1f}%, recall {:.1f}%, top-1 {:.1f}%\n",
                       s["planted"].get<int>(), s["decoys"].get<int>(), s["precision"].get<double>() * 100,
                       s["recall"].get<double>() * 100, s["top1"].get<double>() * 100);
    for (const auto& m : s["missed"]) {
      out += fmt::format("  missed: {} {}\n", m["kind"].get<std::string>(), m["element"].get<std::string>());
    }
    for (const auto& m : s["false_positives"]) {
      out += fmt::format("  wrong:  {} {}{}\n", m["kind"].get<std::string>(), m["element"].get<std::string>(),
                         m["decoy"].get<bool>() ? " (a noise decoy)" : "");
    }
  }
  return out;
}

}  // namespace fabcheck::sim
