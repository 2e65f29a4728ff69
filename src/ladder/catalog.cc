#include "ladder/catalog.h"

#include "ladder/consistency.h"

namespace fabcheck::ladder {

std::vector<model::CatalogEntry> CatalogEntries() {
  std::vector<model::CatalogEntry> out = {
      {"ladder.member.unreachable", "ladder", "ladder", std::nullopt,
       "A member stopped answering while the ladder ran",
       "A member that vanishes mid-run was not checked above the rung it died in; a go verdict would cover it "
       "without evidence.",
       "Check that the node is up and `fabcheck agent` runs there; rerun the ladder once it is back."},
      {"ladder.node.not-checked", "ladder", "L1L2.node", std::nullopt,
       "The member's node checks (inventory and doctor) could not be run or read",
       "A member whose L1/L2 state is unknown cannot be trusted above L2.",
       "Look at the agent's log on the node; run `fabcheck doctor` there."},
      {"ladder.cluster.unknown", "ladder", "L1L2.cluster", std::nullopt,
       "A member's settings could not be read, so it cannot be compared with the others",
       "Settings that must agree across nodes (MTU, link layer, GID, PFC) are only checked where they are known.",
       "Look at the agent's log on the node."},
      {"ladder.path.fail", "ladder", "L2.path", std::nullopt,
       "Pairs of members cannot reach each other at the data-plane MTU (MTU black hole or no route)",
       "Large RDMA/RoCE frames dropped on one hop hang or slow every job that crosses it.",
       "Make the MTU the same on every hop of the data plane or fix the route: ping -M do -s <MTU-28> <peer>."},
      {"ladder.path.fail-tcp", "ladder", "L2.path", std::nullopt,
       "Path probes ran over TCP only",
       "A TCP probe says nothing about the RDMA path.",
       "Run where the members have RDMA devices and agents that serve verbs."},
      {"ladder.perf.fail", "ladder", "L3", std::nullopt,
       "Pairs of members measured below the bandwidth their ports and PCIe links allow",
       "A slow node shows in all its pairs (PCIe, NUMA, port rate), a slow link or cable in one; collectives run at "
       "the pace of the slowest pair.",
       "Run `fabcheck perf` between the named members and `fabcheck doctor` on them; read the rung's counter "
       "deltas of both ends."},
      {"ladder.perf.link-errors", "ladder", "L3", std::nullopt,
       "A pair failed L3 while one end's port counted link errors (symbol_error, port_rcv_errors, "
       "link_error_recovery, link_downed...) in the same rung: that NIC or cable is the suspect",
       "Errors of the wire itself on the port of a failing pair name where the loss is: one cable, transceiver or "
       "NIC, not the node or the fabric; both ends counting errors point at the cable between them.",
       "Reseat or replace the named port's cable and transceiver, then the NIC if the errors follow it; rerun L3 "
       "for the pair and read the counters again (fabcheck explain counters.link-errors)."},
      {"ladder.perf.fail-tcp", "ladder", "L3", std::nullopt,
       "L3 pairs were measured over TCP: RDMA was not used",
       "A TCP figure is never an RDMA result; the rung proves nothing about RDMA.",
       "Run where the members have RDMA devices (and agents that serve verbs); --transport auto picks verbs."},
      {"ladder.perf.latency-high", "ladder", "L3", std::nullopt,
       "A pair's latency is over 4x the rung's median",
       "High latency on one pair points at congestion, PFC pauses or a long path.",
       "Look at the rung's counter deltas of both ends for pauses and retransmissions."},
      {"ladder.baseline.fail", "ladder", "L3/L4", std::nullopt,
       "A baseline group (single node, two nodes, same rack, cross rack, one rail, all rails, GPUDirect on/off) "
       "measured below its line or did not complete",
       "The rung's own pairs pass, yet one scope of the fabric does not deliver: cross-rack traffic through a slow "
       "uplink, one rail of several, a node's own NICs. Jobs placed in that scope run at its pace; no such group is "
       "a baseline.",
       "Run `fabcheck perf` (or `fabcheck coll`) between the group's members and read both ends' counters; across "
       "racks look at the uplinks (`fabcheck sweep --topology FILE`). docs/ladder.md lists the groups."},
      {"ladder.coll.ranks", "ladder", "L4", std::nullopt,
       "A member's collective ranks did not complete (or could not run: no CUDA/NCCL)",
       "A collective that does not complete on every member is no baseline.",
       "Read the member's L4/ files in the bundle; `fabcheck diagnose BUNDLE` names the cause."},
  };
  for (const auto& s : Settings()) {
    out.push_back({"ladder.cluster." + s.name, "ladder", "L1L2.cluster", std::nullopt,
                   "Members disagree on " + s.what + " (the outliers against the majority)",
                   s.fail ? std::string("Nodes that disagree on it do not talk RDMA to each other at full speed, "
                                        "yet each passes its own doctor.")
                          : std::string("Mixed versions are a warning: they work until they do not."),
                   s.fix});
  }
  return out;
}

}  // namespace fabcheck::ladder
