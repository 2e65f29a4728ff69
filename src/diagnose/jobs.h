// Keeping jobs apart: logs of several NCCL jobs given together are split by
// job (logs that share a communicator ID, commId, are one job), each job's
// logs are read on their own, and the NCCL rules run per job, so a cause is
// never drawn from one job's lines for another's symptom and a finding's
// severity does not depend on which other jobs' files were passed.
#pragma once

#include <string>
#include <vector>

#include "diagnose/evidence.h"

namespace fabcheck::diagnose {

struct JobLogs {
  std::string id;                  // "job 0x849599a5" (the first commId), or "job of FILE" without one
  std::vector<std::string> files;
  model::NcclLogSummary nccl;      // these files parsed on their own
};

// The evidence's NCCL logs by job. One job (or none) when every log shares a
// commId or none names one, or when a log cannot be read again (stdin, a log
// inside a bundle): then the evidence is not split and this returns {}.
std::vector<JobLogs> SplitLogsByJob(const Evidence& evidence);

}  // namespace fabcheck::diagnose
