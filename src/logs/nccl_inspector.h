// NCCL Inspector output (the profiler plugin of NCCL 2.28.3+,
// plugins/profiler/inspector): one JSON object per completed collective with
// the communicator ("header": id, rank, n_ranks, nnodes), where it ran
// ("metadata": hostname, pid, inspector_output_format_version) and its
// performance ("coll_perf": coll, coll_sn, coll_msg_size_bytes,
// coll_exec_time_us, coll_busbw_gbs). Objects one per line, or pretty-printed
// one after another. Format versions read: v4.x and v5.x (the fields above).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace fabcheck::logs {

struct InspectorRecord {
  std::string comm_id;
  int rank = -1, n_ranks = 0, nnodes = 0;
  std::string hostname;
  int pid = 0;
  std::string version;  // "v4.0"
  std::string coll;     // "AllReduce"
  uint64_t seq = 0, bytes = 0;
  double exec_us = 0, busbw_gbs = 0;
  int object = 0;       // 1-based position in the file
};

struct InspectorFile {
  std::vector<InspectorRecord> records;
  int skipped = 0;  // objects that were not collective records (P2P, verbose events, broken JSON)
};

// Whether a file's first bytes are Inspector output.
bool LooksLikeInspectorJson(std::string_view head);

InspectorFile ParseInspectorJson(std::string_view text);

}  // namespace fabcheck::logs
