// Planted faults: from a file (a JSON list of {"kind", "element", and
// "factor" | "loss" | "mtu" | "cv"}) or generated (--fault-mix realistic).
//   node_slow        member     factor   every rail of the node at a factor
//   nic_slow         NIC        factor   one NIC (e.g. PCIe x8: 0.5)
//   cable_degraded   NIC-leaf   factor   trained below its rate (the port shows it), or
//                              | loss    lossy (packets resent)
//   uplink_degraded  leaf-spine factor   capacity at a factor, or lossy: only flows hashed through it suffer
//                    or spine-core | loss  (three tiers); "direction": "up" (leaf->spine, spine->core) or
//                                          "down" degrades one way only (a dirty optic, one lane, one queue)
//   uplink_flap      leaf-spine factor   down this share of the rounds: flows hashed onto it crawl (2%)
//   spine_congested  spine      factor   background traffic leaves the sweep this share of each of its links
//   spine_loss       spine      loss     every flow through the spine resends
//                    or core              (three tiers: a core switch)
//   mtu_mismatch     NIC        mtu      the NIC's MTU differs: large messages fail
//   flap             NIC-leaf   factor   down this fraction of the time: tests through it fail
//   noise            member     cv       a decoy: high variance, not faulty
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "sim/clos.h"

namespace fabcheck::sim {

enum class FaultKind {
  kNodeSlow, kNicSlow, kCableDegraded, kUplinkDegraded, kSpineLoss, kMtuMismatch, kFlap, kNoise, kUplinkFlap,
  kSpineCongested
};
std::string_view FaultKindName(FaultKind kind);

struct Fault {
  FaultKind kind = FaultKind::kNodeSlow;
  std::string element;
  Element where;
  std::optional<double> factor, loss, cv;
  std::optional<int> mtu;
  std::string direction;  // uplink_degraded: "up", "down", or empty (both ways)
};

Result<std::vector<Fault>> ParseFaults(std::string_view json, const Clos& clos);
// Several simultaneous faults of every kind and noise decoys, scaled with the
// fabric (about 2 node, 4 NIC, 4 cable, 3 uplink, 1 spine, 2 MTU, 2 flap faults
// and 4 decoys at 2,048 members), on distinct members, leaves and spines.
std::vector<Fault> RealisticMix(const Clos& clos, uint64_t seed);
// The realistic mix plus the faults real fabrics show and a symmetric model
// hides, per 2,048 members: 2 uplinks degraded one way (10-30% of capacity),
// 2 with gray loss one way (0.1-1%), a flapping uplink and a spine congested
// by background traffic (25-40% of its capacity left).
std::vector<Fault> HarshMix(const Clos& clos, uint64_t seed);
nlohmann::json ToJson(const std::vector<Fault>& faults);

// What the faults do, element by element, as the transport reads it.
struct FabricState {
  int rails = 1, spines = 1, leaves = 1;
  std::vector<float> nic_factor, cable_factor, port_factor, cable_loss, flap;  // member x rail
  std::vector<int> mtu;                                                         // member x rail
  std::vector<float> noise_cv;                                                  // member (0: the default)
  std::vector<float> uplink_factor, uplink_loss;                                // rail x leaf x spine, leaf->spine
  std::vector<float> uplink_factor_down, uplink_loss_down;                      // ...spine->leaf
  std::vector<float> uplink_flap;                                               // ...share of rounds down
  std::vector<float> spine_loss;                                                // rail x spine
  int cores = 0;                                                                // three tiers
  std::vector<float> core_link_factor, core_link_loss;                          // rail x spine x core, spine->core
  std::vector<float> core_link_factor_down, core_link_loss_down;                // ...core->spine
  std::vector<float> core_loss;                                                 // rail x core
  size_t Nic(int m, int r) const { return static_cast<size_t>(m) * rails + r; }
  size_t Uplink(int r, int l, int s) const { return (static_cast<size_t>(r) * leaves + l) * spines + s; }
  size_t SpineAt(int r, int s) const { return static_cast<size_t>(r) * spines + s; }
  size_t CoreLink(int r, int s, int c) const { return (static_cast<size_t>(r) * spines + s) * cores + c; }
  size_t CoreAt(int r, int c) const { return static_cast<size_t>(r) * cores + c; }
};
FabricState Apply(const Clos& clos, const std::vector<Fault>& faults);

// The finding that localises a fault: its kind ("node", "nic", "cable",
// "uplink", "spine", "core", "mtu") and element. Empty kind for a noise decoy.
struct Expected {
  std::string kind, element;
  std::string direction;  // a one-way fault: the finding's direction ("leaf-r0-01->spine-r0-02")
};
Expected ExpectedFinding(const Fault& fault);

}  // namespace fabcheck::sim
