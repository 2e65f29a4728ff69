// SweepResult: what `fabcheck sweep` measured between every tested pair of
// nodes, and the verdict that names the slow node, the slow link or the MTU
// hole. Schema "fabcheck.sweep/v1".
//
// Matrices are dense n x n, row = the node that sent (or started) the test,
// column = its peer; a cell that was not measured is NaN in memory and null
// in JSON. Storage is float: a 4,096-node matrix is 64 MiB, not 128.
#pragma once

#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fabcheck/model/finding.h"

namespace fabcheck::model {

inline constexpr std::string_view kSweepSchema = "fabcheck.sweep/v1";

class PairMatrix {
 public:
  PairMatrix() = default;
  explicit PairMatrix(int n)
      : n_(n), values_(static_cast<size_t>(n) * static_cast<size_t>(n), std::numeric_limits<float>::quiet_NaN()) {}

  int size() const { return n_; }
  double at(int i, int j) const { return values_[Index(i, j)]; }
  bool has(int i, int j) const { return !std::isnan(values_[Index(i, j)]); }
  void set(int i, int j, double v) { values_[Index(i, j)] = static_cast<float>(v); }
  // Row i as a pointer to n floats (the analysis walks rows without copies).
  const float* row(int i) const { return values_.data() + static_cast<size_t>(i) * static_cast<size_t>(n_); }
  size_t measured() const;

