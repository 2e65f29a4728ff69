// Internal to logs/: the parser's state, shared by nccl_parser.cc (transport
// lines) and nccl_events.cc (failures and framework lines).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "fabcheck/model/coll.h"

namespace fabcheck::logs {

// Caps that keep memory bounded on any input.
inline constexpr size_t kMaxConnections = 200000;
inline constexpr size_t kMaxEvents = 5000;
inline constexpr size_t kMaxWarnings = 20;
inline constexpr size_t kMaxEvidence = 3;
inline constexpr size_t kMaxHosts = 1 << 20;
inline constexpr uint64_t kMaxLogFileBytes = 64ull << 30;   // a regular file (streamed: memory stays flat)
inline constexpr uint64_t kMaxLogStreamBytes = 256ull << 20;  // a pipe, FIFO, device or stdin

// Where a line came from, after the cleaner and the NCCL prefix.
struct LineContext {
  std::string_view file;
  int line = 0;
  std::string_view host;  // "" when unknown
  int pid = 0;
  std::string_view process;  // "host:pid" when the host is known (computed once per line)
  int launcher_rank = -1;
  int repeated = 1;
  bool warn = false;
};

struct HostInfo {
  size_t order = 0;   // first seen
  int lines = 0;      // clean lines with this host
};

struct ParserState {
  model::NcclLogSummary summary;
  std::unordered_map<std::string, HostInfo> hosts;
  std::unordered_map<std::string, int> process_version;            // "host:pid" -> version code
  std::vector<std::string> gdr_process;                             // per gdr entry: its "host:pid"
  std::map<std::string, std::map<int, std::string>> rank_bus;       // host -> rank -> busId
  std::unordered_map<std::string, int> process_rank;                // "host:pid" -> rank
  std::unordered_map<std::string, size_t> connection_index;         // key -> index in summary.connections
  std::unordered_map<std::string, size_t> event_index;              // merge key -> index in summary.events
  std::map<int, size_t> rank_seen_index;                            // rank -> index in summary.ranks_seen
  std::unordered_map<std::string, std::string> net_device_name;   // "host|IB|index" -> name (also "listed" marks)
  std::vector<std::string> hca_gdr_off;
  bool ib_no_device = false;
  std::vector<std::string> evidence_socket;
  std::vector<std::string> evidence_ib_nogdr;
  int64_t connections_dropped = 0;
  std::string scratch;
  // A framework's "Last error:" line: NCCL's WARN text follows on the next line.
  std::string last_error_file;
  int last_error_line = -1;

  // Adds (or merges) an event; `fields` identify it for merging. Returns the
  // event when it is new (to add fields outside the merge key), else nullptr.
  model::NcclEvent* AddEvent(const LineContext& ctx, std::string kind, std::string_view text,
                std::map<std::string, std::string> fields);
  // The rank a process printed in its Init line, else the launcher's, else -1.
  int RankOf(const LineContext& ctx) const;
  // "2.28.3+cuda13.0" (trailing '.' or ',' dropped); ignored when not a version.
  void AddVersion(const LineContext& ctx, std::string_view version);
  // The last line of a rank (for hangs).
  model::NcclRankSeen& Seen(int rank);
};

// The failure and framework rules of the parser (nccl_events.cc). Returns
// true when the line was one of them.
bool ParseEventLine(ParserState& state, const LineContext& ctx, std::string_view message);
// NCCL's WARN text relayed by a framework ("Last error:"), without NCCL's prefix.
void RelayWarn(ParserState& state, const LineContext& ctx, std::string_view what);
// Lines outside NCCL's prefix: PyTorch watchdog / errors, bare "NCCL version".
void ParseFrameworkLine(ParserState& state, const LineContext& ctx, std::string_view text);

std::string ProcessKey(std::string_view host, int pid);

}  // namespace fabcheck::logs
