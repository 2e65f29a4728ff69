// NCCL's RAS report as `ncclras` prints it (text format, NCCL 2.24 to 2.30;
// src/ras/client_support.cc): the job summary, then under "Errors" the
// processes NCCL could not reach (INCOMPLETE: missing data, DEAD: unreachable
// via the RAS network) with their node, pid and GPUs, the ranks each
// incomplete communicator misses, and communicators in error. Schema of the
// values below: fabcheck.nccl-ras/v1 (the text it is read from has no version
// of its own; the "NCCL version" line it starts with is kept).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace fabcheck::logs {

struct RasProcess {
  std::string state;  // "missing" (INCOMPLETE) or "dead" (DEAD)
  int pid = 0;
  std::string node;   // as RAS printed it (an address or a host name)
  std::string gpus;   // "3" or "0,1"
  int line = 0;
};

struct RasRank {
  std::string comm;  // "#0-0 (3f2a...)"
  int rank = -1;
  std::string gpu;   // "" when RAS found no process information
  int pid = 0;
  std::string node;
  int line = 0;
};

struct RasReport {
  std::string schema = "fabcheck.nccl-ras/v1";
  std::string nccl_version;  // "2.30.7+cuda13.0"
  int nodes = 0, processes = 0, gpus = 0;  // job summary totals (0 when not printed)
  std::vector<RasProcess> unreachable;     // INCOMPLETE and DEAD processes
  std::vector<RasRank> missing_ranks;      // per incomplete communicator
  std::vector<std::string> comm_errors;    // "#0-0 (hash) ERROR: Asynchronous error on 2 ranks"
  int timeouts = 0;                        // "Encountered N communication timeouts"
};

// Whether a text's first bytes are a RAS report.
bool LooksLikeRasText(std::string_view head);

RasReport ParseRasText(std::string_view text);

}  // namespace fabcheck::logs
