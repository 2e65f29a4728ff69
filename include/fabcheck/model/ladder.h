// LadderManifest: what `fabcheck ladder` did across the cluster, rung by rung,
// and the go / no-go verdict ("schema": "fabcheck.ladder/v1"). It is the
// manifest.json at the root of an evidence bundle; `fabcheck report` renders a
// bundle without reading anything of the machine it runs on.
//
// Bundle layout (a directory, or the same tree in a .tar.gz):
//   manifest.json                         this document
//   members/<member-id>/inventory.json    fabcheck.inventory/v1 of that member
//   members/<member-id>/doctor.json       fabcheck.doctor/v1
//   members/<member-id>/snapshot.tar.gz   the sysfs evidence doctor read
//   members/<member-id>/counters/<rung>-{before,after}.json   CounterSample
//   rungs/<rung-id>/...                   per-rung evidence (perf JSON per pair,
//                                         coll JSON, NCCL logs, sweep JSON)
// Every path in this document is relative to the bundle root; "" when absent.
//
// Member IDs are unique within a bundle: the hostname, or "name@address"
// when two members report the same hostname (cloned VMs, namespaces).
// Later v1 versions only ADD fields.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fabcheck/model/finding.h"

namespace fabcheck::model {

inline constexpr std::string_view kLadderSchema = "fabcheck.ladder/v1";

// The rungs, bottom-up, in the order they run. IDs are stable (JSON, --rungs).
//   "L1L2.node"     inventory + doctor on every member
//   "L1L2.cluster"  settings that must agree across members (majority + outliers)
//   "L2.path"       path MTU and reachability per pair on the data-plane addresses
//   "L3"            perf between pairs against the expected bandwidth
//   "L4"            coll across all members + the nccl-log verdicts of that run
enum class RungVerdict {
  kPass,    // every member it ran on passed
  kWarn,    // passed with warnings
  kFail,    // at least one member (or pair) failed
  kNotRun,  // could not run here (no GPU, no RDMA device, not asked for, stopped below): `reason` says why
};
std::string_view RungVerdictName(RungVerdict v);  // "pass", "warn", "fail", "not_run"
std::optional<RungVerdict> ParseRungVerdict(std::string_view name);

struct LadderMember {
  std::string id;                          // unique in the bundle (see above)
  std::string name;                        // hostname as the member reports it
  std::string control;                     // agent control endpoint host:port
  std::vector<std::string> data_addresses; // per rail
  std::string node_type;                   // groups identical nodes (e.g. "8xH100 8xCX7"); for per-type plots
  bool reachable = true;
  std::string error;                       // why it is unreachable or died
  std::string dropped_at;                  // rung ID where it left the run ("" = stayed to the end)
  std::string dropped_reason;
  // Evidence files ("" when absent).
  std::string inventory_file;
  std::string doctor_file;
  std::string snapshot_file;
  // Where it sits, when known (from a topology file or node labels): used to group
  // baselines as single-node / same-rack / cross-rack.
  std::string rack;
  std::string leaf;
  std::vector<std::string> rail_leaves;  // the leaf of each rail, when the fabric file says (absent otherwise)
};

// One counter of one port of one member, before and after a rung.
struct CounterDelta {
  std::string member;        // member ID
  std::string object;        // "mlx5_0/1" (device/port) or a netdev
  std::string counter;       // "port_rcv_errors", "hw_counters/out_of_sequence", "rx_prio3_pause"
  uint64_t before = 0;
  uint64_t after = 0;
  int64_t delta = 0;         // after - before; negative means the counter was reset (reported, not alarmed)
  double interval_s = 0;
};

// The raw reading behind CounterDelta, one file per member, rung and phase.
struct CounterSample {
  std::string member;
  std::string rung;
  std::string phase;         // "before" or "after"
  double time_unix = 0;
  // object -> counter -> value
  std::map<std::string, std::map<std::string, uint64_t>> values;
};

// One setting that must agree cluster-wide (rung L1L2.cluster).
struct ConsistencyCheck {
  std::string setting;                      // "link_layer", "port_rate", "port_width", "netdev_mtu",
                                            // "gid_type", "nccl_gid_index", "pfc_priorities", "trust_mode",
                                            // "firmware", "driver", "nccl_version", "cuda_version", "kernel"
  std::string majority;                     // the value most members have ("" when none is known)
  std::map<std::string, std::string> values;  // member ID -> value ("" = unknown on that member)
  std::vector<std::string> outliers;        // member IDs whose known value differs from the majority
  RungVerdict verdict = RungVerdict::kPass; // unknown everywhere -> not_run
};

// One size of a bandwidth sweep (for the bandwidth-versus-size plot).
struct SizePoint {
  uint64_t bytes = 0;
  double bw_gbps = 0;
};

// One directed pair a -> b on one rail: the L2 path probe and the L3 perf test.
// What a failing pair's own counters point at: one end's port counted link
// errors in the rung the pair failed in, so its NIC or cable is the suspect
// (bundle/correlate.h decides it).
struct PairSuspect {
  std::string member;      // member ID
  std::string port;        // "mlx5_1/1"
  std::string element;     // "NIC or cable"
  std::string confidence;  // "high" | "medium"
  std::string why;         // "symbol_error +5212, port_rcv_errors +1840 on dgx-07 mlx5_1/1 in L3; dgx-02 mlx5_1/1 none"
};

struct PairTest {
  std::string a;                      // member ID that started the test
  std::string b;
  int rail = 0;
  std::string transport;              // what really ran: "verbs", "tcp" ("" when nothing ran)
  bool rdma = false;                  // true only when the transport was verbs end to end
  std::string device_a, device_b;     // mlx5_0 / netdev
  std::string gid_a, gid_b;
  std::optional<int> path_mtu;        // L2: largest DF packet that got through
  int local_mtu = 0;
  std::optional<double> bw_gbps;      // L3: at the rung's message size
  std::optional<double> expected_gbps;  // from port rate and PCIe link (and profile)
  std::string expected_basis;         // "400 Gb/s port x 90%", "PCIe Gen4 x8 = 126 Gb/s"
  std::optional<double> lat_p50_us;
  std::optional<double> lat_p99_us;
  std::vector<SizePoint> sweep;       // bandwidth against message size, when measured
  RungVerdict verdict = RungVerdict::kNotRun;
  std::string reason;                 // why it failed or did not run ("RDMA not used: tcp")
  std::string evidence_file;          // the perf JSON of this pair
  // A failing pair only: the counter deltas of both ends' ports in the same
  // rung, and the suspect they point at (absent when none).
  std::vector<CounterDelta> counters;
  std::optional<PairSuspect> suspect;
};

// L4: one collective's busbw against the expectation.
struct CollectiveCheck {
  std::string op;                     // "all_reduce"
  uint64_t max_bytes = 0;
  double busbw_gbps = 0;              // at the largest size
  std::optional<double> expected_gbps;
  std::string expected_basis;
  std::vector<SizePoint> sweep;       // busbw against size
  int64_t wrong = 0;
  RungVerdict verdict = RungVerdict::kNotRun;
  std::string reason;
  // Members it ran across, when not all of the rung's (a single-node or
  // one-rack baseline next to the cluster-wide run); empty = the rung's members.
  std::vector<std::string> members;
};

// What NCCL really used in the L4 run (from nccl-log over its logs).
struct NcclTransportCheck {
  std::string member;
  std::vector<std::string> transports;  // "NET/IB", "NET/IB/GDRDMA", "NET/Socket", "P2P", "SHM"
  std::vector<std::string> hcas;        // "mlx5_0:1"
  std::string interface;                // NCCL_SOCKET_IFNAME it bootstrapped on
  bool gpudirect = false;
  RungVerdict verdict = RungVerdict::kNotRun;
  std::string reason;
};

// A baseline group: one representative test of one of the seeds' L3/L4
// scopes ("ib_write_bw/lat and NCCL Tests have single-node, same-rack, and
// cross-rack baselines"; L4 also two nodes, single and multi rail, GPUDirect
// on/off), run after its rung on members that passed it. Scopes:
//   "single-node"  one member (L3: between two of its NICs, or one NIC to itself; L4: all its GPUs)
//   "two-nodes"    two members
//   "same-rack"    two members of one rack      "cross-rack"  two members of two racks
//   "one-rail"     the two-nodes pair on rail 0 (L4: NCCL_IB_HCA = each member's rail-0 HCA)
//   "all-rails"    the two-nodes pair on every rail at once (L4: NCCL's default, every HCA)
//   "gdr-on"       L4 only: the two-nodes job as NCCL picks (GPUDirect RDMA where the topology allows)
//   "gdr-off"      L4 only: the two-nodes job with NCCL_NET_GDR_LEVEL=LOC (no GPUDirect RDMA)
// A group the cluster cannot form (one rack, one rail, one member) is
// recorded with applicable = false and the reason, never left out.
struct BaselineGroup {
  std::string scope;
  bool applicable = true;
  std::vector<std::string> members;   // the representative members, in order
  std::vector<int> rails;             // L3: the rails measured (single-node: its two rails, or the one twice)
  std::vector<std::string> settings;  // what the group changes: "NCCL_NET_GDR_LEVEL=LOC", "NCCL_IB_HCA=..."
  std::string same_as;                // another group of the rung whose measurement this is (not run twice)
  RungVerdict verdict = RungVerdict::kNotRun;
  std::string reason;                 // why not applicable, not run, or failed; the figures when it passed
  std::vector<PairTest> pairs;                // L3: each direction (and rail) measured
  std::vector<CollectiveCheck> collectives;   // L4
  std::vector<NcclTransportCheck> nccl;       // L4: what NCCL used on each member
  std::vector<std::string> evidence_files;    // L4: rank 0's report, each member's ranks and NCCL logs
  double elapsed_s = 0;
};

struct RungResult {
  std::string id;                       // see RungVerdict's comment
  std::string title;                    // "L3 RDMA perftest"
  RungVerdict verdict = RungVerdict::kNotRun;
  std::string reason;                   // one line: why not run, or what failed
  nlohmann::json parameters;            // what it ran with (sizes, pattern, thresholds, profile)
  double start_unix = 0;
  double end_unix = 0;
  std::vector<std::string> members;        // member IDs the rung ran on
  std::vector<std::string> members_passed; // of those, the ones that passed (go on to the next rung)
  std::vector<Finding> findings;           // `object` starts with the member ID
  std::vector<ConsistencyCheck> consistency;   // L1L2.cluster
  std::vector<PairTest> pairs;                 // L2.path, L3
  std::vector<CollectiveCheck> collectives;    // L4
  std::vector<NcclTransportCheck> nccl;        // L4
  std::vector<CounterDelta> counter_deltas;    // non-zero deltas only
  std::vector<std::string> evidence_files;     // everything else this rung saved
  std::vector<BaselineGroup> baselines;        // L3, L4: the baseline groups (absent when none were formed)
};

struct LadderVerdict {
  bool go = false;                       // every rung that ran passed (warnings allowed) and none required was not run
  std::string first_failing_rung;        // "" when none
  std::vector<std::string> not_run;      // rung IDs not run, for the checklist's "unknown"
  std::string summary;                   // one line for people
  int exit_code = 0;                     // as every command: 0 go, 1 go with warnings, 2 no-go, 3 could not run
};

struct LadderManifest {
  std::string schema{kLadderSchema};
  std::string fabcheck_version;
  std::string created_at;                // ISO 8601 UTC
  std::string coordinator;               // hostname that ran the ladder
  nlohmann::json parameters;             // command line as values: rungs, pattern, profile, keep_going, sizes
  double start_unix = 0;
  double end_unix = 0;
  bool interrupted = false;              // Ctrl-C: what was measured is kept
  std::vector<LadderMember> members;
  std::vector<RungResult> rungs;         // in ladder order, one per rung (not_run ones included)
  LadderVerdict verdict;
};

void to_json(nlohmann::json& j, const RungVerdict& v);
void from_json(const nlohmann::json& j, RungVerdict& v);
void to_json(nlohmann::json& j, const LadderMember& v);
void from_json(const nlohmann::json& j, LadderMember& v);
void to_json(nlohmann::json& j, const CounterDelta& v);
void from_json(const nlohmann::json& j, CounterDelta& v);
void to_json(nlohmann::json& j, const CounterSample& v);
void from_json(const nlohmann::json& j, CounterSample& v);
void to_json(nlohmann::json& j, const ConsistencyCheck& v);
void from_json(const nlohmann::json& j, ConsistencyCheck& v);
void to_json(nlohmann::json& j, const SizePoint& v);
void from_json(const nlohmann::json& j, SizePoint& v);
void to_json(nlohmann::json& j, const PairSuspect& v);
void from_json(const nlohmann::json& j, PairSuspect& v);
void to_json(nlohmann::json& j, const PairTest& v);
void from_json(const nlohmann::json& j, PairTest& v);
void to_json(nlohmann::json& j, const CollectiveCheck& v);
void from_json(const nlohmann::json& j, CollectiveCheck& v);
void to_json(nlohmann::json& j, const NcclTransportCheck& v);
void from_json(const nlohmann::json& j, NcclTransportCheck& v);
void to_json(nlohmann::json& j, const BaselineGroup& v);
void from_json(const nlohmann::json& j, BaselineGroup& v);
void to_json(nlohmann::json& j, const RungResult& v);
void from_json(const nlohmann::json& j, RungResult& v);
void to_json(nlohmann::json& j, const LadderVerdict& v);
void from_json(const nlohmann::json& j, LadderVerdict& v);
void to_json(nlohmann::json& j, const LadderManifest& v);
void from_json(const nlohmann::json& j, LadderManifest& v);

// Parses a manifest.json; nullopt and *error (naming the field) on failure or another schema.
std::optional<LadderManifest> ParseLadderManifest(std::string_view text, std::string* error);

}  // namespace fabcheck::model
