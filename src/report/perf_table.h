// The perftest-style text of a PerfResult, so users compare line by line with
// ib_write_bw / ib_write_lat: the same columns in the same order (fabcheck
// adds columns only at the end of a row).
#pragma once

#include <string>

#include "fabcheck/model/perf.h"

namespace fabcheck::report {

struct PerfTableOptions {
  bool mibps = false;  // BW columns in MiB/s instead of Gb/s
};

std::string FormatPerfTable(const model::PerfResult& result, const PerfTableOptions& options = {});

}  // namespace fabcheck::report
