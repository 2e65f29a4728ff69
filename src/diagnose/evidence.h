// Everything diagnose reasons over, already read into model values. Rules
// see only this; inputs.h fills it from files (logs, metrics text, JSON,
// ladder bundles).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "fabcheck/model/coll.h"
#include "fabcheck/model/diagnose.h"
#include "fabcheck/model/finding.h"
#include "fabcheck/model/kv.h"
#include "logs/nccl_inspector.h"
#include "logs/nccl_ras.h"

namespace fabcheck::diagnose {

// One reading of one counter.
struct CounterPoint {
  double time = 0;     // seconds (Unix time, or the order of the files when no time is known)
  uint64_t value = 0;
  std::string source;  // "metrics-0930.txt" or "bundle/members/a/counters/L3-after.json"
};

// One counter of one port of one member over time, oldest first.
struct CounterSeries {
  std::string member;   // "" when the input named none
  std::string object;   // "mlx5_0/1" or a netdev
  std::string counter;  // sysfs / ethtool name: "packet_seq_err", "rx_prio3_pause"
  std::vector<CounterPoint> points;
};

// A bandwidth test between two members (perf JSON, a sweep pair, a ladder L3 pair).
struct PairEvidence {
  std::string source;     // file (and pair) it came from
  std::string a, b;       // members (or addresses)
  std::string transport;  // "verbs", "tcp", ""
  std::string device_a, device_b, gid_a, gid_b;
  int mtu = 0;                        // the sender's interface MTU (0 unknown)
  int path_mtu = 0;                   // largest DF packet that got through (0 unknown)
  bool path_mtu_known() const { return path_mtu > 0; }
  double bw_gbps = 0;                 // at the largest size that worked (0 when none)
  uint64_t bw_bytes = 0;              // that size
  double line_gbps = 0;               // the port's rate when known (0 unknown)
  std::string line_basis;
  std::vector<std::pair<uint64_t, double>> sizes;       // bytes -> Gb/s (worked)
  std::vector<std::pair<uint64_t, std::string>> failed;  // bytes -> error (failed or timed out)
  std::string error;                                     // the whole test failed
};

// A collective run (coll JSON, a ladder L4 collective).
struct CollEvidence {
  std::string source;
  std::string op;
  uint64_t bytes = 0;        // largest size
  double busbw_gbps = 0;     // GB/s at the largest size
  double expected_gbps = 0;  // GB/s (0 unknown)
  std::vector<std::pair<uint64_t, double>> sizes;
  int nodes = 0;
};

// A KV-cache transfer (fabcheck kv JSON) with the L3 figure of its run.
struct KvEvidence {
  std::string source;
  model::KvResult result;
};

// An NCCL RAS report (ncclras text output).
struct RasEvidence {
  std::string source;
  logs::RasReport report;
};

// NCCL Inspector output: per rank, per collective bus bandwidth.
struct InspectorEvidence {
  std::string source;
  logs::InspectorFile file;
};

struct DoctorEvidence {
  std::string source;
  std::string host;
  std::vector<model::Finding> findings;
};

// A member of the cluster: how logs and results name it.
struct Member {
  std::string id;                      // ladder member ID, or the hostname
  std::vector<std::string> addresses;  // data and bootstrap addresses
  std::map<std::string, std::string> device_gid;  // "mlx5_0" -> GID, when known
};

struct Evidence {
  std::vector<model::DiagnoseInput> inputs;
  std::optional<model::NcclLogSummary> nccl;  // every text log, parsed together
  std::vector<CounterSeries> counters;
  std::vector<PairEvidence> pairs;
  std::vector<CollEvidence> colls;
  std::vector<DoctorEvidence> doctors;
  std::vector<KvEvidence> kvs;
  std::vector<RasEvidence> ras;
  std::vector<InspectorEvidence> inspector;
  std::vector<Member> members;
  double line_gbps = 0;  // --line-rate: the port rate when no input says it
  std::string bundle;    // the ladder bundle's path, "" when none

  // The member an address (or host name) belongs to; "" when unknown.
  std::string MemberOf(const std::string& address_or_host) const;
  // The member's ID, else the text itself.
  std::string Name(const std::string& address_or_host) const;
};

}  // namespace fabcheck::diagnose
