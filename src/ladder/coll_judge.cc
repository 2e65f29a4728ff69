#include "fabcheck/model/json_fields.h"
#include "ladder/coll_judge.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "base/strings.h"

namespace fabcheck::ladder {

std::vector<CollRankBlock> PlanCollRanks(const std::vector<std::pair<std::string, int>>& gpus_per_member) {
  std::vector<CollRankBlock> plan;
  int next = 0;
  for (const auto& [member, gpus] : gpus_per_member) {
    if (gpus <= 0) continue;
    plan.push_back({member, next, gpus});
    next += gpus;
  }
  return plan;
}

int WorldOf(const std::vector<CollRankBlock>& plan) {
  return plan.empty() ? 0 : plan.back().first_rank + plan.back().nprocs;
}

CollExpectationLine NicExpectation(const std::vector<const model::Inventory*>& members, double fraction) {
  CollExpectationLine line;
  double smallest = std::numeric_limits<double>::infinity();
  std::string smallest_text;
  for (const auto* inv : members) {
    if (inv == nullptr) return line;
    double sum = 0;
    std::map<double, int> rates;  // Gb/s -> ports
    for (const auto& dev : inv->rdma_devices) {
      for (const auto& port : dev.ports) {
        if (port.state != "ACTIVE") continue;
        if (!port.rate_gbps) return line;
        sum += *port.rate_gbps;
        ++rates[*port.rate_gbps];
      }
    }
    if (sum <= 0) return line;
    if (sum < smallest) {
      smallest = sum;
      std::vector<std::string> parts;
      for (const auto& [rate, n] : rates) parts.push_back(fmt::format("{} x {:g} Gb/s", n, rate));
      smallest_text = Join(parts, " + ");
    }
  }
  if (members.empty() || smallest == std::numeric_limits<double>::infinity()) return line;
  line.busbw_gbps = smallest / 8.0 * fraction;
  line.basis = fmt::format("{} ACTIVE RDMA port(s) per node = {:g} GB/s x {:.0f}%", smallest_text, smallest / 8.0,
                           fraction * 100);
  return line;
}

namespace {

model::CollectiveCheck Malformed(const std::string& why) {
  model::CollectiveCheck c;
  c.op = "?";
  c.verdict = model::RungVerdict::kFail;
  c.reason = "rank 0's report is malformed: " + why;
  return c;
}

}  // namespace

std::vector<model::CollectiveCheck> JudgeCollectives(const nlohmann::json& report, const CollExpectationLine& expected,
                                                     bool multi_node) {
  std::vector<model::CollectiveCheck> out;
  if (!report.is_object() || !report.contains("results") || !report["results"].is_array()) {
    return {Malformed("no \"results\" array")};
  }
  int nranks = 0;
  CollExpectationLine line = expected;
  try {
    nranks = model::json_fields::NumberOr(report, "nranks", 0);
    if (!multi_node) {
      // Inside one node NVLink or PCIe bounds busbw, not the NICs: NCCL's own
      // estimate from the topology it detected is the line.
      line = {};
      if (report.contains("expected") && report["expected"].is_object()) {
        double bw = model::json_fields::NumberOr(report["expected"], "busbw_gbps", 0.0);
        if (bw > 0) {
          line.busbw_gbps = bw * kCollPassFraction;
          line.basis = fmt::format("{} x {:.0f}%", report["expected"].value("basis", std::string("NCCL's estimate")),
                                   kCollPassFraction * 100);
        }
      }
    }
    for (const auto& op : report["results"]) {
      model::CollectiveCheck c;
      c.op = op.at("op").get<std::string>();
      c.wrong = model::json_fields::NumberOr(op, "wrong", int64_t{0});
      for (const auto& row : op.at("rows")) {
        model::SizePoint p;
        p.bytes = row.at("size").get<uint64_t>();
        p.bw_gbps = row.at("out_of_place").at("busbw_gbps").get<double>();
        c.sweep.push_back(p);
      }
      if (!c.sweep.empty()) {
        c.max_bytes = c.sweep.back().bytes;
        c.busbw_gbps = c.sweep.back().bw_gbps;
      }
      c.expected_gbps = line.busbw_gbps;
      c.expected_basis = line.basis;
      if (c.wrong > 0) {
        c.verdict = model::RungVerdict::kFail;
        c.reason = fmt::format("{} elements wrong: the data was corrupted on the way", c.wrong);
      } else if (c.sweep.empty()) {
        c.verdict = model::RungVerdict::kFail;
        c.reason = "no size was measured";
      } else if (nranks <= 1) {
        c.verdict = model::RungVerdict::kPass;
        c.reason = "one rank: NCCL runs, bus bandwidth is 0 by definition (nothing crosses a link)";
      } else if (c.max_bytes < kCollBandwidthBytes || !line.busbw_gbps) {
        c.verdict = model::RungVerdict::kPass;
        c.reason = c.max_bytes < kCollBandwidthBytes
                       ? fmt::format("busbw {:.1f} GB/s; sizes below {} MiB measure latency, not judged",
                                     c.busbw_gbps, kCollBandwidthBytes >> 20)
                       : fmt::format("busbw {:.1f} GB/s; no expectation (port rates unknown)", c.busbw_gbps);
      } else {
        double ratio = c.busbw_gbps / *line.busbw_gbps;
        c.verdict = ratio >= 1.0 ? model::RungVerdict::kPass : model::RungVerdict::kFail;
        c.reason = fmt::format("busbw {:.1f} GB/s, {:.0f}% of the expected {:.1f} GB/s", c.busbw_gbps,
                               ratio * 100, *line.busbw_gbps);
      }
      out.push_back(std::move(c));
    }
  } catch (const nlohmann::json::exception& e) {
    return {Malformed(e.what())};
  }
  if (out.empty()) return {Malformed("no collective in \"results\"")};
  return out;
}

model::NcclTransportCheck CheckNcclTransport(const std::string& member, const model::NcclLogSummary& summary,
                                             const std::vector<model::Finding>& findings, bool multi_node) {
  model::NcclTransportCheck n;
  n.member = member;
  std::set<std::string> transports;
  for (const auto& c : summary.connections) {
    std::string t = c.transport;
    if (StartsWith(t, "P2P")) t = "P2P";
    if (c.gdr) t += "/GDRDMA";
    transports.insert(t);
    n.gpudirect = n.gpudirect || c.gdr;
  }
  n.transports.assign(transports.begin(), transports.end());
  for (const auto& d : summary.net_devices) {
    if (d.kind == "IB") n.hcas.push_back(fmt::format("{}:{}", d.name, d.port));
  }
  if (!summary.bootstrap.empty()) n.interface = summary.bootstrap.begin()->second;
  for (const auto& g : summary.gdr) n.gpudirect = n.gpudirect || g.enabled;

  if (summary.nccl_lines == 0) {
    n.verdict = model::RungVerdict::kNotRun;
    n.reason = "no NCCL log from this member";
    return n;
  }
  std::vector<std::string> failing;
  for (const auto& f : findings) {
    if (f.severity == model::Severity::kFail) failing.push_back(f.id + ": " + f.message);
  }
  const bool socket = std::any_of(n.transports.begin(), n.transports.end(),
                                  [](const std::string& t) { return StartsWith(t, "NET/Socket"); });
  const bool ib = std::any_of(n.transports.begin(), n.transports.end(),
                              [](const std::string& t) { return StartsWith(t, "NET/IB"); });
  if (multi_node && socket) {
    n.verdict = model::RungVerdict::kFail;
    n.reason = "NET/Socket between nodes: NCCL fell back to TCP";
  } else if (!failing.empty()) {
    n.verdict = model::RungVerdict::kFail;
    n.reason = failing.front();
  } else if (ib && !n.gpudirect) {
    n.verdict = model::RungVerdict::kWarn;
    n.reason = "NET/IB without GPUDirect RDMA: data staged through host memory";
  } else {
    n.verdict = model::RungVerdict::kPass;
    n.reason = n.transports.empty() ? "NCCL initialised; no connection line logged" : Join(n.transports, ", ");
  }
  return n;
}

}  // namespace fabcheck::ladder