 private:
  size_t Index(int i, int j) const { return static_cast<size_t>(i) * static_cast<size_t>(n_) + static_cast<size_t>(j); }
  int n_ = 0;
  std::vector<float> values_;
};

// One node of the sweep: where its agent answers and what it told us.
struct SweepMember {
  int index = 0;
  std::string name;                        // hostname (or the address when unknown)
  // What every output shows: the name, or "name@host" when another member has
  // the same name (cloned VMs, containers, namespaces on one host).
  std::string display;
  std::string control;                     // agent control endpoint, host:port
  std::vector<std::string> data_addresses; // data-plane address per rail (NIC i = rail i)
  std::vector<int> interface_mtu;          // interface MTU per rail, 0 when unknown
  bool reachable = true;
  std::string error;                       // why it is unreachable
};

// One directional test a -> b on one rail (a started it).
struct SweepPairResult {
  int a = 0, b = 0, rail = 0, round = 0;
  std::optional<double> bw_gbps;           // a sending to b
  std::optional<double> lat_median_us;     // one-way latency (RTT / 2)
  std::optional<double> lat_p99_us;
  std::optional<int> path_mtu;             // largest don't-fragment IP packet a -> b got through
  int local_mtu = 0;                       // a's interface MTU toward b (what a's kernel believes)
  std::string transport;                   // what the test really used, e.g. "tcp"
  std::string error;                       // empty when the test ran
  // Several flows (QPs / connections with distinct source ports) in one test,
  // so ECMP hashes them over different spines: each flow's figure, and the
  // spine it crossed (index into SweepResult::spines[rail]) when the transport
  // can tell, -1 otherwise. Empty for a one-flow test.
  std::vector<float> flow_gbps;
  std::vector<int16_t> flow_spine;
  // Three-tier fabrics, flows between pods: the core each flow crossed (index
  // into SweepResult::cores[rail]) and the spine of the far pod it came down
  // (-1: the flow stayed in its pod). Empty in a two-tier fabric.
  std::vector<int16_t> flow_core, flow_spine_down;
  // What the two ports negotiated and how many packets had to be resent, when
  // the transport can tell: a downtrained or lossy cable shows here.
  std::optional<double> a_port_gbps, b_port_gbps;
  std::optional<double> loss;
};

struct SweepMatrices {
  int rail = 0;
  PairMatrix bw_gbps;
  PairMatrix lat_median_us;
  PairMatrix lat_p99_us;
  PairMatrix path_mtu;
};

enum class CulpritKind {
  kSlowNode,         // slow with (at least three quarters of) its peers
  kSlowLink,         // one pair slow while both nodes are fine elsewhere
  kHighLatencyNode,
  kHighLatencyLink,
  kMtuHoleNode,      // large frames to/from this node vanish
  kMtuHoleLink,      // large frames vanish on one path only
  kFailedLink,       // the test failed while both agents answer
  kUnreachable,      // the agent did not answer
};
std::string_view CulpritKindName(CulpritKind kind);  // "slow-node", "slow-link", ...
std::optional<CulpritKind> ParseCulpritKind(std::string_view name);

struct SweepCulprit {
  CulpritKind kind = CulpritKind::kSlowNode;
  Severity severity = Severity::kWarn;
  int rail = 0;
  std::vector<int> nodes;      // one node, or the pair (a, b)
  std::string direction;       // "send", "receive", "both", or "a->b" / "both" for links
  std::string metric;          // "bw_gbps", "lat_median_us", "path_mtu"
  double value = 0;            // the culprit's figure
  double median = 0;           // the cluster's (or, for links, the expected) figure
  double ratio = 0;            // value / median
  double robust_z = 0;         // scaled MADs from the median (negative = below)
};

struct SweepStats {
  int rail = 0;
  size_t pairs_measured = 0;
  double bw_median_gbps = 0, bw_mad_gbps = 0;
  double lat_median_us = 0, lat_mad_us = 0;
  double path_mtu_median = 0;
};

// One measurement a finding rests on: a -> b on `rail` in `round` gave
// `value` where `expected` was the reference (flow figures for spines/uplinks).
struct SweepEvidence {
  int a = 0, b = 0, rail = 0, round = 0;
  std::string metric;  // "bw_gbps", "flow_gbps", "path_mtu", "failed", "port_gbps", "loss"
  double value = 0, expected = 0;
};

// A fault pinned to one element of the fabric.
//   kind     element
//   node     n0000                      every rail of the node
//   nic      n0000/r3                   one NIC (e.g. PCIe x8)
//   cable    n0000/r3~leaf-r3-00        the NIC-leaf link (downtrained, lossy, flapping)
//   uplink   leaf-r3-07~spine-r3-12     one leaf-spine link
//   spine    spine-r3-12
//   mtu      n0000/r3                   large frames fail on that NIC
struct SweepElementFinding {
  std::string kind;
  std::string element;
  // Links: the way the slow flows went ("leaf-0->spine-1", "spine-1->leaf-0",
  // "leaf-0->leaf-2" for a path), or "both"; empty for other kinds.
  std::string direction;
  int rail = -1;               // -1 for a node
  Severity severity = Severity::kWarn;
  double confidence = 0;       // 0..1
  double ratio = 0;            // the element's figure over its reference
  std::string why;             // one line for people
  std::vector<SweepEvidence> evidence;  // the deciding measurements (a few)
};

// An adaptive retest: which suspect a round re-measured, and why.
struct SweepRetest {
  int round = 0;
  std::string suspect;  // "uplink leaf-0~spine-1 (leaf-0->spine-1)"
  std::string why;      // the evidence that made it a suspect
  std::vector<std::pair<int, int>> pairs;  // the member pairs measured for it (both directions)
};

struct SweepVerdict {
  Severity severity = Severity::kPass;
  std::string summary;  // one line for people
  std::vector<SweepStats> stats;
  std::vector<SweepCulprit> culprits;
  std::vector<Finding> findings;
  std::vector<SweepElementFinding> elements;  // with a fabric: the elements at fault
};

struct SweepResult {
  std::string schema = std::string(kSweepSchema);
  std::string pattern;         // the strategy: "pairwise", "ring", "k-random", "topology", "adaptive"
  int rails = 1;
  int rounds_planned = 0;
  int rounds_completed = 0;
  bool interrupted = false;    // Ctrl-C: the result is partial
  double elapsed_s = 0;
  std::string transport;       // what the pairs were measured with
  nlohmann::json settings;     // sizes, durations, timeouts used
  std::vector<SweepMember> members;
  std::vector<std::vector<std::string>> spines;  // per rail, from the fabric (flow_spine indexes these)
  std::vector<std::vector<std::string>> cores;   // per rail, three tiers (flow_core indexes these)
  std::vector<SweepPairResult> pairs;
  std::vector<SweepRetest> retests;     // adaptive: what each retest round re-measured, and why
  std::vector<SweepMatrices> matrices;  // one per rail
  SweepVerdict verdict;
};

// Fills the matrices (one per rail) from `pairs`.
std::vector<SweepMatrices> BuildMatrices(int members, int rails, const std::vector<SweepPairResult>& pairs);

void to_json(nlohmann::json& j, const PairMatrix& m);
void from_json(const nlohmann::json& j, PairMatrix& m);
void to_json(nlohmann::json& j, const SweepMember& m);
void from_json(const nlohmann::json& j, SweepMember& m);
void to_json(nlohmann::json& j, const SweepPairResult& p);
void from_json(const nlohmann::json& j, SweepPairResult& p);
void to_json(nlohmann::json& j, const SweepMatrices& m);
void from_json(const nlohmann::json& j, SweepMatrices& m);
void to_json(nlohmann::json& j, const CulpritKind& k);
void from_json(const nlohmann::json& j, CulpritKind& k);
void to_json(nlohmann::json& j, const SweepCulprit& c);
void from_json(const nlohmann::json& j, SweepCulprit& c);
void to_json(nlohmann::json& j, const SweepStats& s);
void from_json(const nlohmann::json& j, SweepStats& s);
void to_json(nlohmann::json& j, const SweepEvidence& e);
void from_json(const nlohmann::json& j, SweepEvidence& e);
void to_json(nlohmann::json& j, const SweepElementFinding& f);
void from_json(const nlohmann::json& j, SweepElementFinding& f);
void to_json(nlohmann::json& j, const SweepRetest& r);
void from_json(const nlohmann::json& j, SweepRetest& r);
void to_json(nlohmann::json& j, const SweepVerdict& v);
void from_json(const nlohmann::json& j, SweepVerdict& v);
void to_json(nlohmann::json& j, const SweepResult& r);
// Throws nlohmann::json exceptions on a malformed document (callers at module
// boundaries catch them); rejects a schema other than fabcheck.sweep/v1.
void from_json(const nlohmann::json& j, SweepResult& r);

}  // namespace fabcheck::model
