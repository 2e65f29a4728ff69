// nccl.ib.wc-error: a work completion with an error status ("Got completion from peer X with status=N").
#include <fmt/format.h>

#include <map>

#include "base/strings.h"
#include "diagnose/nccl_util.h"
#include "diagnose/rule.h"
#include "logs/wc_status.h"

namespace fabcheck::diagnose {
namespace {
void Run(const Evidence& ev, std::vector<model::Diagnosis>* out);
}  // namespace

extern const Rule kNcclIbWcError = {
    "nccl.ib.wc-error", "NCCL",
    "NCCL got a work completion with an error status (any ibv_wc_status but 5, decoded by name)",
    "The RDMA connection between two ranks broke. Status 12 (transport retries exceeded) is the classic RoCE and "
    "IB fabric failure: packets lost on the path (link flaps, PFC off or on the wrong priority, GID or traffic-class "
    "mismatch, MTU).",
    "Test the path between exactly the two members the line names, bottom-up: L2 (doctor --only L2,RoCE on both, "
    "path MTU) then L3 (fabcheck perf over verbs with the same device and GID). See each status's causes.",
    &Run};

namespace {

struct Causes {
  std::vector<std::string> causes;
  std::string fix;
};

bool LinkLocal(const std::string& gid) { return StartsWith(ToLower(gid), "fe80:"); }

Causes CausesFor(int status, const model::NcclEvent& e, const Evidence& ev, const std::string& host) {
  std::string local = Field(e, "local_gid"), remote = Field(e, "remote_gid");
  Causes c;
  switch (status) {
    case 12: {
      if (LinkLocal(local) || LinkLocal(remote)) {
        c.causes.push_back("a link-local (fe80::) GID is used: not routable across an L3 RoCE fabric; set "
                           "NCCL_IB_GID_INDEX to the RoCE v2 IPv4 entry (or unset it: NCCL 2.21+ picks one)");
      }
      // What doctor saw on either node ranks causes first.
      for (const auto& doc : ev.doctors) {
        for (const auto& f : doc.findings) {
          if (f.severity != model::Severity::kFail && f.severity != model::Severity::kWarn) continue;
          if (StartsWith(f.id, "roce.pfc") || StartsWith(f.id, "roce.") || StartsWith(f.id, "mtu") ||
              StartsWith(f.id, "gid") || StartsWith(f.id, "nccl.gid") || StartsWith(f.id, "port.")) {
            c.causes.push_back(fmt::format("doctor on {}: {} ({})", doc.host.empty() ? doc.source : doc.host,
                                           f.message, f.id));
          }
        }
      }
      c.causes.push_back("packets lost on the path: a flapping link, a bad cable or transceiver (watch link_downed, "
                         "symbol_error, port_rcv_errors on both ends)");
      c.causes.push_back("RoCE: PFC off, or on another priority than the traffic (NCCL_IB_TC / DSCP trust mode), so "
                         "congestion drops packets");
      c.causes.push_back("GID or traffic-class mismatch: NCCL_IB_GID_INDEX pointing at a RoCE v1 or wrong-subnet "
                         "entry on one side, or a different index on different nodes");
      c.causes.push_back("MTU mismatch on the path (switch or netdev MTU smaller than the RoCE MTU)");
      c.causes.push_back("the peer process died first (then its own log ends earlier, and this is a consequence)");
      c.fix = "find the lossy hop: counters on both ports (fabcheck exporter / snapshot, then diagnose them), PFC and "
              "ECN per priority on NIC and switch, the same RoCE v2 GID index everywhere, one MTU end to end";
      break;
    }
    case 13:
      c.causes = {"the peer stopped posting receives: its process hung, was stopped or is far slower (look at its log "
                  "for the same time)",
                  "the peer ran out of receive resources (memory pressure, NCCL_IB_QPS_PER_CONNECTION high)"};
      c.fix = "look at the peer's own log and health (GPU Xid errors, OOM kills); rerun to see whether the same peer "
              "fails";
      break;
    case 4:
      c.causes = {"GPU memory registration without working GPUDirect (nvidia-peermem vs dma-buf mismatch, wrong "
                  "driver version)",
                  "the buffer was freed or deregistered while the transfer ran (application or NCCL bug)",
                  "an IOMMU / ACS setting blocking the NIC's peer-to-peer access to GPU memory"};
      c.fix = "check GPUDirect on this node (fabcheck doctor --only GDR); A/B with NCCL_NET_GDR_LEVEL=LOC (no "
              "GPUDirect) to confirm";
      break;
    case 10:
      c.causes = {"the peer's memory region rejected the access: its registration failed or was freed",
                  "GPUDirect broken on the peer (nvidia-peermem, dma-buf)",
                  "different NCCL versions on the two sides (see nccl.version.mismatch)"};
      c.fix = "look at the peer's log for its first error; check GPUDirect on the peer (fabcheck doctor --only GDR)";
      break;
    case 19:
      c.causes = {"the HCA hit a catastrophic error (firmware, PCIe AER, overheating)"};
      c.fix = "check dmesg on " + host + " for mlx5 health / AER errors; the HCA may need a reset or a firmware update";
      break;
    default: {
      const logs::WcStatusInfo* info = logs::FindWcStatus(status);
      c.causes = {info ? std::string(info->meaning) : "a status outside ibv_wc_status: a plugin's own code",
                  "look up the vendor error code with the NIC vendor (mlx5: vendor err 0x81 = transport retry)"};
      c.fix = "read the first error of the job (this may be a consequence); test the pair at L3";
      break;
    }
  }
  return c;
}

void Run(const Evidence& ev, std::vector<model::Diagnosis>* out) {
  if (!ev.nccl) return;
  // One diagnosis per (host, status, peer): a job with 1000 such lines still reads as a few pairs.
  std::map<std::string, std::vector<const model::NcclEvent*>> groups;
  std::vector<std::string> order;
  for (const auto* e : EventsOf(*ev.nccl, "wc-error")) {
    if (Field(*e, "status") == "5") continue;
    std::string key = e->host + "|" + Field(*e, "status") + "|" + Field(*e, "peer_ip") + "|" + Field(*e, "hca");
    if (!groups.count(key)) order.push_back(key);
    groups[key].push_back(e);
  }
  size_t shown = 0;
  for (const auto& key : order) {
    const auto& events = groups[key];
    const model::NcclEvent& e = *events.front();
    int status = static_cast<int>(ParseInt(Field(e, "status")).value_or(-1));
    const logs::WcStatusInfo* info = logs::FindWcStatus(status);
    std::string name = info ? std::string(info->name) : "unknown status";
    std::string peer_ip = Field(e, "peer_ip");
    std::string peer = peer_ip.empty() ? "its peer" : ev.Name(peer_ip);
    std::string hca = Field(e, "hca");
    std::string host = e.host.empty() ? "a rank" : e.host;
    if (++shown > 20) {
      auto more = Make(kNcclIbWcError, model::Severity::kFail, model::Confidence::kHigh, "more pairs",
                       fmt::format("{} more host/peer pairs had completion errors (first 20 shown)", order.size() - 20));
      out->push_back(std::move(more));
      break;
    }
    int count = 0;
    for (const auto* x : events) count += x->count;
    auto d = Make(kNcclIbWcError, model::Severity::kFail, model::Confidence::kHigh,
                  fmt::format("{}{} -> {}", host, hca.empty() ? "" : " " + hca, peer),
                  fmt::format("work completion error status {} ({}) on {}{} talking to {}{}: {}", status, name, host,
                              hca.empty() ? "" : " " + hca, peer, count > 1 ? fmt::format(", {} times", count) : "",
                              info ? std::string(info->meaning) : "not an ibv_wc_status value"));
    for (const auto* x : events) {
      if (d.evidence.size() >= 6) break;
      d.evidence.push_back(Cite(*x));
    }
    std::string local = Field(e, "local_gid"), remote = Field(e, "remote_gid");
    if (!local.empty() || !remote.empty()) {
      d.evidence.push_back(fmt::format("local GID {}, remote GID {}", local.empty() ? "?" : local,
                                       remote.empty() ? "?" : remote));
    }
    if (!Field(e, "vendor_err").empty()) d.evidence.push_back("vendor error " + Field(e, "vendor_err"));
    Causes causes = CausesFor(status, e, ev, host);
    d.causes = causes.causes;
    d.fix = causes.fix;
    std::string peer_member = peer_ip.empty() ? "<peer>" : ev.MemberOf(peer_ip);
    if (peer_member.empty()) peer_member = peer_ip;
    d.next = fmt::format(
        "rung L2 then L3 between exactly {} ({}{}) and {} ({}): fabcheck doctor --only L2,RoCE on both; path MTU "
        "with ping -M do -s 8972 {} from {}; then on {}: fabcheck perf serve, and on {}: fabcheck perf run {} "
        "--transport verbs{} --gid-index auto --sizes 2:8M",
        host, hca.empty() ? "its HCA" : hca, local.empty() ? "" : ", GID " + local, peer_member,
        remote.empty() ? peer_ip : "GID " + remote, peer_ip.empty() ? "<peer>" : peer_ip, host, peer_member, host,
        peer_ip.empty() ? "<peer>" : peer_ip, hca.empty() ? "" : " --device " + hca);
    out->push_back(std::move(d));
  }
}

}  // namespace
}  // namespace fabcheck::diagnose
