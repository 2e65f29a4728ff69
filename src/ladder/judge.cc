#include "ladder/judge.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "base/units.h"

namespace fabcheck::ladder {
namespace {

const model::RdmaPort* FirstPort(const model::RdmaDevice& dev, const std::string& netdev) {
  for (const auto& p : dev.ports) {
    if (!netdev.empty() && p.netdev == netdev) return &p;
  }
  for (const auto& p : dev.ports) {
    if (p.state == "ACTIVE") return &p;
  }
  return dev.ports.empty() ? nullptr : &dev.ports.front();
}

}  // namespace

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

RailCapacity CapacityOf(const model::Inventory& inv, const std::vector<control::RailInfo>& rails, int rail) {
  RailCapacity c;
  const model::RdmaDevice* dev = nullptr;
  std::string netdev;
  if (rail >= 0 && static_cast<size_t>(rail) < rails.size() && !rails[rail].interface.empty()) {
    netdev = rails[rail].interface;
    const auto* nd = inv.FindNetDevice(netdev);
    if (nd && !nd->rdma_devices.empty()) dev = inv.FindRdmaDevice(nd->rdma_devices.front());
    if (!dev) {
      for (const auto& d : inv.rdma_devices) {
        for (const auto& p : d.ports) {
          if (p.netdev == netdev) dev = &d;
        }
      }
    }
  } else if (rail >= 0 && static_cast<size_t>(rail) < inv.rdma_devices.size()) {
    dev = &inv.rdma_devices[rail];
  }
  if (!dev) return c;
  c.device = dev->name;
  if (const auto* port = FirstPort(*dev, netdev); port && port->rate_gbps) c.port_gbps = *port->rate_gbps;
  const model::Nic* nic = inv.FindNic(dev->name);
  if (!nic && !dev->pci_bdf.empty()) nic = inv.FindNic(dev->pci_bdf);
  if (nic && nic->pci.link.current_speed_gts && nic->pci.link.current_width) {
    c.pcie_gbps = PcieLinkGbps(*nic->pci.link.current_speed_gts, *nic->pci.link.current_width);
    c.pcie_text = fmt::format("PCIe Gen{} x{}", PcieGeneration(*nic->pci.link.current_speed_gts),
                              *nic->pci.link.current_width);
  }
  return c;
}

Expectation VerbsExpectation(const RailCapacity& a, const RailCapacity& b, double pass_fraction) {
  Expectation e;
  std::optional<double> best;
  std::string limit;
  auto consider = [&](const std::optional<double>& v, const std::string& what) {
    if (v && (!best || *v < *best)) {
      best = v;
      limit = what;
    }
  };
  for (const RailCapacity* side : {&a, &b}) {
    if (side->port_gbps) consider(side->port_gbps, fmt::format("{} port {:g} Gb/s", side->device, *side->port_gbps));
    if (side->pcie_gbps) {
      consider(side->pcie_gbps, fmt::format("{} {} {:.0f} Gb/s", side->device, side->pcie_text, *side->pcie_gbps));
    }
  }
  if (!best) return e;
  e.gbps = *best * pass_fraction;
  e.basis = fmt::format("{} x {:g}%", limit, pass_fraction * 100);
  return e;
}

void JudgePerfPair(model::PairTest& pair, const std::string& transport_asked, std::optional<double> tcp_best) {
  if (!pair.bw_gbps) {
    pair.verdict = model::RungVerdict::kFail;
    if (pair.reason.empty()) pair.reason = "no bandwidth figure";
    return;
  }
  if (!pair.rdma) {
    const std::string used = pair.transport.empty() ? "unknown transport" : pair.transport;
    if (transport_asked != "tcp") {
      pair.verdict = model::RungVerdict::kFail;
      pair.reason = fmt::format("RDMA not used: {}{}", used, pair.reason.empty() ? "" : " (" + pair.reason + ")");
      return;
    }
    if (tcp_best && *tcp_best > 0) {
      pair.expected_gbps = *tcp_best * kTcpBestFraction;
      pair.expected_basis = fmt::format("TCP: {:g}% of the rung's best pair, {:.2f} Gb/s (no line-rate expectation "
                                        "for TCP)",
                                        kTcpBestFraction * 100, *tcp_best);
    }
    if (pair.expected_gbps && *pair.bw_gbps < *pair.expected_gbps) {
      pair.verdict = model::RungVerdict::kFail;
      pair.reason = fmt::format("{:.2f} Gb/s over TCP, below {:.2f} Gb/s ({})", *pair.bw_gbps, *pair.expected_gbps,
                                pair.expected_basis);
      return;
    }
    pair.verdict = model::RungVerdict::kWarn;
    pair.reason = fmt::format("RDMA not used: {} (asked with --transport tcp); {:.2f} Gb/s", used, *pair.bw_gbps);
    return;
  }
  if (pair.expected_gbps && *pair.bw_gbps < *pair.expected_gbps) {
    pair.verdict = model::RungVerdict::kFail;
    pair.reason = fmt::format("{:.1f} Gb/s over verbs, below the expected {:.1f} Gb/s ({})", *pair.bw_gbps,
                              *pair.expected_gbps, pair.expected_basis);
    return;
  }
  pair.verdict = model::RungVerdict::kPass;
  pair.reason = pair.expected_gbps ? fmt::format("{:.1f} Gb/s over verbs, expected at least {:.1f} Gb/s",
                                                 *pair.bw_gbps, *pair.expected_gbps)
                                   : fmt::format("{:.1f} Gb/s over verbs (no port rate or PCIe link known to compare)",
                                                 *pair.bw_gbps);
}

void JudgePathPair(model::PairTest& pair) {
  if (!pair.path_mtu) {
    pair.verdict = model::RungVerdict::kFail;
    pair.reason = "unreachable on the data plane" + (pair.reason.empty() ? std::string() : ": " + pair.reason);
    return;
  }
  if (pair.local_mtu > 0 && *pair.path_mtu < pair.local_mtu) {
    pair.verdict = model::RungVerdict::kFail;
    pair.reason = fmt::format("MTU hole: the sender's kernel believes {}, only {}-byte packets get through (large "
                              "messages stall while small ones work)",
                              pair.local_mtu, *pair.path_mtu);
    return;
  }
  pair.verdict = model::RungVerdict::kPass;
  pair.reason = fmt::format("path MTU {}", *pair.path_mtu);
}

std::vector<std::string> BlameMembers(const std::vector<model::PairTest>& pairs) {
  std::map<std::string, std::set<std::string>> peers, failing;
  for (const auto& p : pairs) {
    if (p.verdict == model::RungVerdict::kNotRun) continue;
    peers[p.a].insert(p.b);
    peers[p.b].insert(p.a);
    if (p.verdict == model::RungVerdict::kFail) {
      failing[p.a].insert(p.b);
      failing[p.b].insert(p.a);
    }
  }
  // Strong evidence first: failing pairs with two or more distinct peers,
  // more than half of the member's peers.
  std::set<std::string> blamed;
  for (const auto& [m, bad] : failing) {
    if (bad.size() >= 2 && bad.size() * 2 > peers[m].size()) blamed.insert(m);
  }
  // A failing pair that no strongly blamed end explains points at both ends
  // (a bad link, or two members with one tested peer each), unless its own
  // counters name one end (bundle/correlate.h: that port counted link errors).
  std::set<std::string> both;
  for (const auto& p : pairs) {
    if (p.verdict == model::RungVerdict::kFail && !blamed.count(p.a) && !blamed.count(p.b) && p.suspect) {
      blamed.insert(p.suspect->member);
      continue;
    }
    if (p.verdict == model::RungVerdict::kFail && !blamed.count(p.a) && !blamed.count(p.b)) {
      both.insert(p.a);
      both.insert(p.b);
    }
  }
  blamed.insert(both.begin(), both.end());
  return {blamed.begin(), blamed.end()};
}

model::RungVerdict PairsVerdict(const std::vector<model::PairTest>& pairs) {
  bool any = false, warn = false;
  for (const auto& p : pairs) {
    if (p.verdict == model::RungVerdict::kNotRun) continue;
    any = true;
    if (p.verdict == model::RungVerdict::kFail) return model::RungVerdict::kFail;
    if (p.verdict == model::RungVerdict::kWarn) warn = true;
  }
  if (!any) return model::RungVerdict::kNotRun;
  return warn ? model::RungVerdict::kWarn : model::RungVerdict::kPass;
}

}  // namespace fabcheck::ladder
