// Performance symptoms from perf / sweep / coll JSON and ladder pairs:
// perf.tcp-plateau, perf.large-messages, perf.half-rate.
#include <fmt/format.h>

#include <algorithm>

#include "base/strings.h"
#include "diagnose/rule.h"

namespace fabcheck::diagnose {
namespace {

// " --device mlx5_0" for a verbs command: only an RDMA device the pair used
// over verbs. A TCP pair's device is a netdev (lo, eth0): suggesting it for a
// verbs run would send the user to a device that cannot do RDMA.
std::string RdmaDeviceFlag(const PairEvidence& p) {
  if (p.device_a.empty() || p.transport != "verbs") return "";
  return " --device " + p.device_a;
}

void RunTcp(const Evidence& ev, std::vector<model::Diagnosis>* out);
void RunLarge(const Evidence& ev, std::vector<model::Diagnosis>* out);
void RunHalf(const Evidence& ev, std::vector<model::Diagnosis>* out);
}  // namespace

extern const Rule kPerfTcpPlateau = {
    "perf.tcp-plateau", "perf",
    "Bandwidth plateaus at 10-25 Gb/s on a 100-400 Gb/s port (or a collective's busbw at 1-3 GB/s across nodes)",
    "That is what kernel TCP over the default (pod) network reaches: the traffic is not using RDMA at all "
    "(the seeds: \"if you see 10 to 25 Gbps, the traffic is falling back to TCP\").",
    "Make the test and the job use the RDMA device: NCCL_IB_HCA / NCCL_SOCKET_IFNAME on the RDMA network, the RDMA "
    "devices in the pod, NCCL_IB_DISABLE unset; fabcheck perf --transport verbs proves the path.",
    &RunTcp};

extern const Rule kPerfLargeMessages = {
    "perf.large-messages", "perf",
    "Small messages work but large ones fail or time out, or large frames do not cross the path (path MTU below "
    "the interface MTU)",
    "An MTU mismatch drops only the packets larger than the smallest MTU on the path: handshakes and small "
    "messages pass, bulk transfers stall.",
    "Use one MTU end to end (netdevs, switch ports, RoCE MTU), or lower the interface MTU to what the path carries.",
    &RunLarge};

extern const Rule kPerfHalfRate = {
    "perf.half-rate", "perf",
    "Bandwidth is about half the line rate (40-60%)",
    "Half the line rate has few usual causes: a PCIe link trained at x8 (or one generation lower), buffers on the "
    "wrong NUMA node, or one of two ports / rails carrying the traffic.",
    "Check the NIC's PCIe link (fabcheck doctor --only L1: pcie.downgraded), bind to the NIC's NUMA node (perf "
    "--numa auto), and that both ports or rails are used.",
    &RunHalf};

namespace {

double LineOf(const Evidence& ev, const PairEvidence& p) { return p.line_gbps > 0 ? p.line_gbps : ev.line_gbps; }

std::string PairName(const Evidence& ev, const PairEvidence& p) {
  return fmt::format("{} -> {}", ev.Name(p.a), ev.Name(p.b));
}

void RunTcp(const Evidence& ev, std::vector<model::Diagnosis>* out) {
  for (const auto& p : ev.pairs) {
    double line = LineOf(ev, p);
    if (p.bw_gbps < 8 || p.bw_gbps > 26) continue;
    bool tcp = p.transport == "tcp";
    if (line > 0 && line < 100) continue;  // a 25G port at 20 Gb/s is fine
    if (line <= 0 && !tcp) continue;
    auto d = Make(kPerfTcpPlateau, tcp || line >= 100 ? model::Severity::kFail : model::Severity::kWarn,
                  tcp ? model::Confidence::kHigh : model::Confidence::kMedium, PairName(ev, p),
                  fmt::format("{:.1f} Gb/s between {}{}: the 10-25 Gb/s plateau of TCP", p.bw_gbps, PairName(ev, p),
                              line > 0 ? fmt::format(" on a {:.0f} Gb/s port", line) : ""));
    d.evidence.push_back(fmt::format("{}: {:.1f} Gb/s at {} B over {}", p.source, p.bw_gbps, p.bw_bytes,
                                     p.transport.empty() ? "an unknown transport" : p.transport));
    if (line > 0) d.evidence.push_back(fmt::format("line rate {:.0f} Gb/s{}", line, p.line_basis.empty() ? "" : " (" + p.line_basis + ")"));
    if (tcp) {
      d.causes.push_back("the test itself ran over TCP (transport tcp): it measures the kernel path, not RDMA");
    }
    d.causes.push_back("the traffic took the default (pod / management) network instead of the RDMA interface");
    d.causes.push_back("NCCL fell back to NET/Socket (NCCL_IB_DISABLE, no RDMA device in the container)");
    d.fix = kPerfTcpPlateau.fix;
    d.next = fmt::format("rung L3 over verbs between {} and {}: on {}: fabcheck perf serve; on {}: fabcheck perf "
                         "run {} --transport verbs{}",
                         ev.Name(p.a), ev.Name(p.b), p.b, p.a, p.b, RdmaDeviceFlag(p));
    out->push_back(std::move(d));
  }
  for (const auto& c : ev.colls) {
    double gbits = c.busbw_gbps * 8;
    if (c.nodes < 2 || gbits < 8 || gbits > 26) continue;
    double line = ev.line_gbps;
    if (line > 0 && line < 100) continue;
    auto d = Make(kPerfTcpPlateau, model::Severity::kWarn, model::Confidence::kMedium, c.op,
                  fmt::format("{} busbw {:.2f} GB/s ({:.0f} Gb/s) across {} nodes: the plateau of TCP", c.op,
                              c.busbw_gbps, gbits, c.nodes));
    d.evidence.push_back(fmt::format("{}: {} at {} B: busbw {:.2f} GB/s", c.source, c.op, c.bytes, c.busbw_gbps));
    d.causes = {"NCCL used NET/Socket between the nodes (check the NCCL log: fabcheck nccl-log)",
                "the collective ran on the default network interface (NCCL_SOCKET_IFNAME, NCCL_IB_HCA)"};
    d.fix = kPerfTcpPlateau.fix;
    d.next = "fabcheck nccl-log on the run's NCCL logs (which transport each channel used); then rung L3 between two "
             "of the nodes over verbs";
    out->push_back(std::move(d));
  }
}

void RunLarge(const Evidence& ev, std::vector<model::Diagnosis>* out) {
  for (const auto& p : ev.pairs) {
    bool small_ok = !p.sizes.empty();
    uint64_t largest_ok = 0;
    for (const auto& [bytes, bw] : p.sizes) largest_ok = std::max(largest_ok, bytes);
    std::vector<std::string> failed;
    for (const auto& [bytes, error] : p.failed) {
      if (bytes > largest_ok) failed.push_back(fmt::format("{} B: {}", bytes, error));
    }
    bool size_pattern = small_ok && !failed.empty();
    bool mtu_hole = p.mtu > 0 && p.path_mtu_known() && p.path_mtu < p.mtu;
    if (!size_pattern && !mtu_hole) continue;
    auto d = Make(kPerfLargeMessages, model::Severity::kFail, mtu_hole ? model::Confidence::kHigh : model::Confidence::kMedium,
                  PairName(ev, p),
                  mtu_hole ? fmt::format("frames above {} bytes do not get from {} to {} (interface MTU {})", p.path_mtu,
                                         ev.Name(p.a), ev.Name(p.b), p.mtu)
                           : fmt::format("{} worked up to {} B, larger messages failed", PairName(ev, p), largest_ok));
    for (const auto& f : failed) {
      if (d.evidence.size() < 5) d.evidence.push_back(p.source + ": " + f);
    }
    if (mtu_hole) d.evidence.push_back(fmt::format("{}: path MTU {} < interface MTU {}", p.source, p.path_mtu, p.mtu));
    d.causes = {"an MTU mismatch on the path: a switch port or the peer's netdev has a smaller MTU, so only large "
                "frames are dropped",
                "RoCE MTU (ibv port active_mtu) larger than what the Ethernet path carries",
                "a firewall or tunnel (VXLAN, IPsec) overhead reducing the usable MTU"};
    d.fix = kPerfLargeMessages.fix;
    d.next = fmt::format("rung L2.path between {} and {}: ping -M do -s {} {} from {}; fabcheck doctor --only L2 on "
                         "both",
                         ev.Name(p.a), ev.Name(p.b), p.mtu > 28 ? p.mtu - 28 : 8972, p.b, p.a);
    out->push_back(std::move(d));
  }
}

void RunHalf(const Evidence& ev, std::vector<model::Diagnosis>* out) {
  for (const auto& p : ev.pairs) {
    double line = LineOf(ev, p);
    if (line <= 0 || p.bw_gbps <= 0) continue;
    double ratio = p.bw_gbps / line;
    if (ratio < 0.4 || ratio > 0.6 || (p.bw_gbps >= 8 && p.bw_gbps <= 26 && line >= 100)) continue;
    auto d = Make(kPerfHalfRate, model::Severity::kWarn, model::Confidence::kMedium, PairName(ev, p),
                  fmt::format("{:.1f} Gb/s between {} is {:.0f}% of the {:.0f} Gb/s line rate", p.bw_gbps,
                              PairName(ev, p), ratio * 100, line));
    d.evidence.push_back(fmt::format("{}: {:.1f} Gb/s at {} B ({})", p.source, p.bw_gbps, p.bw_bytes, p.transport));
    for (const auto& doc : ev.doctors) {
      for (const auto& f : doc.findings) {
        if (f.id == "pcie.downgraded" || f.id == "topo.gpu-nic.far" || f.id == "port.rate.low") {
          d.causes.push_back(fmt::format("doctor on {}: {} ({})", doc.host, f.message, f.id));
        }
      }
    }
    d.causes.push_back("the NIC's PCIe link runs at x8 or one generation lower (half of x16)");
    d.causes.push_back("buffers or threads on the other NUMA node than the NIC (cross-socket traffic)");
    d.causes.push_back("one of two ports or rails carries the traffic (a bond or dual-port NIC used as one port)");
    d.causes.push_back("a single QP / stream that cannot fill the link (try --streams 4)");
    d.fix = kPerfHalfRate.fix;
    d.next = fmt::format("fabcheck doctor --only L1 on {} and {} (pcie.downgraded, topology); then fabcheck perf run "
                         "{} --transport verbs --numa auto --streams 4{}",
                         ev.Name(p.a), ev.Name(p.b), p.b, RdmaDeviceFlag(p));
    out->push_back(std::move(d));
  }
}

}  // namespace
}  // namespace fabcheck::diagnose
