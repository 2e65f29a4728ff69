// The L4 rung's results: collectives as nccl-tests reports them
// ("fabcheck.coll/v1"), what NCCL's own log says it used
// ("fabcheck.nccl-log/v1"), and GPU copy bandwidth ("fabcheck.gpu/v1").
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "fabcheck/model/finding.h"

namespace fabcheck::model {

inline constexpr char kCollSchema[] = "fabcheck.coll/v1";
inline constexpr char kNcclLogSchema[] = "fabcheck.nccl-log/v1";
inline constexpr char kGpuCopySchema[] = "fabcheck.gpu/v1";

// ---- What NCCL used (parsed from its INFO log) ----

// One transport between two ranks, with the channels that use it. Channel
// lines with the same (host, ranks, direction, transport, detail) are merged.
struct NcclConnection {
  std::string host;        // the host that printed the line
  int from_rank = -1;
  int to_rank = -1;
  std::string from_device;  // the bracket after the rank: nvmlDev (2.19+) or busId in hex (2.18)
  std::string to_device;
  std::string direction;   // "send", "receive" or "" (P2P/SHM lines have none)
  std::string transport;   // "P2P/CUMEM", "P2P/IPC", "P2P/direct pointer", "P2P/indirect", "SHM", "NET/IB", "NET/Socket", "NET/<plugin>"
  std::string detail;      // the rest: "/read", "/CE", "direct/direct", "/0/GDRDMA"
  int net_device = -1;     // NET: NCCL's net device index (NET/IB/<n>)
  int proxy_rank = -1;     // NET via PXN: the proxy rank (NET/IB/<n>(<proxy>))
  bool gdr = false;        // NET: "/GDRDMA" present
  std::vector<int> channels;
};

// A NIC NCCL opened (NET/IB line) or a socket interface (NET/Socket line).
struct NcclNetDevice {
  std::string host;
  std::string kind;  // "IB" (the NET/IB list) or "Socket"
  int index = -1;
  std::string name;        // "mlx5_0" or "eth0"
  int port = 0;            // IB port
  std::string link_layer;  // "IB" or "RoCE"; empty for sockets
  std::string address;     // sockets: "10.0.0.5<0>"
};

// "GPU Direct RDMA Enabled|Disabled for GPU <g> / HCA <h> (distance d <= or > limit)".
struct NcclGdrDecision {
  std::string host;
  std::string gpu;       // as printed: bus id hex (<= 2.27) or rank (2.28+)
  std::string hca;       // as printed (NCCL's net device id)
  std::string hca_name;  // mlx5_0 when the NET/IB list maps it
  bool enabled = false;
  int distance = -1;
  int limit = -1;
  std::string distance_name;  // "PHB" through the version's path-type table
  std::string limit_name;     // "PXB"
};

// "Pattern 4, crossNic 0, nChannels 16, bw 20.600000/20.600000, type NVL/PIX, sameChannels 1"
// (GRAPH subsystem): NCCL's own estimate, from the topology it detected, of
// what each channel of a ring (pattern 4) or tree (1-3) can carry.
struct NcclGraph {
  std::string host;
  int pattern = 0;
  int channels = 0;
  double bw_intra = 0;  // GB/s per channel
  double bw_inter = 0;
  std::string type_intra;  // "NVL", "PIX", "SYS"...
  std::string type_inter;
};

// One failure or notable event read from a log, with where it was printed.
// `kind` is one of: "wc-error" (a work completion with an error status),
// "socket" (a bootstrap / socket connect or receive failure), "peer-gone"
// (NCCL's "remote process exited or there was a network error"), "verbs" (a
// failed ibv_* call), "plugin-load" (a net plugin that failed to load),
// "plugin-loaded", "net-not-found", "ib-unavailable" (libibverbs missing),
// "timeout" (a collective watchdog timeout, PyTorch or NCCL), "watchdog-work"
// (PyTorch's last enqueued / completed work of a rank), "nccl-error" (NCCL
// error strings relayed by frameworks), "feature" (NVLS, CollNet, PXN seen),
// "warn" (any other NCCL WARN line).
struct NcclEvent {
  std::string kind;
  std::string file;
  int line = 0;              // 1-based line in `file`
  std::string host;          // "" when the line had no (recognisable) host prefix
  int pid = 0;
  int rank = -1;             // the NCCL rank when known (Init line of that process, or the launcher prefix)
  std::string text;          // the message as printed, after the prefix
  std::map<std::string, std::string> fields;  // kind-specific: status, peer, local_gid, call, error, op, ...
  int count = 1;             // identical events (same kind, host and fields) are merged
};

// The last line seen from one rank, for "who was last heard from" in a hang.
struct NcclRankSeen {
  int rank = -1;
  std::string host;
  int pid = 0;
  std::string file;
  int last_line = 0;
  int64_t last_completed = -1;  // PyTorch's "last completed NCCL work" when printed
  int64_t last_enqueued = -1;
  bool timed_out = false;       // this rank reported a watchdog timeout
};

struct NcclLogSummary {
  std::string schema = kNcclLogSchema;
  std::vector<std::string> files;
  std::vector<std::string> nccl_versions;   // "2.28.3+cuda13.0", one per distinct version
  std::vector<std::string> hosts;
  int ranks = 0;       // the largest nranks seen
  int nodes = 0;       // nNodes from the comm line (0 when not printed)
  std::map<std::string, std::string> bootstrap;  // host -> "eth0:10.0.0.5<0>"
  std::map<std::string, std::string> network;    // host -> "IB", "Socket", plugin name
  std::map<std::string, std::string> env;        // NCCL_* variable -> value, as NCCL echoed it
  std::vector<NcclNetDevice> net_devices;
  std::vector<NcclGdrDecision> gdr;
  std::vector<NcclGraph> graphs;
  std::vector<NcclConnection> connections;
  std::map<std::string, int> transport_channels;  // transport -> channel lines seen
  std::vector<std::string> warnings;              // NCCL WARN lines (message part), first ones
  int lines_read = 0;
  int nccl_lines = 0;      // lines with an NCCL INFO/WARN prefix
  bool init_complete = false;  // an "Init COMPLETE" line was seen
  std::vector<NcclEvent> events;               // failures and notable lines, merged, first ones kept
  int events_dropped = 0;                      // beyond the cap (counted, not kept)
  std::vector<NcclRankSeen> ranks_seen;        // by rank
  std::map<std::string, std::string> plugin;   // host -> the external net plugin that loaded ("" none)
  int lines_cut = 0;        // lines longer than the reader's limit (cut)
  int binary_lines = 0;     // lines that held NUL, control bytes or invalid UTF-8
  int unattributed_lines = 0;  // NCCL lines whose host prefix was cut or glued to another line
  std::vector<Finding> findings;
};

// ---- Collectives ----

struct CollHalf {
  double time_us = 0;     // average per iteration
  double algbw_gbps = 0;  // GB/s (1e9)
  double busbw_gbps = 0;
  std::optional<int64_t> wrong;  // #wrong; nullopt when --check was off ("N/A")
};

// One line of the nccl-tests table.
struct CollRow {
  uint64_t size_bytes = 0;  // printed size: max(send, recv) bytes per rank
  uint64_t count = 0;       // elements, as nccl-tests prints it
  std::string type;         // "float"
  std::string redop;        // "sum" or "none"
  int root = -1;            // -1 when the op has no root
  CollHalf out_of_place;
  CollHalf in_place;
};

struct CollOpResult {
  std::string op;  // "all_reduce"
  std::vector<CollRow> rows;
  double avg_busbw_gbps = 0;  // mean over rows x {out-of-place, in-place}
  int64_t wrong = 0;          // sum of #wrong (0 when not checked)
};

struct CollRankInfo {
  int rank = 0;
  std::string host;
  int cuda_device = 0;
  std::string pci_bus_id;
  std::string name;
};

// What the topology lets a collective reach, and where that comes from.
struct CollExpectation {
  double busbw_gbps = 0;  // 0 when unknown
  std::string basis;      // "NVLink (NV18, 18 links x 26.6 GB/s)", "PCIe Gen5 x16", "NIC 400 Gb/s"
};

struct CollReport {
  std::string schema = kCollSchema;
  std::string fabcheck_version;
  std::string start_time;
  std::string nccl_version;
  std::string nccl_library;
  std::string cuda_runtime_version;
  std::string mode;  // "single-process" or "process-per-gpu"
  int nranks = 0;
  std::vector<CollRankInfo> ranks;
  std::map<std::string, std::string> args;  // op list, sizes, dtype, redop, iters, warmup, check
  std::map<std::string, std::string> env;   // NCCL_* variables in effect
  std::vector<CollOpResult> results;
  double average_bus_bandwidth_gbps = 0;  // over every op's rows
  int64_t wrong = 0;
  CollExpectation expected;
  std::string nccl_log_file;
  std::optional<NcclLogSummary> nccl_log;
  std::vector<Finding> findings;
};

// ---- GPU copy bandwidth ----

struct GpuCopyMeasurement {
  std::string kind;  // "h2d", "d2h", "d2d", "p2p" (write from src GPU to dst GPU), "p2p-bidir"
  int gpu = 0;       // device the copy runs on (source for p2p)
  int peer_gpu = -1;  // p2p only
  int numa_node = -1;  // host memory's NUMA node for h2d/d2h (-1 when unplaced)
  bool numa_local = true;
  uint64_t bytes = 0;
  int iterations = 0;
  double gbps = 0;          // GB/s (1e9), median of iterations
  double expected_gbps = 0;  // the link's limit; 0 when unknown
  std::string link;          // "PCIe Gen5 x16", "NVLink"
};

struct GpuInfo {
  int index = 0;
  std::string name;
  std::string pci_bus_id;
  int numa_node = -1;
  double pcie_gts = 0;
  int pcie_width = 0;
  double pcie_max_gts = 0;
  int pcie_max_width = 0;
};

struct GpuCopyReport {
  std::string schema = kGpuCopySchema;
  std::string fabcheck_version;
  std::string cuda_runtime_version;
  int cuda_driver_version = 0;
  std::vector<GpuInfo> gpus;
  std::vector<GpuCopyMeasurement> measurements;
  std::vector<Finding> findings;
};

void to_json(nlohmann::json& j, const NcclConnection& v);
void to_json(nlohmann::json& j, const NcclNetDevice& v);
void to_json(nlohmann::json& j, const NcclGdrDecision& v);
void to_json(nlohmann::json& j, const NcclGraph& v);
void to_json(nlohmann::json& j, const NcclEvent& v);
void to_json(nlohmann::json& j, const NcclRankSeen& v);
void to_json(nlohmann::json& j, const NcclLogSummary& v);
void to_json(nlohmann::json& j, const CollHalf& v);
void to_json(nlohmann::json& j, const CollRow& v);
void to_json(nlohmann::json& j, const CollOpResult& v);
void to_json(nlohmann::json& j, const CollRankInfo& v);
void to_json(nlohmann::json& j, const CollExpectation& v);
void to_json(nlohmann::json& j, const CollReport& v);
void to_json(nlohmann::json& j, const GpuCopyMeasurement& v);
void to_json(nlohmann::json& j, const GpuInfo& v);
void to_json(nlohmann::json& j, const GpuCopyReport& v);

}  // namespace fabcheck::model
